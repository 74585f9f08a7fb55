import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Why a feed line cannot be applied (`tripstore apply`).
public struct FeedError: Error, Sendable, CustomStringConvertible {
    /// The line of the feed (from 1).
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }

    /// A problem with feed line `line`.
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

/// What applying one feed line did: its transaction, and the store to go
/// on with (this one, or after a migration the store of the new schema).
public struct AppliedFeedLine {
    /// The transaction, with the feed's token, timestamp and author.
    public let transaction: HistoryTransaction
    /// The store to apply the next line to.
    public let store: Store
}

/// Replays a change feed (`history --format feed`) into a standby store,
/// one line at a time, as the same transactions with the same tokens.
public struct FeedApplier {
    public let store: Store

    /// Works on `store`.
    public init(_ store: Store) { self.store = store }

    /// Reads one line of `history --format feed` and checks that it is the
    /// transaction `token` for a store whose last token is `last` and whose
    /// last commit time is `notBefore`, without applying it.
    public static func read(_ value: JSONValue, line: Int, expecting token: Int64, after last: Int64,
                                     notBefore: Double?) throws(FeedError) -> HistoryTransaction {
        try read(FeedLine(value, number: line), expecting: token, after: last, notBefore: notBefore)
    }

    /// `read(_:line:expecting:after:notBefore:)` for a line already read.
    public static func read(_ feedLine: FeedLine, expecting token: Int64, after last: Int64,
                                     notBefore: Double?) throws(FeedError) -> HistoryTransaction {
        let line = feedLine.number
        guard let t = feedLine.transaction else {
            // A change's id: the line has the feed's form, its id does not.
            if let problem = feedLine.idProblem { throw FeedError(line: line, message: problem) }
            throw FeedError(line: line, message: "not a feed transaction (expected {\"token\", \"timestamp\", \"author\", \"changes\"} as the change feed writes it)")
        }
        guard t.token >= 1 else {
            throw FeedError(line: line, message: "token \(t.token) is no token of a feed (tokens start at 1)")
        }
        if t.token <= last && token == last + 1 {
            throw FeedError(line: line, message: "token \(t.token) is already applied (this store's last token is \(last))")
        }
        guard t.token == token else {
            throw FeedError(line: line, message: "token \(t.token) does not follow token \(token - 1): the feed has a gap or is out of order")
        }
        if let notBefore, t.timestamp < notBefore {
            throw FeedError(line: line, message: "token \(t.token) was committed at \(ISODate.format(t.timestamp)), before the transaction it follows "
                                               + "(\(ISODate.format(notBefore))); commit times never decrease")
        }
        if let c = t.changes.first(where: \.redacted) {
            throw FeedError(line: line, message: "token \(t.token) cannot be replayed: the primary removed the values of '\(c.id)' from its history "
                                               + "(a redaction); start the standby from a copy of the primary's folder and follow it from its last token")
        }
        return t
    }

    /// Replays one feed line as the same transaction, with the feed's token,
    /// timestamp and author. Delete rules are not run again beyond what the
    /// feed shows; the transaction the store builds must be the one the feed
    /// describes, and every update's `old` value must be this store's value
    /// now: otherwise the standby has diverged (`FeedError`, nothing written).
    /// A migration is made again from the schema the line carries, and the
    /// result names the store of the new schema (this one is `.migrated`).
    @discardableResult
    public func apply(_ value: JSONValue, line: Int) throws -> AppliedFeedLine {
        try apply(FeedLine(value, number: line))
    }

    /// `apply(_:line:)` for a line read from bytes: a bulk import
    /// (nothing but inserts, at least `snapshotCommitChanges` of them) into
    /// a store that has never held an object is decoded straight from the
    /// line's bytes into records, as `import` does, and committed with the
    /// feed's token, timestamp and author.
    @discardableResult
    public func apply(_ feedLine: FeedLine) throws -> AppliedFeedLine {
        try store.checkWritable(.apply)
        let line = feedLine.number
        let t = try FeedApplier.read(feedLine, expecting: store.lastToken + 1, after: store.lastToken, notBefore: try store.lastCommitTime())
        func diverged(_ m: String) -> FeedError { FeedError(line: line, message: m + "; nothing of this line was applied (the standby has diverged from its primary)") }
        // Errors of the envelopes name this line themselves: said once, by `FeedError`.
        func withoutLine(_ error: any Error) -> String {
            let text = "\(error)", own = "line \(line)"
            guard text.hasPrefix(own + " ") || text.hasPrefix(own + ":") else { return text }
            return String(text.dropFirst(own.count).drop { $0 == " " || $0 == ":" })
        }
        if t.changes.contains(where: { $0.kind == .redact }) {
            guard t.changes.allSatisfy({ $0.kind == .redact }) else { throw diverged("a redact transaction holds other changes") }
            return AppliedFeedLine(transaction: try Redactor(store).redact(ids: t.changes.map(\.id), author: t.author, timestamp: t.timestamp), store: store)
        }
        if let m = t.changes.first(where: { $0.kind == .migrate })?.migration {
            guard t.changes.count == 1 else { throw diverged("a migrate transaction holds other changes") }
            guard m.from == store.schema.fingerprint else {
                throw diverged("it migrates from schema \(m.from), but this store's schema is \(store.schema.fingerprint)")
            }
            let target: Schema
            do {
                target = try SchemaFile.read(value: m.schema)
            } catch {
                throw diverged("its schema: \(error)")
            }
            guard target.fingerprint == m.to else { throw diverged("its schema is \(target.fingerprint), not the \(m.to) it names") }
            guard SchemaMigration(from: store.schema, to: target).steps == m.steps else {
                throw diverged("migrating here plans other changes than the feed says")
            }
            let done = try Migrator(store).migrate(to: target, author: t.author, timestamp: t.timestamp)
            return AppliedFeedLine(transaction: done.transaction, store: done.store)
        }
        guard feedLine.elements == t.changes.count else { throw diverged("unreadable changes") }
        if let applied = try applyInBulk(t, feedLine) { return applied }
        var tx = store.transaction()
        var inserts: [DecodedObject] = []
        let decoder = EnvelopeDecoder(schema: store.schema)
        for (i, c) in t.changes.enumerated() where c.kind == .insert {
            guard let envelope = try feedLine.envelope(at: i) else { throw diverged("the insert of '\(c.id)' carries no envelope") }
            do {
                try decoder.decode(envelope, at: .line(line), into: &inserts)
            } catch {
                throw diverged("the insert of '\(c.id)': \(withoutLine(error))")
            }
        }
        do {
            if !inserts.isEmpty { try store.stage(inserts, mode: .insert, into: &tx) }
        } catch {
            throw diverged(withoutLine(error))
        }
        for c in t.changes where c.kind == .update {
            guard let row = tx.row(for: c.id), let o = tx.object(at: row) else { throw diverged("it updates '\(c.id)', which is not here") }
            let entity = store.schema.entities[o.entity]
            for v in c.values {
                guard let p = entity.property(named: v.name) else { throw diverged("'\(c.id)' has no property '\(v.name)'") }
                if let existing = store.table.object(at: row), Int(row) < tx.base {
                    let here = EnvelopeEncoder.jsonValue(existing.values[p.slot], of: p, schema: store.schema, lookup: store.table)
                    guard here == v.old else {
                        throw diverged("'\(c.id)'.\(v.name) is \(describe(here)) here, but the feed says it was \(describe(v.old))")
                    }
                }
                switch p.kind {
                case .attribute(let a):
                    do {
                        tx.setAttribute(row, slot: p.slot, to: try ValueDecoding.decode(v.new, as: a.type, optional: a.isOptional))
                    } catch {
                        throw diverged("'\(c.id)'.\(v.name): \(error.message)")
                    }
                case .relationship:
                    guard let ids = ValueDecoding.referenceIDs(v.new) else { throw diverged("'\(c.id)'.\(v.name) holds something other than references") }
                    var rows: [RowID] = []
                    for id in ids {
                        guard let r = tx.row(for: id) else { throw diverged("'\(c.id)'.\(v.name) refers to an object that is not here") }
                        rows.append(r)
                    }
                    try tx.setRelationship(row, slot: p.slot, to: rows, deletingDropped: false)
                }
            }
        }
        for c in t.changes where c.kind == .delete {
            guard let row = store.table.row(for: c.id) else { throw diverged("it deletes '\(c.id)', which is not here") }
            try tx.delete(row)
        }
        try tx.checkDenyRules()
        let built = tx.changes()
        func key(_ c: Change) -> String { "\(c.kind.rawValue) \(c.type) \(c.id)" }
        let expected = t.changes.sorted { key($0) < key($1) }
        let got = built.sorted { key($0) < key($1) }
        guard expected.map(key) == got.map(key) else {
            var differ = Array(Set(expected.map(key)).symmetricDifference(got.map(key)).sorted().prefix(3))
            if differ.isEmpty {
                // The same changes, one of them listed more than once.
                let counts = Dictionary(expected.map { (key($0), 1) }, uniquingKeysWith: +)
                differ = Array(counts.filter { $0.value > 1 }.map { "\($0.key) listed \($0.value) times" }.sorted().prefix(3))
            }
            throw diverged("replaying it here changes other objects than the feed says (\(differ.joined(separator: ", ")))")
        }
        for (a, b) in zip(expected, got) where a.kind == .update && a.values != b.values {
            throw diverged("replaying it here gives '\(a.id)' other values than the feed says")
        }
        guard let committed = try store.commit(tx, author: t.author, timestamp: t.timestamp, orderedLike: t.changes) else {
            throw diverged("it changes nothing here")
        }
        return AppliedFeedLine(transaction: committed, store: store)
    }

    /// A bulk import replayed as `import` makes one: nil, with nothing
    /// changed, where that path does not apply (a store that held objects,
    /// fewer inserts, a line made from a value) or the records it makes
    /// would not be the feed's inserts in the feed's order; the line is then
    /// replayed object by object, which words any difference exactly.
    func applyInBulk(_ t: HistoryTransaction, _ line: FeedLine) throws -> AppliedFeedLine? {
        guard BulkImporter(store).storeIsEmpty, t.changes.count >= max(1, store.options.snapshotCommitChanges),
              t.changes.allSatisfy({ $0.kind == .insert }), !BulkLinks.hasSelfInverse(store.schema) else { return nil }
        let schema = store.schema, minimum = store.options.snapshotCommitChanges
        let planned = line.withEnvelopeBytes { (buf, ranges) -> BulkImportPlan? in
            let chunks = ImportRecordDecoder.decodeInParallel(ranges, in: buf, schema: schema)
            guard !chunks.contains(where: \.gaveUp) else {
                for c in chunks { c.discard() }
                return nil
            }
            Trace.mark("apply: decode \(ranges.count) envelopes into records")
            return BulkImportPlan(chunks, schema: schema, minimum: minimum)
        }
        guard let plan = planned ?? nil, plan.lists(t.changes) else { return nil }
        guard let result = try BulkImporter(store).insert(plan, author: t.author, timestamp: t.timestamp) else { return nil }
        return AppliedFeedLine(transaction: HistoryTransaction(token: result.token, timestamp: result.timestamp, author: result.author,
                                                               changes: t.changes),
                               store: store)
    }

    private func describe(_ v: JSONValue) -> String {
        var w = JSONWriter()
        w.value(v)
        return w.string
    }
}
