import TripStoreEngine

/// Prints query results: `table` (aligned columns, for people), `csv`,
/// `json` (a pretty array of envelopes), `jsonl` (one compact envelope a
/// line) or `ids`. Everything but `table` is streamed row by row.
struct RowFormatter {
    enum Format: String, CaseIterable {
        case table, json, jsonl, csv, ids
    }

    let store: Store
    let format: Format
    let from: Entity
    let fields: [String]?
    let console: Console

    var schema: Schema { store.schema }

    /// Columns for table and csv: type and id, then the requested fields or
    /// the root type's own scalar attributes. A property called `type` or
    /// `id` is the column `data.type` / `data.id`, so it never hides the
    /// envelope's own (`--fields data.type` asks for it).
    var columns: [String] {
        if let fields { return ["id"] + fields.filter { $0 != "id" } }
        var out = ["type", "id"]
        for p in from.properties {
            guard let a = p.attribute else { continue }
            if case .embedded = a.type { continue }
            out.append(p.name == "type" || p.name == "id" ? "data." + p.name : p.name)
        }
        return out
    }

    /// A table or csv cell: control characters written as `\u00XX`, so a stored
    /// string can neither drive the terminal (ESC, BEL) nor break a row.
    func cell(_ o: StoredObject, _ column: String) -> String {
        if column == "type" { return schema.entities[o.entity].name }
        if column == "id" { return o.id.escapingControls() }
        let name = column.hasPrefix("data.") ? String(column.dropFirst(5)) : column
        guard let p = schema.entities[o.entity].property(named: name) else { return "" }
        return text(o.values[p.slot], p).escapingControls()
    }

    func text(_ v: Value, _ p: Property) -> String {
        switch v {
        case .null: return ""
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d):
            var w = JSONWriter()
            w.double(d)
            return w.string
        case .bool(let b): return String(b)
        case .date(let d): return ISODate.format(d)
        case .array(let items): return items.map { text($0, p) }.joined(separator: "; ")
        case .embedded, .toOne, .toMany:
            var w = JSONWriter()
            store.writeValue(v, of: p, to: &w)
            return w.string
        }
    }

    func write(_ rows: [RowID]) {
        // A row can read as empty only when the image showed damage: the
        // command then runs again from the JSON, and this output is dropped.
        let rows = rows.filter { store.entity(at: $0) != nil }
        switch format {
        case .ids:
            for r in rows { console.line(store.id(at: r) ?? "") }
        case .jsonl:
            for r in rows {
                var w = JSONWriter()
                envelope(r, &w)
                w.bytes.append(0x0A)
                console.out(w.bytes)
            }
        case .json:
            console.out("[")
            for (i, r) in rows.enumerated() {
                var w = JSONWriter(pretty: true)
                envelope(r, &w)
                let indented = w.string.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
                console.out((i == 0 ? "\n" : ",\n") + indented)
            }
            console.out(rows.isEmpty ? "]\n" : "\n]\n")
        case .csv:
            let cols = columns
            console.line(cols.map(csvQuote).joined(separator: ","))
            for r in rows {
                guard let o = store.object(at: r) else { continue }
                console.line(cols.map { csvQuote(cell(o, $0)) }.joined(separator: ","))
            }
        case .table:
            let cols = columns
            let cells = rows.compactMap { r -> [String]? in
                store.object(at: r).map { o in cols.map { clip(cell(o, $0)) } }
            }
            var widths = cols.map(\.count)
            for row in cells { for (i, c) in row.enumerated() { widths[i] = max(widths[i], c.count) } }
            func line(_ values: [String]) -> String {
                var s = ""
                for (i, v) in values.enumerated() {
                    s += i == values.count - 1 ? v : v.padded(to: widths[i]) + "  "
                }
                return s
            }
            console.line(line(cols))
            console.line(line(widths.map { String(repeating: "-", count: $0) }))
            for row in cells { console.line(line(row)) }
            console.line("(\(rows.count) row\(rows.count == 1 ? "" : "s"))")
        }
    }

    func envelope(_ r: RowID, _ w: inout JSONWriter) {
        guard let o = store.object(at: r) else { return w.null() }
        store.writeEnvelope(o, to: &w,
                              fields: fields.map { Set($0.map { $0.hasPrefix("data.") ? String($0.dropFirst(5)) : $0 }) })
    }

    /// At most 40 characters, never ending inside a `\u00XX` escape.
    func clip(_ s: String) -> String {
        guard s.count > 40 else { return s }
        var cut = String(s.prefix(39))
        if let r = cut.range(of: "\\u", options: .backwards), cut.distance(from: r.lowerBound, to: cut.endIndex) < 6 {
            cut = String(cut[..<r.lowerBound])
        }
        return cut + "…"
    }

    func csvQuote(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingQuotes() + "\""
    }
}

extension String {
    func replacingQuotes() -> String {
        var out = ""
        for c in self { out += c == "\"" ? "\"\"" : String(c) }
        return out
    }
}

extension String {
    /// C0 controls (tab and newline included), DEL and C1 controls as `\u00XX`.
    func escapingControls() -> String {
        guard unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else { return self }
        var out = String.UnicodeScalarView()
        for u in unicodeScalars {
            if u.value < 0x20 || (0x7F...0x9F).contains(u.value) {
                let hex = String(u.value, radix: 16, uppercase: false)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            } else {
                out.append(u)
            }
        }
        return String(out)
    }
}
