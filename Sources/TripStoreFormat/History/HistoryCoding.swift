import TripStoreJSON
import TripStoreSystem
/// History transactions as JSON: the `history --format jsonl` line, which is
/// also a snapshot's history line and (with insert data added) a journal line.
/// Stored lines also keep a deleted object's `values` beside its tombstone.
package enum HistoryCoding {
    /// Writes a transaction as `history` prints it. `envelopes[id]`, when
    /// given, is written as the `envelope` of the insert of `id` (the object
    /// right after the transaction); `deletedValues` adds each delete's `values`.
    /// Both together make the line `history --format feed` prints, which
    /// `apply` replays (`deletedValues` also adds a migration's new schema).
    package static func write(_ t: HistoryTransaction, to w: inout JSONWriter,
                             envelopes: [String: JSONValue]? = nil, deletedValues: Bool = false) {
        write(t, to: &w, deletedValues: deletedValues) { c, w in
            if let envelope = envelopes?[c.id] { w.key("envelope"); w.value(envelope) }
        }
    }

    /// `write` with each insert's `envelope` member written by `envelope`
    /// (nothing, where there is none): the feed of a bulk import writes its
    /// envelopes from records, and its line a piece at a time.
    package static func write(_ t: HistoryTransaction, to w: inout JSONWriter, deletedValues: Bool,
                              envelope: (Change, inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("token"); w.int(t.token)
        w.key("timestamp"); w.date(t.timestamp)
        w.key("author"); w.string(t.author)
        w.key("changes")
        writeChanges(t, to: &w, deletedValues: deletedValues, envelope: envelope)
        w.endObject()
    }

    /// The `changes` array of `write`.
    package static func writeChanges(_ t: HistoryTransaction, to w: inout JSONWriter,
                                     envelopes: [String: JSONValue]? = nil, deletedValues: Bool = false) {
        writeChanges(t, to: &w, deletedValues: deletedValues) { c, w in
            if let envelope = envelopes?[c.id] { w.key("envelope"); w.value(envelope) }
        }
    }

    private static func writeChanges(_ t: HistoryTransaction, to w: inout JSONWriter, deletedValues: Bool,
                                     envelope: (Change, inout JSONWriter) -> Void) {
        w.beginArray()
        for c in t.changes {
            if let m = c.migration {
                writeMigration(m, to: &w, feed: deletedValues, stored: false)
                continue
            }
            w.beginObject()
            w.key("kind"); w.string(c.kind.rawValue)
            w.key("type"); w.string(c.type)
            w.key("id"); w.string(c.id)
            if c.redacted { w.key("redacted"); w.bool(true) }
            switch c.kind {
            case .insert:
                envelope(c, &w)
            case .update:
                w.key("values")
                writeValues(c.values, to: &w)
            case .delete:
                w.key("tombstone")
                w.value(.object(c.tombstone))
                if deletedValues, let values = c.deletedValues {
                    w.key("values"); w.value(.object(values))
                }
            case .redact, .migrate:
                break
            }
            w.endObject()
        }
        w.endArray()
    }

    /// `{"kind":"migrate","from":…,"to":…,"changes":[…]}`; the feed adds the
    /// new `schema`, stored history the old one and the old values.
    static func writeMigration(_ m: MigrationRecord, to w: inout JSONWriter, feed: Bool, stored: Bool) {
        w.beginObject()
        w.key("kind"); w.string(Change.Kind.migrate.rawValue)
        w.key("from"); w.string(m.from)
        w.key("to"); w.string(m.to)
        w.key("changes"); w.beginArray(); for s in m.steps { w.string(s) }; w.endArray()
        if feed || stored { w.key("schema"); w.value(m.schema) }
        if stored {
            if let p = m.previous { w.key("previous"); w.value(p) }
            w.key("values"); w.value(.object(m.oldValues))
        }
        w.endObject()
    }

    static func readMigration(_ item: JSONValue) -> Change? {
        guard case .string(let from)? = item["from"], case .string(let to)? = item["to"],
              case .array(let lines)? = item["changes"], let schema = item["schema"], case .object = schema else { return nil }
        var steps: [String] = []
        for l in lines {
            guard case .string(let s) = l else { return nil }
            steps.append(s)
        }
        var previous: JSONValue?
        switch item["previous"] {
        case nil: break
        case .object?: previous = item["previous"]
        default: return nil
        }
        var old: [JSONMember] = []
        switch item["values"] {
        case nil: break
        case .object(let members)?:
            for m in members { guard case .object = m.value else { return nil } }
            old = members
        default: return nil
        }
        var c = Change(kind: .migrate, type: "", id: "")
        c.migration = MigrationRecord(from: from, to: to, steps: steps, schema: schema, previous: previous, oldValues: old)
        return c
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
            guard readChanges(item, into: &changes) else { return nil }
        }
        return HistoryTransaction(token: token, timestamp: time, author: author, changes: changes)
    }

    /// Why a history line that did not read is wrong, when the reason is an id.
    package static func idProblem(_ v: JSONValue) -> String? {
        guard case .array(let items)? = v["changes"] else { return nil }
        for (k, item) in items.enumerated() {
            if let p = idProblem(change: item, number: k + 1) { return p }
        }
        return nil
    }

    /// Why change `number` (from 1) of a history line did not read, when the reason is an id.
    package static func idProblem(change item: JSONValue, number: Int) -> String? {
        var ids: [JSONValue] = []
        if let id = item["id"] { ids.append(id) }
        if case .array(let more)? = item["ids"] { ids += more }
        for case .string(let id) in ids {
            if let p = Identifier.problem(id) { return "change \(number): \(p)" }
        }
        return nil
    }

    /// Reads one stored change: one object's, or (`"ids"`) a run of inserts of one type.
    package static func readChanges(_ item: JSONValue, into changes: inout [Change]) -> Bool {
        guard case .string("insert")? = item["kind"], case .array(let ids)? = item["ids"] else {
            guard let c = readChange(item) else { return false }
            changes.append(c)
            return true
        }
        guard case .string(let type)? = item["type"], !type.isEmpty, item["id"] == nil, ids.count >= 2 else { return false }
        for v in ids {
            guard case .string(let raw) = v, let id = Identifier.stored(raw) else { return false }
            changes.append(Change(kind: .insert, type: type, id: id))
        }
        return true
    }

    static func readChange(_ item: JSONValue) -> Change? {
        if case .string("migrate")? = item["kind"] { return readMigration(item) }
        guard case .string(let k)? = item["kind"], let kind = Change.Kind(rawValue: k),
              case .string(let type)? = item["type"], !type.isEmpty,
              case .string(let raw)? = item["id"], let id = Identifier.stored(raw) else { return nil }
        var c = Change(kind: kind, type: type, id: id)
        switch item["redacted"] {
        case .bool(let b)?: c.redacted = b
        case nil: break
        default: return nil
        }
        if kind == .update {
            guard case .object(let members)? = item["values"] else { return nil }
            for m in members {
                guard let old = m.value["old"], let new = m.value["new"] else { return nil }
                c.values.append(ValueChange(name: m.key, old: old, new: new))
            }
        } else if kind == .delete {
            guard case .object(let members)? = item["tombstone"] else { return nil }
            c.tombstone = members
            switch item["values"] {
            case .object(let values)?: c.deletedValues = values
            case nil: break
            default: return nil
            }
        }
        return c
    }

    /// Compact bytes of a transaction, as `write` gives them, without the
    /// writer's bookkeeping per value: the snapshot and journal path.
    ///
    /// `groupInserts` (snapshot history, format 2) stores each run of two or
    /// more inserts of one type as one change, `{"kind":"insert","type":T,"ids":[…]}`:
    /// a bulk import's history then costs about its ids, not a wrapper per object.
    ///
    /// `drain`, when given, takes the bytes written so far (and empties
    /// them) each time they pass 1 MiB between changes: a transaction of a
    /// hundred thousand deletes is a line of a hundred megabytes, which a
    /// snapshot writes as it goes instead of holding whole.
    package static func appendCompact(_ t: HistoryTransaction, to out: inout [UInt8], groupInserts: Bool = false,
                              insertData: ((Int, inout [UInt8]) -> Void)? = nil, drain: ((inout [UInt8]) -> Void)? = nil) {
        var w = JSONWriter()
        swap(&w.bytes, &out)
        appendHeader(token: t.token, timestamp: t.timestamp, author: t.author, to: &w)
        var i = 0
        while i < t.changes.count {
            if let drain, w.bytes.count >= 1 << 20 { drain(&w.bytes) }
            let c = t.changes[i]
            if i > 0 { w.bytes.append(UInt8(ascii: ",")) }
            defer { i += 1 }
            if let m = c.migration {
                writeMigration(m, to: &w, feed: false, stored: true)
                continue
            }
            if groupInserts && insertData == nil && c.kind == .insert && !c.redacted {
                var end = i + 1
                while end < t.changes.count && t.changes[end].kind == .insert && t.changes[end].type == c.type
                        && !t.changes[end].redacted { end += 1 }
                if end - i >= 2 {
                    w.bytes.append(contentsOf: insertKind)
                    w.appendQuoted(c.type)
                    w.bytes.append(contentsOf: idsKey)
                    for k in i..<end {
                        if k > i { w.bytes.append(UInt8(ascii: ",")) }
                        w.appendQuoted(t.changes[k].id)
                    }
                    w.bytes.append(contentsOf: Array("]}".utf8))
                    i = end - 1
                    continue
                }
            }
            switch c.kind {
            case .insert: w.bytes.append(contentsOf: insertKind)
            case .update: w.bytes.append(contentsOf: updateKind)
            case .delete: w.bytes.append(contentsOf: deleteKind)
            case .redact, .migrate: w.bytes.append(contentsOf: redactKind)
            }
            w.appendQuoted(c.type)
            w.bytes.append(contentsOf: idKey)
            w.appendQuoted(c.id)
            if c.redacted { w.bytes.append(contentsOf: redactedKey) }
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
                if let values = c.deletedValues {
                    var d = JSONWriter()
                    d.value(.object(values))
                    w.bytes.append(contentsOf: valuesKey)
                    w.bytes.append(contentsOf: d.bytes)
                }
            case .redact, .migrate:
                break
            }
            w.bytes.append(UInt8(ascii: "}"))
        }
        w.bytes.append(contentsOf: Array("]}".utf8))
        swap(&w.bytes, &out)
    }

    /// The start of the line `appendCompact(groupInserts: true)` writes for
    /// a transaction: up to its first change. `appendInsertRuns` goes on from there.
    package static func appendHeader(token: Int64, timestamp: Double, author: String, to w: inout JSONWriter) {
        w.bytes.append(contentsOf: tokenKey)
        w.appendInteger(token)
        w.bytes.append(contentsOf: timestampKey)
        ISODate.append(timestamp, to: &w.bytes)
        w.bytes.append(contentsOf: authorKey)
        w.appendQuoted(author)
        w.bytes.append(contentsOf: changesKey)
    }

    /// The rest of that line after `appendHeader`, byte for byte, for a
    /// transaction of inserts only, from runs of one type each (`id(run, k, &w)`
    /// appends the k-th id of a run, quoted) instead of a `Change` per object: a bulk
    /// import's history. Only the part of ids `positions` of the runs back to
    /// back: each id with what comes before it (its run's opening, or a comma)
    /// and after it (its run's closing, the line's after the last), so that
    /// pieces for ranges that follow one another from 0 to the number of ids
    /// make the line (at least one id; written on every core a piece at a time).
    package static func appendInsertRuns(_ runs: [(type: String, count: Int)], positions: Range<Int>,
                                         id: (Int, Int, inout JSONWriter) -> Void, to w: inout JSONWriter) {
        let total = runs.reduce(0) { $0 + $1.count }
        guard total > 0 else { return w.bytes.append(contentsOf: Array("]}".utf8)) }
        // The run holding the first position, and the position within it.
        var n = 0, k = positions.lowerBound
        while n < runs.count && k >= runs[n].count {
            k -= runs[n].count
            n += 1
        }
        for p in positions {
            while k == runs[n].count {
                n += 1
                k = 0
            }
            let count = runs[n].count
            if k == 0 {
                if p > 0 { w.bytes.append(UInt8(ascii: ",")) }
                w.bytes.append(contentsOf: insertKind)
                w.appendQuoted(runs[n].type)
                w.bytes.append(contentsOf: count >= 2 ? idsKey : idKey)
            } else {
                w.bytes.append(UInt8(ascii: ","))
            }
            id(n, k, &w)
            if k == count - 1 { w.bytes.append(contentsOf: count >= 2 ? closeArrayAndObject : closeObject) }
            if p == total - 1 { w.bytes.append(contentsOf: closeArrayAndObject) }
            k += 1
        }
    }
}

private let tokenKey = Array(#"{"token":"#.utf8)
private let timestampKey = Array(#","timestamp":""#.utf8)
private let authorKey = Array(#"","author":"#.utf8)
private let changesKey = Array(#","changes":["#.utf8)
private let insertKind = Array(#"{"kind":"insert","type":"#.utf8)
private let updateKind = Array(#"{"kind":"update","type":"#.utf8)
private let deleteKind = Array(#"{"kind":"delete","type":"#.utf8)
private let redactKind = Array(#"{"kind":"redact","type":"#.utf8)
private let idKey = Array(#","id":"#.utf8)
private let idsKey = Array(#","ids":["#.utf8)
private let closeArrayAndObject = Array("]}".utf8)
private let closeObject = Array("}".utf8)
private let redactedKey = Array(#","redacted":true"#.utf8)
private let dataKey = Array(#","data":"#.utf8)
private let valuesKey = Array(#","values":"#.utf8)
private let tombstoneKey = Array(#","tombstone":"#.utf8)
