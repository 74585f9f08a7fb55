/// Ids copied out of a buffer as they are read, back to back: what a decoder
/// keeps of the references it meets, so that the buffer (a piece of a file,
/// or an import's whole input) can go before they are resolved.
struct CopiedIDs {
    private var bytes: [UInt8] = []
    private var starts: [Int] = []
    private var lengths: [Int32] = []

    var count: Int { starts.count }
    var isEmpty: Bool { starts.isEmpty }

    /// Copies an id; returns its index.
    @discardableResult
    mutating func append(_ id: UnsafeBufferPointer<UInt8>) -> Int {
        starts.append(bytes.count)
        lengths.append(Int32(id.count))
        bytes.append(contentsOf: id)
        return starts.count - 1
    }

    /// Drops the ids from index `first` on (a line given up half-read).
    mutating func removeAll(from first: Int) {
        guard first < starts.count else { return }
        bytes.removeSubrange(starts[first]...)
        starts.removeSubrange(first...)
        lengths.removeSubrange(first...)
    }

    /// Each id's bytes in order, with its index, until `body` returns false;
    /// the index where it stopped, or nil when it saw them all.
    func firstFailing(_ body: (Int, UnsafeRawBufferPointer) throws -> Bool) rethrows -> Int? {
        try bytes.withUnsafeBytes { all in
            for i in starts.indices where try !body(i, UnsafeRawBufferPointer(rebasing: all[starts[i]..<(starts[i] + Int(lengths[i]))])) {
                return i
            }
            return nil
        }
    }

    /// An id as text (for a message).
    func string(_ i: Int) -> String {
        String(decoding: bytes[starts[i]..<(starts[i] + Int(lengths[i]))], as: UTF8.self)
    }
}
