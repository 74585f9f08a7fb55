import TripStoreJSON

/// Reads a line of the change feed without its insert envelopes. The line
/// of a bulk import holds a million envelopes: as JSON trees they would
/// take many times the line's size, while a replay needs each only once,
/// or (a bulk import into an empty store) only its bytes.
package enum FeedLineReader {
    /// What a feed line holds besides its envelopes.
    package struct Line {
        /// The transaction as `HistoryCoding.read` reads the whole line; nil where it does not.
        package var transaction: HistoryTransaction?
        /// How many elements the line's `changes` array has.
        package var elements = 0
        /// By element, the byte range of its (first) `envelope` in the buffer; nil where it has none.
        package var envelopes: [Range<Int>?] = []
        /// Why the line is no transaction, when the reason is a change's id.
        package var idProblem: String?
    }

    /// Reads the line at `range` of `buffer`, with the errors of
    /// `JSONReader.parse`, one element of its `changes` at a time; each
    /// element's `envelope` is only checked to be JSON and its place noted.
    package static func read(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(JSONSyntaxError) -> Line {
        let line = UnsafeBufferPointer(rebasing: buffer[range])
        var r = JSONReader(buffer: line)
        r.skipWhitespace()
        var out = Line()
        guard r.index < line.count, line[r.index] == UInt8(ascii: "{") else {
            _ = try r.parseDocument()
            return out
        }
        var header: [JSONMember] = []
        var changes: [Change]?
        var readable = true
        try forEachMember(&r) { (key, r) throws(JSONSyntaxError) in
            r.skipWhitespace()
            switch key {
            case "changes" where changes == nil && readable:
                guard r.index < line.count, line[r.index] == UInt8(ascii: "[") else {
                    // Not an array: the line is no transaction (its first `changes` decides).
                    readable = false
                    try r.skipValue()
                    return
                }
                var read: [Change] = []
                var types: [String] = []
                try forEachElement(&r) { (r) throws(JSONSyntaxError) in
                    out.elements += 1
                    r.skipWhitespace()
                    let start = r.index
                    if readable, let insert = try insert(&r, at: range.lowerBound, types: &types) {
                        if read.isEmpty {
                            // Room for as many more as the line could hold (only touched as they come).
                            read.reserveCapacity(line.count / max(64, r.index - start))
                        }
                        read.append(insert.change)
                        out.envelopes.append(insert.envelope)
                        return
                    }
                    r.index = start
                    var envelope: Range<Int>?
                    let item: JSONValue
                    if r.index < line.count, line[r.index] == UInt8(ascii: "{") {
                        var members: [JSONMember] = []
                        try forEachMember(&r) { (key, r) throws(JSONSyntaxError) in
                            guard key == "envelope" else {
                                members.append(JSONMember(key, try r.parseValue()))
                                return
                            }
                            r.skipWhitespace()
                            let start = r.index
                            try r.skipValue()
                            if envelope == nil { envelope = (range.lowerBound + start)..<(range.lowerBound + r.index) }
                        }
                        item = .object(members)
                    } else {
                        item = try r.parseValue()
                    }
                    out.envelopes.append(envelope)
                    if readable && !HistoryCoding.readChanges(item, into: &read) {
                        readable = false
                        out.idProblem = HistoryCoding.idProblem(change: item, number: out.elements)
                    }
                }
                changes = read
            case "token", "timestamp", "author":
                header.append(JSONMember(key, try r.parseValue()))
            default:
                try r.skipValue()
            }
        }
        r.skipWhitespace()
        if r.index < line.count { throw r.error("unexpected \(r.describeByte(at: r.index)) after the JSON value") }
        if readable, let changes {
            let value = JSONValue.object(header + [JSONMember("changes", .array([]))])
            out.transaction = HistoryCoding.read(value).map {
                HistoryTransaction(token: $0.token, timestamp: $0.timestamp, author: $0.author, changes: changes)
            }
        }
        return out
    }

    /// The change the element at the reader's position reads as when it is
    /// an insert of the form the feed writes (`kind`, `type` and `id`
    /// strings, each once, and an `envelope`), with its envelope's range
    /// (offset by `base`): no JSON tree, and each type name one string. Nil
    /// otherwise, the reader then anywhere in the element.
    private static func insert(_ r: inout JSONReader, at base: Int, types: inout [String])
        throws(JSONSyntaxError) -> (change: Change, envelope: Range<Int>?)? {
        guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "{") else { return nil }
        let depth = r.depth
        defer { r.depth = depth }
        var kind: String?, type: String?, id: String?, envelope: Range<Int>?
        var plain = true
        try forEachMember(&r) { (key, r) throws(JSONSyntaxError) in
            r.skipWhitespace()
            if key == "envelope" {
                let start = r.index
                try r.skipValue()
                if envelope == nil { envelope = (base + start)..<(base + r.index) }
                return
            }
            guard plain, r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "\"") else {
                plain = false
                try r.skipValue()
                return
            }
            switch key {
            case "kind" where kind == nil: kind = try r.parseString()
            case "type" where type == nil: type = try r.parseString()
            case "id" where id == nil: id = try r.parseString()
            default:
                plain = false
                try r.skipValue()
            }
        }
        guard plain, kind == "insert", var type, !type.isEmpty, let raw = id, let id = Identifier.stored(raw) else { return nil }
        if let known = types.first(where: { $0 == type }) { type = known } else if types.count < 64 { types.append(type) }
        return (Change(kind: .insert, type: type, id: id), envelope)
    }

    /// Reads the object at the reader's position (white space skipped),
    /// calling `member` with each name and the reader before its value,
    /// which `member` must read; errors as `JSONReader.parseValue` words them.
    private static func forEachMember(_ r: inout JSONReader,
                                      _ member: (String, inout JSONReader) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try forEachItem(&r, close: UInt8(ascii: "}")) { (r) throws(JSONSyntaxError) in
            r.skipWhitespace()
            guard r.index < r.buffer.count else { throw r.error("expected a member name but the input ended") }
            guard r.buffer[r.index] == UInt8(ascii: "\"") else {
                throw r.error("expected a member name in double quotes but found \(r.describeByte(at: r.index))")
            }
            let key = try r.parseString()
            r.skipWhitespace()
            guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: ":") else {
                throw r.error("expected ':' after object member name")
            }
            r.index += 1
            try member(key, &r)
        }
    }

    /// Reads the array at the reader's position, calling `element` with the
    /// reader before each element, which `element` must read.
    private static func forEachElement(_ r: inout JSONReader,
                                       _ element: (inout JSONReader) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try forEachItem(&r, close: UInt8(ascii: "]"), element)
    }

    /// The walk both share: an object's members or an array's elements,
    /// separated by commas up to `close`, their nesting counted as `parse` counts it.
    private static func forEachItem(_ r: inout JSONReader, close: UInt8,
                                    _ item: (inout JSONReader) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        let isObject = close == UInt8(ascii: "}")
        try r.enter()
        r.index += 1
        r.skipWhitespace()
        if r.index < r.buffer.count, r.buffer[r.index] == close {
            r.index += 1
            r.depth -= 1
            return
        }
        while true {
            try item(&r)
            r.skipWhitespace()
            guard r.index < r.buffer.count else { throw r.error(isObject ? "expected ',' or '}' but the input ended" : "expected ',' or ']' but the input ended") }
            let b = r.buffer[r.index]
            r.index += 1
            if b == UInt8(ascii: ",") { continue }
            if b == close { break }
            r.index -= 1
            throw r.error(isObject ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element")
        }
        r.depth -= 1
    }
}
