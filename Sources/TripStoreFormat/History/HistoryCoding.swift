import TripStoreJSON
import TripStoreSystem
/// History transactions as JSON: the `history --format jsonl` line, which is
/// also a snapshot's history line and (with insert data added) a journal line.
package enum HistoryCoding {
    /// Writes a transaction. `insertData(i, &w)` may write a `"data"` member for insert change `i`.
    package static func write(_ t: HistoryTransaction, to w: inout JSONWriter,
                             insertData: ((Int, inout JSONWriter) -> Void)? = nil) {
        w.beginObject()
        w.key("token"); w.int(t.token)
        w.key("timestamp"); w.date(t.timestamp)
        w.key("author"); w.string(t.author)
        w.key("changes")
        w.beginArray()
        for (i, c) in t.changes.enumerated() {
            w.beginObject()
            w.key("kind"); w.string(c.kind.rawValue)
            w.key("type"); w.string(c.type)
            w.key("id"); w.string(c.id)
            switch c.kind {
            case .insert:
                insertData?(i, &w)
            case .update:
                w.key("values")
                writeValues(c.values, to: &w)
            case .delete:
                w.key("tombstone")
                w.value(.object(c.tombstone))
            }
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// `{"name": {"old": …, "new": …}, …}` of an update.
    static func writeValues(_ values: [ValueChange], to w: inout JSONWriter) {
        w.beginObject()
        for v in values {
            w.key(v.name)
            w.beginObject()
            w.key("old"); w.value(v.old)
            w.key("new"); w.value(v.new)
            w.endObject()
        }
        w.endObject()
    }

    /// Reads a transaction; nil when the JSON is not of that form.
    package static func read(_ v: JSONValue) -> HistoryTransaction? {
        guard case .int(let token)? = v["token"], case .string(let ts)? = v["timestamp"],
              let time = ISODate.parse(ts), case .string(let author)? = v["author"],
              case .array(let items)? = v["changes"] else { return nil }
        var changes: [Change] = []
        changes.reserveCapacity(items.count)
        for item in items {
            guard let c = readChange(item) else { return nil }
            changes.append(c)
        }
        return HistoryTransaction(token: token, timestamp: time, author: author, changes: changes)
    }

    static func readChange(_ item: JSONValue) -> Change? {
        guard case .string(let k)? = item["kind"], let kind = Change.Kind(rawValue: k),
              case .string(let type)? = item["type"], case .string(let id)? = item["id"] else { return nil }
        var c = Change(kind: kind, type: type, id: id)
        if kind == .update {
            guard case .object(let members)? = item["values"] else { return nil }
            for m in members {
                guard let old = m.value["old"], let new = m.value["new"] else { return nil }
                c.values.append(ValueChange(name: m.key, old: old, new: new))
            }
        } else if kind == .delete {
            guard case .object(let members)? = item["tombstone"] else { return nil }
            c.tombstone = members
        }
        return c
    }

    /// Compact bytes of a transaction, as `write` gives them, without the
    /// writer's bookkeeping per value: the snapshot and journal path.
    package static func appendCompact(_ t: HistoryTransaction, to out: inout [UInt8],
                              insertData: ((Int, inout [UInt8]) -> Void)? = nil) {
        var w = JSONWriter()
        swap(&w.bytes, &out)
        w.bytes.append(contentsOf: tokenKey)
        w.appendInteger(t.token)
        w.bytes.append(contentsOf: timestampKey)
        ISODate.append(t.timestamp, to: &w.bytes)
        w.bytes.append(contentsOf: authorKey)
        w.appendQuoted(t.author)
        w.bytes.append(contentsOf: changesKey)
        for (i, c) in t.changes.enumerated() {
            if i > 0 { w.bytes.append(UInt8(ascii: ",")) }
            switch c.kind {
            case .insert: w.bytes.append(contentsOf: insertKind)
            case .update: w.bytes.append(contentsOf: updateKind)
            case .delete: w.bytes.append(contentsOf: deleteKind)
            }
            w.appendQuoted(c.type)
            w.bytes.append(contentsOf: idKey)
            w.appendQuoted(c.id)
            switch c.kind {
            case .insert:
                if let insertData {
                    w.bytes.append(contentsOf: dataKey)
                    insertData(i, &w.bytes)
                }
            case .update:
                var v = JSONWriter()
                writeValues(c.values, to: &v)
                w.bytes.append(contentsOf: valuesKey)
                w.bytes.append(contentsOf: v.bytes)
            case .delete:
                var v = JSONWriter()
                v.value(.object(c.tombstone))
                w.bytes.append(contentsOf: tombstoneKey)
                w.bytes.append(contentsOf: v.bytes)
            }
            w.bytes.append(UInt8(ascii: "}"))
        }
        w.bytes.append(contentsOf: Array("]}".utf8))
        swap(&w.bytes, &out)
    }
}

private let tokenKey = Array(#"{"token":"#.utf8)
private let timestampKey = Array(#","timestamp":""#.utf8)
private let authorKey = Array(#"","author":"#.utf8)
private let changesKey = Array(#","changes":["#.utf8)
private let insertKind = Array(#"{"kind":"insert","type":"#.utf8)
private let updateKind = Array(#"{"kind":"update","type":"#.utf8)
private let deleteKind = Array(#"{"kind":"delete","type":"#.utf8)
private let idKey = Array(#","id":"#.utf8)
private let dataKey = Array(#","data":"#.utf8)
private let valuesKey = Array(#","values":"#.utf8)
private let tombstoneKey = Array(#","tombstone":"#.utf8)
