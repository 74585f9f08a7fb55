import TripStoreJSON
import TripStoreSystem
/// Reads a history line straight from bytes when it has the form the store
/// writes (inserts are most of a big transaction and need no tree); nil means
/// "read it with the tree reader", which also reports what is wrong.
package enum HistoryFastReader {
    package static func read(_ buffer: UnsafeBufferPointer<UInt8>) -> HistoryTransaction? {
        var line = LineCursor(buffer)
        func expect(_ literal: [UInt8]) -> Bool { line.expect(literal) }
        func string() -> String? { line.string() }
        guard let (token, time, author) = line.header() else { return nil }
        var changes: [Change] = []
        if expect(closeArray) {
        } else {
            while true {
                if expect(insertKind) {
                    guard let type = string(), !type.isEmpty else { return nil }
                    if expect(idsKey) {
                        // A run of inserts of one type, as a format-2 snapshot stores it.
                        let first = changes.count
                        repeat {
                            guard let raw = string(), let id = Identifier.stored(raw) else { return nil }
                            changes.append(Change(kind: .insert, type: type, id: id))
                        } while expect(comma)
                        guard changes.count - first >= 2, expect(closeArray), expect(closeObject) else { return nil }
                    } else {
                        guard expect(idKey), let raw = string(), let id = Identifier.stored(raw), expect(closeObject) else { return nil }
                        changes.append(Change(kind: .insert, type: type, id: id))
                    }
                } else {
                    guard let v = try? line.reader.parseValue(), HistoryCoding.readChanges(v, into: &changes) else { return nil }
                }
                if expect(comma) { continue }
                guard expect(closeArray) else { return nil }
                break
            }
        }
        guard expect(closeObject), line.reader.index == buffer.count else { return nil }
        return HistoryTransaction(token: token, timestamp: time, author: author, changes: changes)
    }
}

extension HistoryFastReader {
    /// Reads a journal line whose changes are all updates, in the form the
    /// store writes it (the most common line: one object's attributes set),
    /// straight from its bytes; its checksum was checked before. Nil means
    /// "read it with the tree reader", which reads every line and says what
    /// is wrong with one.
    package static func readJournalUpdates(_ buffer: UnsafeBufferPointer<UInt8>) -> HistoryTransaction? {
        var line = LineCursor(buffer)
        func expect(_ literal: [UInt8]) -> Bool { line.expect(literal) }
        func string() -> String? { line.string() }
        guard let (token, time, author) = line.header() else { return nil }
        var changes: [Change] = []
        repeat {
            guard expect(updateKind), let type = string(), !type.isEmpty, expect(idKey), let raw = string(),
                  let id = Identifier.stored(raw), expect(valuesKey) else { return nil }
            var change = Change(kind: .update, type: type, id: id)
            repeat {
                // A value here is inside five containers of the line: the
                // tree reader's nesting limit counts them.
                line.reader.depth = 5
                guard let name = string(), expect(oldKey), let old = try? line.reader.parseValue(),
                      expect(newKey), let new = try? line.reader.parseValue(), expect(closeObject) else { return nil }
                change.values.append(ValueChange(name: name, old: old, new: new))
            } while expect(comma)
            guard expect(closeObject), expect(closeObject) else { return nil }
            changes.append(change)
        } while expect(comma)
        guard expect(closeArray), expect(checksumKey) else { return nil }
        let at = line.reader.index
        guard at + 10 == buffer.count,
              buffer[at..<(at + 8)].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              buffer[at + 8] == UInt8(ascii: "\""), buffer[at + 9] == UInt8(ascii: "}") else { return nil }
        return HistoryTransaction(token: token, timestamp: time, author: author, changes: changes)
    }
}

/// A history or journal line read from its start, in the form the store writes.
private struct LineCursor {
    let buffer: UnsafeBufferPointer<UInt8>
    var reader: JSONReader

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.buffer = buffer
        reader = JSONReader(buffer: buffer)
    }

    /// Steps over `literal` if the line goes on with it.
    mutating func expect(_ literal: [UInt8]) -> Bool {
        guard reader.index + literal.count <= buffer.count else { return false }
        for (k, b) in literal.enumerated() where buffer[reader.index + k] != b { return false }
        reader.index += literal.count
        return true
    }

    /// A JSON string, if one starts here.
    mutating func string() -> String? {
        guard reader.index < buffer.count, buffer[reader.index] == UInt8(ascii: "\"") else { return nil }
        return try? reader.parseString()
    }

    /// `{"token":N,"timestamp":"…","author":"…","changes":[`, up to the first change.
    mutating func header() -> (token: Int64, time: Double, author: String)? {
        guard expect(tokenKey), case .int(let token)? = try? reader.parseNumber(),
              expect(timestampKey), let ts = string(), let time = ISODate.parse(ts),
              expect(authorKey), let author = string(), expect(changesKey) else { return nil }
        return (token, time, author)
    }
}

private let updateKind = Array(#"{"kind":"update","type":"#.utf8)
private let valuesKey = Array(#","values":{"#.utf8)
private let oldKey = Array(#":{"old":"#.utf8)
private let newKey = Array(#","new":"#.utf8)
private let checksumKey = Array(#","crc32c":""#.utf8)
private let tokenKey = Array(#"{"token":"#.utf8)
private let timestampKey = Array(#","timestamp":"#.utf8)
private let authorKey = Array(#","author":"#.utf8)
private let changesKey = Array(#","changes":["#.utf8)
private let insertKind = Array(#"{"kind":"insert","type":"#.utf8)
private let idKey = Array(#","id":"#.utf8)
private let idsKey = Array(#","ids":["#.utf8)
private let comma = Array(",".utf8)
private let closeArray = Array("]".utf8)
private let closeObject = Array("}".utf8)
