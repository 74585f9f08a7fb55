import TripStoreJSON
import TripStoreSystem
/// Reads an import file: a JSON array of envelopes, or JSON Lines with one
/// envelope a line (a UTF-8 byte-order mark is skipped).
public enum EnvelopeInput {
    /// Decodes every envelope of `bytes`. With `maxErrors > 1`, goes on after
    /// an error and throws `EnvelopeErrors` with up to that many.
    ///
    /// - Throws: `EnvelopeErrors` (each with record, path, property and
    ///   expectation); `JSONSyntaxError` for bytes that are not JSON.
    public static func decode(_ bytes: [UInt8], schema: Schema, maxErrors: Int = 1,
                              progress: ((Int, Int) -> Void)? = nil) throws -> [DecodedObject] {
        var out: [DecodedObject] = []
        var errors: [EnvelopeError] = []
        let records = RecordDecoder(schema: schema, wantPaths: true)
        func record(_ e: EnvelopeError) throws {
            errors.append(e)
            if errors.count >= maxErrors { throw EnvelopeErrors(errors) }
        }
        try bytes.withUnsafeBufferPointer { all in
            var start = 0
            if all.count >= 3 && all[0] == 0xEF && all[1] == 0xBB && all[2] == 0xBF { start = 3 }
            let buf = UnsafeBufferPointer(rebasing: all[start...])
            var reader = JSONReader(buffer: buf)
            reader.skipWhitespace()
            guard reader.index < buf.count else { return }
            if buf[reader.index] == UInt8(ascii: "["), maxErrors == 1,
               let elements = ArrayElements.split(buf, openingAt: reader.index), elements.count >= 512 {
                // Many records: decode them on every core. Any problem, and the
                // sequential path below reads the file again to report it exactly.
                let chunks = DecodeChunks.decode(elements[...], in: buf, schema: schema, wantPaths: true) { .record($0) }
                if chunks.allSatisfy({ $0.error == nil }) {
                    out.reserveCapacity(chunks.reduce(0) { $0 + $1.objects.count })
                    for c in chunks { out.append(contentsOf: c.objects) }
                    return
                }
            }
            if buf[reader.index] == UInt8(ascii: "[") {
                out.reserveCapacity(buf.count / 180)
                do {
                    reader.index += 1
                    reader.skipWhitespace()
                    var position = 0
                    if reader.index < buf.count && buf[reader.index] == UInt8(ascii: "]") {
                        reader.index += 1
                    } else {
                        while true {
                            position += 1
                            do {
                                try records.decode(&reader, at: .record(position), into: &out)
                            } catch let e as EnvelopeError {
                                try record(e)
                            }
                            progress?(reader.index, buf.count)
                            reader.skipWhitespace()
                            guard reader.index < buf.count else { throw reader.error("expected ',' or ']' but the input ended") }
                            let c = buf[reader.index]
                            reader.index += 1
                            if c == UInt8(ascii: ",") { continue }
                            if c == UInt8(ascii: "]") { break }
                            reader.index -= 1
                            throw reader.error("expected ',' or ']' after array element")
                        }
                    }
                    reader.skipWhitespace()
                    if reader.index < buf.count {
                        throw reader.error("unexpected \(reader.describeByte(at: reader.index)) after the array")
                    }
                } catch let e as JSONSyntaxError {
                    try record(EnvelopeError(.syntax, "invalid JSON: \(e)"))
                }
            } else {
                var singleDocument: JSONValue?
                try JSONLines.forEachLine(in: buf) { number, range, _ in
                    if singleDocument != nil { return }
                    var r = JSONReader(buffer: UnsafeBufferPointer(rebasing: buf[range]))
                    do {
                        try records.decodeWhole(&r, at: .line(number), into: &out)
                    } catch let e as EnvelopeError {
                        try record(e)
                    } catch let e as JSONSyntaxError {
                        // One pretty-printed envelope is not JSON Lines, but it is a fine input.
                        if number == 1, let whole = try? JSONReader.parse(buffer: buf) {
                            singleDocument = whole
                            return
                        }
                        // The position within the line: its column (the line is the record's).
                        try record(EnvelopeError(.syntax, location: .line(number), "invalid JSON at column \(e.column): \(e.message)"))
                    }
                    progress?(range.upperBound, buf.count)
                }
                if let single = singleDocument {
                    out.removeAll()
                    do {
                        try EnvelopeDecoder(schema: schema).decode(single, at: .record(1), into: &out)
                    } catch let e as EnvelopeError {
                        try record(e)
                    }
                }
            }
        }
        if !errors.isEmpty { throw EnvelopeErrors(errors) }
        return out
    }
}

/// Decodes one record: the fast byte-level path, or the tree path when that gives up.
package struct RecordDecoder {
    var fast: EnvelopeFastDecoder
    var slow: EnvelopeDecoder

    /// `snapshotLines`: the store's own lines, whose references may leave out
    /// `type` (see `EnvelopeDecoder.bareReferences`).
    package init(schema: Schema, wantPaths: Bool, snapshotLines: Bool = false) {
        fast = EnvelopeFastDecoder(schema: schema, wantPaths: wantPaths)
        slow = EnvelopeDecoder(schema: schema)
        fast.bareReferences = snapshotLines
        slow.bareReferences = snapshotLines
    }

    /// Decodes the value at the reader's position; throws `JSONSyntaxError` or `EnvelopeError`.
    func decode(_ r: inout JSONReader, at location: RecordLocation, into out: inout [DecodedObject]) throws {
        let start = r.index
        let mark = out.count
        do {
            try fast.decode(&r, at: location, into: &out)
            return
        } catch {
            out.removeSubrange(mark...)
            r.index = start
        }
        try slow.decode(try r.parseValue(), at: location, into: &out)
    }

    /// Decodes a whole buffer (one line) as one value with nothing after it.
    package func decodeWhole(_ r: inout JSONReader, at location: RecordLocation, into out: inout [DecodedObject]) throws {
        let mark = out.count
        do {
            try fast.decode(&r, at: location, into: &out)
            r.skipWhitespace()
            if r.index == r.buffer.count { return }
        } catch {}
        out.removeSubrange(mark...)
        r.index = 0
        try slow.decode(try r.parseDocument(), at: location, into: &out)
    }
}

extension JSONReader {
    /// Parses a whole buffer as one value.
    package static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var r = JSONReader(buffer: buffer)
        return try r.parseDocument()
    }
}
