import TripStoreFormat
import TripStoreJSON

/// Finds where each change of a history line is, without building its
/// values: what the history index records so that a reader parses only
/// the changes it returns. The line is read as JSON (any key order); what
/// a change holds is left to the history reader, which the index's
/// answers always go through.
enum HistoryLineScanner {
    /// One change, or one id of a run of inserts (`"ids"`), where it starts in the line.
    enum Found {
        /// A change object at `start`; `id` is nil for a migration.
        case change(start: Int, kind: String, type: String, id: String?)
        /// An insert of a run: the run's object starts at `groupStart`, the id's string at `idStart`.
        case groupedInsert(groupStart: Int, idStart: Int, type: String, id: String)
    }

    /// Calls `found` for each change and returns the range of the
    /// `"changes"` array (from its `[` to just after its `]`); nil when the
    /// line is not one JSON object with such an array.
    static func scan(_ line: UnsafeBufferPointer<UInt8>, found: (Found) -> Void) -> Range<Int>? {
        var r = JSONReader(buffer: line)
        do {
            var changes: Range<Int>?
            try members(&r) { (key, r) throws(JSONSyntaxError) in
                guard key == "changes" else { return try r.skipValue() }
                guard changes == nil, r.index < line.count, line[r.index] == UInt8(ascii: "[") else { throw r.error("no changes array") }
                let open = r.index
                r.index += 1
                r.skipWhitespace()
                if r.index < line.count, line[r.index] == UInt8(ascii: "]") {
                    r.index += 1
                } else {
                    while true {
                        r.skipWhitespace()
                        try change(&r, found: found)
                        r.skipWhitespace()
                        guard r.index < line.count else { throw r.error("the line ended") }
                        let b = line[r.index]
                        r.index += 1
                        if b == UInt8(ascii: ",") { continue }
                        guard b == UInt8(ascii: "]") else { throw r.error("expected ',' or ']'") }
                        break
                    }
                }
                changes = open..<r.index
            }
            r.skipWhitespace()
            guard r.index == line.count else { return nil }
            return changes
        } catch {
            return nil
        }
    }

    /// Walks an object's members at `r`, leaving `r` after its `}`; `member`
    /// must consume the value.
    private static func members(_ r: inout JSONReader, _ member: (String, inout JSONReader) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        r.skipWhitespace()
        guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "{") else { throw r.error("expected an object") }
        try r.enter()
        r.index += 1
        r.skipWhitespace()
        if r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "}") {
            r.index += 1
            r.depth -= 1
            return
        }
        while true {
            r.skipWhitespace()
            guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "\"") else { throw r.error("expected a key") }
            let key = try r.parseString()
            r.skipWhitespace()
            guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: ":") else { throw r.error("expected ':'") }
            r.index += 1
            r.skipWhitespace()
            try member(key, &r)
            r.skipWhitespace()
            guard r.index < r.buffer.count else { throw r.error("the line ended") }
            let b = r.buffer[r.index]
            r.index += 1
            if b == UInt8(ascii: ",") { continue }
            guard b == UInt8(ascii: "}") else { throw r.error("expected ',' or '}'") }
            r.depth -= 1
            return
        }
    }

    private static func string(_ r: inout JSONReader) throws(JSONSyntaxError) -> String? {
        guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "\"") else {
            try r.skipValue()
            return nil
        }
        return try r.parseString()
    }

    /// One element of the changes array.
    private static func change(_ r: inout JSONReader, found: (Found) -> Void) throws(JSONSyntaxError) {
        let start = r.index
        var kind: String?, type: String?, id: String?
        // The ids of a run whose type came after them (the store writes the type first).
        var early: [(Int, String)] = []
        var grouped = false
        try members(&r) { (key, r) throws(JSONSyntaxError) in
            switch key {
            case "kind": kind = try string(&r)
            case "type": type = try string(&r)
            case "id": id = try string(&r)
            case "ids":
                guard r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: "[") else { return try r.skipValue() }
                grouped = true
                r.index += 1
                while true {
                    r.skipWhitespace()
                    guard r.index < r.buffer.count else { throw r.error("the line ended") }
                    if r.buffer[r.index] == UInt8(ascii: "]") { r.index += 1; break }
                    let at = r.index
                    guard let s = try string(&r) else { throw r.error("an id that is not a string") }
                    let stored = Identifier.stored(s) ?? s
                    if let type, kind == "insert" {
                        found(.groupedInsert(groupStart: start, idStart: at, type: type, id: stored))
                    } else {
                        early.append((at, stored))
                    }
                    r.skipWhitespace()
                    if r.index < r.buffer.count, r.buffer[r.index] == UInt8(ascii: ",") { r.index += 1 }
                }
            default: try r.skipValue()
            }
        }
        guard let kind, let type else { throw r.error("a change without kind or type") }
        if grouped {
            for (at, s) in early { found(.groupedInsert(groupStart: start, idStart: at, type: type, id: s)) }
        } else {
            found(.change(start: start, kind: kind, type: type, id: id.map { Identifier.stored($0) ?? $0 }))
        }
    }
}
