import TripStoreFormat
import TripStoreJSON

/// One line of the change feed (`history --format feed`), read for
/// `FeedApplier.apply(_:)`. Read from bytes, its insert envelopes stay
/// bytes until the replay needs them: the line of a bulk import into an
/// empty store is then decoded straight into records, as an import is.
public struct FeedLine {
    /// The line's number in its feed (from 1), for errors.
    public let number: Int
    /// The line's transaction; nil when the line is JSON of another form.
    let transaction: HistoryTransaction?
    /// How many elements the line's `changes` array has (a stored run of
    /// inserts would read as more changes than elements).
    let elements: Int
    /// Why the line is no transaction, when the reason is a change's id.
    let idProblem: String?
    private let source: Source

    private enum Source {
        /// The bytes holding the line (perhaps a whole feed), and by change the range of its envelope.
        case bytes([UInt8], envelopes: [Range<Int>?])
        /// The line as JSON.
        case value(JSONValue)
    }

    /// Reads the line at `range` of `bytes` (all of them when nil); the line
    /// shares `bytes`' storage.
    /// - Throws: `FeedError` naming `number` when the line is not JSON.
    public init(_ bytes: [UInt8], range: Range<Int>? = nil, number: Int) throws(FeedError) {
        do {
            let read = try bytes.withUnsafeBufferPointer { (buf) throws(JSONSyntaxError) in
                try FeedLineReader.read(buf, range ?? 0..<buf.count)
            }
            transaction = read.transaction
            elements = read.elements
            idProblem = read.idProblem
            source = .bytes(bytes, envelopes: read.envelopes)
        } catch {
            throw FeedError(line: number, message: "invalid JSON: \(error)")
        }
        self.number = number
    }

    /// A line already read as JSON.
    public init(_ value: JSONValue, number: Int) {
        self.number = number
        transaction = HistoryCoding.read(value)
        if case .array(let items)? = value["changes"] { elements = items.count } else { elements = 0 }
        idProblem = transaction == nil ? HistoryCoding.idProblem(value) : nil
        source = .value(value)
    }

    /// The envelope of change `index` of the line, nil where it has none.
    /// - Throws: `FeedError` when its bytes are not JSON.
    func envelope(at index: Int) throws(FeedError) -> JSONValue? {
        switch source {
        case .value(let value):
            guard case .array(let items)? = value["changes"], items.indices.contains(index) else { return nil }
            return items[index]["envelope"]
        case .bytes(let bytes, let envelopes):
            guard envelopes.indices.contains(index), let range = envelopes[index] else { return nil }
            do {
                return try bytes.withUnsafeBufferPointer { (buf) throws(JSONSyntaxError) in
                    var r = JSONReader(buffer: UnsafeBufferPointer(rebasing: buf[range]))
                    return try r.parseDocument()
                }
            } catch {
                throw FeedError(line: number, message: "invalid JSON: \(error)")
            }
        }
    }

    /// `body` with the bytes of the line and each change's envelope range
    /// in them; nil for a line made from a value or a change without an envelope.
    func withEnvelopeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) -> R) -> R? {
        guard case .bytes(let bytes, let envelopes) = source else { return nil }
        let ranges = envelopes.compactMap { $0 }
        guard ranges.count == envelopes.count else { return nil }
        return bytes.withUnsafeBufferPointer { body($0, ranges) }
    }
}
