import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// A store as SQL for PostgreSQL: its DDL, its change feed one SQL
/// transaction per token (the cursor checked first, so that a resumed
/// stream applies every token exactly once), its objects, and a query as
/// one `SELECT`.
public struct SQLWriter {
    public let store: Store

    /// Works on `store`.
    public init(_ store: Store) { self.store = store }

    /// `tripstore schema --format sql` for this store: the DDL, whose
    /// indexes are created only in a database that has reached the store's
    /// last migration (before it, that migration's transaction creates them).
    /// - Throws: what reading history throws.
    public func ddl(in sql: SQLSchema) throws -> String {
        let lastMigration = try store.checkedHistory().last { t in t.changes.contains { $0.kind == .migrate } }?.token ?? 0
        return sql.ddl(for: store.schema, indexesFrom: lastMigration)
    }

    /// Rows per `INSERT … VALUES` statement.
    static let sqlRowsPerInsert = 500

    /// Writes `transactions` (retained history, oldest first, without a gap)
    /// as SQL, each as its own SQL transaction, to `out` a piece at a time.
    /// - Throws: what reading history and time travel throw.
    public func writeHistory(_ transactions: [HistoryTransaction], in sql: SQLSchema, to write: ([UInt8]) -> Void) throws {
        guard !transactions.isEmpty else { return }
        func out(_ s: String) { write(Array(s.utf8)) }
        func isBulk(_ t: HistoryTransaction) -> Bool { InsertEnvelopeSources.isBulkInsert(t) }
        // Every insert of an ordinary transaction is walked back, and the
        // objects of a bulk import that changed after it (the rest are
        // written from their records).
        let sources = try InsertEnvelopeSources.of(transactions, in: store)
        let envelopes = sources.walked
        let timeline = try schemaTimeline()
        let retained = try store.checkedHistory()
        for t in transactions {
            let then = timeline.schema(at: t.token, current: store.schema)
            var s = "BEGIN;\n" + sql.expect(t.token - 1, t.token)
            if let m = t.changes.first(where: { $0.kind == .migrate }), m.migration != nil {
                // Every object changes shape: the table is written anew from
                // the store as of this token, and the indexes brought to the
                // new schema's (the stale ones dropped first: they may refuse
                // the new values).
                s += "SET LOCAL client_min_messages = warning;\n" + sql.indexDrops(for: then) + "DELETE FROM \(sql.objects);\n"
                out(s)
                s = ""
                let past = t.token == store.lastToken ? store : try store.past(at: .token(t.token))
                SQLWriter(past).writeSQLObjects(in: sql, token: t.token, to: write)
                s = sql.indexCreations(for: then)
            } else if isBulk(t) && sources.changedSince[t.token] == nil && store.table.count == t.changes.count {
                // Every live object is one this import inserted, unchanged since: the table as it is.
                out(s)
                s = ""
                writeSQLObjects(in: sql, token: t.token, to: write)
            } else if isBulk(t) {
                out(s)
                s = ""
                out("COPY \(sql.objects) (id, type, types, data, token) FROM STDIN;\n")
                var chunk: [UInt8] = []
                chunk.reserveCapacity(1 << 21)
                var types: [String: [UInt8]] = [:]
                var w = JSONWriter()
                let writer = RecordEnvelopeWriter(schema: store.schema, everyRelationship: true)
                let lists = FlatLists(store.table.lists)
                defer { withExtendedLifetime(lists) {} }
                var data = ByteOutput(capacity: 4096)
                for c in t.changes {
                    SQLText.appendCopyEscaped(Array(c.id.utf8), to: &chunk)
                    chunk.append(0x09)
                    SQLText.appendCopyEscaped(Array(c.type.utf8), to: &chunk)
                    chunk.append(0x09)
                    if types[c.type] == nil { types[c.type] = Array(SQLText.copyArray(Self.types(c.type, then)).utf8) }
                    chunk += types[c.type] ?? []
                    chunk.append(0x09)
                    if sources.fromRecord(t.token, c.id), let row = store.table.row(for: c.id), store.table.entity(at: row) != nil {
                        data.removeAll()
                        writer.writeData(row: row, table: store.table.readView, lists: lists.view, to: &data, scratch: &w)
                        SQLText.appendCopyEscaped(Array(data.bytes), to: &chunk)
                    } else {
                        w.bytes.removeAll(keepingCapacity: true)
                        w.value(envelopes[t.token]?[c.id]?["data"] ?? .object([]))
                        SQLText.appendCopyEscaped(w.bytes, to: &chunk)
                    }
                    chunk.append(0x09)
                    chunk += Array(String(t.token).utf8)
                    chunk.append(0x0A)
                    if chunk.count > 1 << 20 {
                        write(chunk)
                        chunk.removeAll(keepingCapacity: true)
                    }
                }
                write(chunk)
                out("\\.\n")
            } else {
                s += objectStatements(t, envelopes: envelopes[t.token] ?? [:], schema: then, sql: sql)
            }
            if t.changes.contains(where: { $0.kind == .redact }) {
                // The rows of earlier transactions as redaction left them.
                let ids = Set(t.changes.filter { $0.kind == .redact }.map(\.id))
                for earlier in retained where earlier.token < t.token && earlier.changes.contains(where: { ids.contains($0.id) }) {
                    s += "UPDATE \(sql.history) SET changes = \(Self.changesJSONB(earlier)) WHERE token = \(earlier.token);\n"
                }
            }
            var w = JSONWriter()
            HistoryCoding.writeChanges(t, to: &w)
            var row: [UInt8] = []
            // A bulk import's row holds every id it inserted: through `COPY`,
            // which PostgreSQL reads faster than a long literal.
            let copy = isBulk(t)
            s += copy
                ? "COPY \(sql.history) (token, \"timestamp\", author, changes) FROM STDIN;\n"
                    + "\(t.token)\t\(SQLText.copyField(ISODate.format(t.timestamp)))\t\(SQLText.copyField(t.author))\t"
                : "INSERT INTO \(sql.history) (token, \"timestamp\", author, changes) VALUES (\(t.token), \(SQLText.timestamp(t.timestamp)), "
                    + "\(SQLText.literal(t.author)), "
            out(s)
            if copy { SQLText.appendCopyEscaped(w.bytes, to: &row) } else { SQLText.appendLiteral(w.bytes, to: &row) }
            write(row)
            out(copy ? "\n\\.\n" : "::jsonb);\n")
            out("UPDATE \(sql.cursor) SET token = \(t.token);\nCOMMIT;\n")
        }
    }

    /// The whole store as of its last token, as one SQL transaction for an
    /// empty database (its cursor 0): objects and retained history through
    /// `COPY`, then the cursor and the schema's indexes (`export --format sql`).
    public func writeExport(in sql: SQLSchema, to write: ([UInt8]) -> Void) throws {
        let retained = try store.checkedHistory()
        func out(_ s: String) { write(Array(s.utf8)) }
        // The tables first (the DDL changes nothing where they are), so that
        // an empty database takes the export as it is.
        out(try ddl(in: sql))
        out("BEGIN;\n" + sql.expect(0, store.lastToken))
        writeSQLObjects(in: sql, token: store.lastToken, to: write)
        out("COPY \(sql.history) (token, \"timestamp\", author, changes) FROM STDIN;\n")
        var chunk = ""
        for t in retained {
            var w = JSONWriter()
            HistoryCoding.writeChanges(t, to: &w)
            chunk += "\(t.token)\t\(SQLText.copyField(ISODate.format(t.timestamp)))\t\(SQLText.copyField(t.author))\t\(SQLText.copyField(w.string))\n"
            if chunk.utf8.count > 1 << 20 {
                out(chunk)
                chunk = ""
            }
        }
        out(chunk + "\\.\n")
        // The schema's indexes, which the DDL leaves to a database that has
        // reached the store's last migration (this one has, once it commits).
        out("UPDATE \(sql.cursor) SET token = \(store.lastToken);\nSET LOCAL client_min_messages = warning;\n"
            + sql.indexDrops(for: store.schema) + sql.indexCreations(for: store.schema) + "COMMIT;\n")
    }

    /// Every live object as `COPY` rows, in id order: encoded on every core
    /// a block of rows at a time, written in order.
    func writeSQLObjects(in sql: SQLSchema, token: Int64, to write: ([UInt8]) -> Void) {
        write(Array("COPY \(sql.objects) (id, type, types, data, token) FROM STDIN;\n".utf8))
        let rows = store.table.rowsSortedByID()
        // Checked whole first, the table is only read by the workers.
        let view = store.table.readView, schema = store.schema, shared = store.table.checkEverything()
        let types = schema.entities.map { Array(SQLText.copyArray(SQLSchema.types(of: $0, in: schema)).utf8) }
        let tokenText = Array(String(token).utf8)
        // Per entity, what follows an id: the type, its ancestors, and the tab before `data`.
        let afterID = schema.entities.map { e -> [UInt8] in
            var field: [UInt8] = [0x09]
            SQLText.appendCopyEscaped(Array(e.name.utf8), to: &field)
            return field + [0x09] + types[e.id] + [0x09]
        }
        let lists = FlatLists(store.table.lists)
        defer { withExtendedLifetime(lists) {} }
        let flat = lists.view
        let blockRows = 4096
        // Straight from the records, as a snapshot is written: no object
        // decoded, and a reference's type and id read from its record.
        let makeEncoder: @Sendable () -> (Int) -> [UInt8] = {
            let writer = RecordEnvelopeWriter(schema: schema.privateCopy(), everyRelationship: true)
            return { k in
                let range = (k * blockRows)..<min(rows.count, (k + 1) * blockRows)
                var row = ByteOutput(capacity: range.count * 512)
                var data = ByteOutput(capacity: 4096)
                var scratch = JSONWriter()
                for r in rows[range] {
                    guard let e = view.entity(at: r) else { continue }
                    RecordReader.withID(view.record(r)) { SQLText.appendCopyEscaped($0, to: &row) }
                    afterID[e].withUnsafeBytes { row.append($0) }
                    data.removeAll()
                    writer.writeData(row: r, table: view, lists: flat, to: &data, scratch: &scratch)
                    SQLText.appendCopyEscaped(data.bytes, to: &row)
                    row.append(0x09)
                    tokenText.withUnsafeBytes { row.append($0) }
                    row.append(0x0A)
                }
                return Array(row.bytes)
            }
        }
        let blocks = (rows.count + blockRows - 1) / blockRows
        if shared {
            let work = OrderedWork(count: blocks, ahead: 4, makeWorker: makeEncoder)
            defer { work.finish() }
            while let block = work.next() { write(block) }
        } else {
            let encode = makeEncoder()
            for k in 0..<blocks { write(encode(k)) }
        }
        write(Array("\\.\n".utf8))
    }

    /// The row of a live object as it is now, for a transaction whose
    /// history lost its values to a redaction: later changes follow in their
    /// own transactions, so the database ends as the store is. Nil for an
    /// object gone now (its delete follows).
    private func currentRow(_ id: String, token: Int64) -> String? {
        guard let row = store.table.row(for: id), let o = store.table.object(at: row) else { return nil }
        let e = store.schema.entities[o.entity]
        var w = JSONWriter()
        EnvelopeEncoder.writeData(o, entity: e, schema: store.schema, lookup: store.table, to: &w)
        return "(\(SQLText.literal(id)), \(SQLText.literal(e.name)), \(SQLText.textArray(SQLSchema.types(of: e, in: store.schema))), "
            + "\(SQLText.literal(w.string))::jsonb, \(token))"
    }

    /// Upserts for inserts, merges for updates, deletes: in that order, as the transaction's changes are.
    private func objectStatements(_ t: HistoryTransaction, envelopes: [String: JSONValue], schema then: Schema, sql: SQLSchema) -> String {
        var s = ""
        var rows: [String] = []
        func flushInserts() {
            guard !rows.isEmpty else { return }
            s += "INSERT INTO \(sql.objects) (id, type, types, data, token) VALUES\n  " + rows.joined(separator: ",\n  ")
                + "\nON CONFLICT (id) DO UPDATE SET type = excluded.type, types = excluded.types, data = excluded.data, token = excluded.token;\n"
            rows = []
        }
        var deletes: [String] = []
        for c in t.changes {
            switch c.kind {
            case .insert:
                let data = envelopes[c.id]?["data"] ?? .object([])
                rows.append("(\(SQLText.literal(c.id)), \(SQLText.literal(c.type)), \(SQLText.textArray(Self.types(c.type, then))), "
                            + "\(SQLText.jsonb(data)), \(t.token))")
                if rows.count >= SQLWriter.sqlRowsPerInsert { flushInserts() }
            case .update where c.redacted:
                // Its values were redacted from history: the object as it is now.
                if let row = currentRow(c.id, token: t.token) { rows.append(row) }
            case .update:
                flushInserts()
                let values = JSONValue.object(c.values.map { JSONMember($0.name, $0.new) })
                s += "UPDATE \(sql.objects) SET data = data || \(SQLText.jsonb(values)), token = \(t.token) WHERE id = \(SQLText.literal(c.id));\n"
            case .delete:
                deletes.append(SQLText.literal(c.id))
            case .redact, .migrate:
                break
            }
        }
        // A redacted object as it is now: rows written before from its
        // history (a migration's copy of every object, rebuilt from history)
        // hold nils where its values were.
        for c in t.changes where c.kind == .redact {
            if let row = currentRow(c.id, token: t.token) { rows.append(row) }
        }
        flushInserts()
        for k in stride(from: 0, to: deletes.count, by: SQLWriter.sqlRowsPerInsert) {
            s += "DELETE FROM \(sql.objects) WHERE id IN (" + deletes[k..<min(deletes.count, k + SQLWriter.sqlRowsPerInsert)].joined(separator: ", ") + ");\n"
        }
        return s
    }

    static func copyRow(id: String, type: String, schema: Schema, data: JSONValue?, token: Int64) -> String {
        var w = JSONWriter()
        w.value(data ?? .object([]))
        return "\(SQLText.copyField(id))\t\(SQLText.copyField(type))\t\(SQLText.copyArray(types(type, schema)))\t\(SQLText.copyField(w.string))\t\(token)\n"
    }

    /// A type and its ancestors in the schema of its time (the type alone when unknown there).
    static func types(_ type: String, _ schema: Schema) -> [String] {
        schema.entity(named: type).map { SQLSchema.types(of: $0, in: schema) } ?? [type]
    }

    /// A transaction's `changes` as `history --format jsonl` prints them, as `jsonb`.
    static func changesJSONB(_ t: HistoryTransaction) -> String {
        var w = JSONWriter()
        HistoryCoding.writeChanges(t, to: &w)
        return SQLText.literal(w.string) + "::jsonb"
    }

    /// The schema in force at each retained token: the one before the next migration, else the store's.
    func schemaTimeline() throws -> SchemaTimeline {
        SchemaTimeline(migrations: try Rewinder(store).migrationPlans().map { ($0.key, $0.value.from) }.sorted { $0.0 < $1.0 })
    }
}

/// Which schema history was written under, token by token.
struct SchemaTimeline {
    /// Each migration's token and the schema before it, in token order.
    let migrations: [(token: Int64, before: Schema)]

    func schema(at token: Int64, current: Schema) -> Schema {
        migrations.first { $0.token > token }?.before ?? current
    }
}
