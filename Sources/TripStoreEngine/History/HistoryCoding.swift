/// History transactions as JSON: the `history --format jsonl` line, which is
/// also a snapshot's history line and (with insert data added) a journal line.
public enum HistoryCoding {
    /// Writes a transaction. `insertData(i, &w)` may write a `"data"` member for insert change `i`.
    public static func write(_ t: HistoryTransaction, to w: inout JSONWriter,
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
                w.beginObject()
                for v in c.values {
                    w.key(v.name)
                    w.beginObject()
                    w.key("old"); w.value(v.old)
                    w.key("new"); w.value(v.new)
                    w.endObject()
                }
                w.endObject()
            case .delete:
                w.key("tombstone")
                w.value(.object(c.tombstone))
            }
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// Reads a transaction; nil when the JSON is not of that form.
    public static func read(_ v: JSONValue) -> HistoryTransaction? {
        guard case .int(let token)? = v["token"], case .string(let ts)? = v["timestamp"],
              let time = ISODate.parse(ts), case .string(let author)? = v["author"],
              case .array(let items)? = v["changes"] else { return nil }
        var changes: [Change] = []
        changes.reserveCapacity(items.count)
        for item in items {
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
            changes.append(c)
        }
        return HistoryTransaction(token: token, timestamp: time, author: author, changes: changes)
    }
}
