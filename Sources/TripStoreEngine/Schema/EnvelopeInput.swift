/// Reads an import file: a JSON array of envelopes, or JSON Lines with one
/// envelope a line (a UTF-8 byte-order mark is skipped).
public enum EnvelopeInput {
    /// Decodes every envelope of `bytes`. With `maxErrors > 1`, goes on after
    /// an error and throws `StoreError.invalidMany` with up to that many.
    public static func decode(_ bytes: [UInt8], schema: Schema, maxErrors: Int = 1,
                              progress: ((Int, Int) -> Void)? = nil) throws -> [DecodedObject] {
        var out: [DecodedObject] = []
        var errors: [EnvelopeError] = []
        let decoder = EnvelopeDecoder(schema: schema)
        func record(_ e: EnvelopeError) throws {
            errors.append(e)
            if errors.count >= maxErrors { throw StoreError.invalidMany(errors) }
        }
        try bytes.withUnsafeBufferPointer { all in
            var start = 0
            if all.count >= 3 && all[0] == 0xEF && all[1] == 0xBB && all[2] == 0xBF { start = 3 }
            let buf = UnsafeBufferPointer(rebasing: all[start...])
            var reader = JSONReader(buffer: buf)
            reader.skipWhitespace()
            guard reader.index < buf.count else { return }
            if buf[reader.index] == UInt8(ascii: "[") {
                do {
                    try reader.forEachArrayElement { position, offset, value in
                        do {
                            try decoder.decode(value, at: .record(position + 1), into: &out)
                        } catch let e as EnvelopeError {
                            try record(e)
                        }
                        progress?(offset, buf.count)
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
                    let value: JSONValue
                    do {
                        value = try r.parseDocument()
                    } catch {
                        // One pretty-printed envelope is not JSON Lines, but it is a fine input.
                        if number == 1, let whole = try? JSONReader.parse(buffer: buf) {
                            singleDocument = whole
                            return
                        }
                        try record(EnvelopeError(.syntax, location: .line(number), "invalid JSON: \(error)"))
                        return
                    }
                    do {
                        try decoder.decode(value, at: .line(number), into: &out)
                    } catch let e as EnvelopeError {
                        try record(e)
                    }
                    progress?(range.upperBound, buf.count)
                }
                if let single = singleDocument {
                    out.removeAll()
                    do {
                        try decoder.decode(single, at: .record(1), into: &out)
                    } catch let e as EnvelopeError {
                        try record(e)
                    }
                }
            }
        }
        if !errors.isEmpty { throw StoreError.invalidMany(errors) }
        return out
    }
}

extension JSONReader {
    /// Parses a whole buffer as one value.
    public static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var r = JSONReader(buffer: buffer)
        return try r.parseDocument()
    }
}
