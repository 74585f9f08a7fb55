import TripStoreFormat
import TripStoreJSON

/// Writes retained history as the change feed (`history --format feed`),
/// the lines `FeedApplier` replays.
public struct FeedWriter {
    public let store: Store

    /// Works on `store`.
    public init(_ store: Store) { self.store = store }

    /// Writes `transactions` (retained history) as the lines of `history
    /// --format feed`, in the order given, to `write` a piece at a time. The
    /// line of a bulk import runs to gigabytes at a million objects: it is
    /// never held whole, and the envelopes of its objects that nothing
    /// changed since are written from their records, not made as JSON trees.
    /// - Throws: what reading history and time travel throw, and
    ///   `imageDamaged` when a bulk import's records are in a damaged image.
    public func write(_ transactions: [HistoryTransaction], to write: ([UInt8]) -> Void) throws {
        let sources = try InsertEnvelopeSources.of(transactions, in: store)
        // A flat copy of the lists, made only when there are records to write.
        let records = sources.bulk.isEmpty ? nil : (writer: RecordEnvelopeWriter(schema: store.schema, everyRelationship: true),
                                                     lists: FlatLists(store.table.lists))
        defer { withExtendedLifetime(records?.lists) {} }
        let view = store.table.readView
        var record = ByteOutput(capacity: 4096)
        var scratch = JSONWriter()
        var w = JSONWriter()
        for t in transactions {
            let walked = sources.walked[t.token]
            HistoryCoding.write(t, to: &w, deletedValues: true) { c, w in
                if let records, sources.fromRecord(t.token, c.id), let row = store.table.row(for: c.id), view.entity(at: row) != nil {
                    record.removeAll()
                    records.writer.write(row: row, table: view, lists: records.lists.view, to: &record, scratch: &scratch)
                    w.key("envelope")
                    w.beginRawValue()
                    w.bytes.append(contentsOf: record.bytes)
                } else if let envelope = walked?[c.id] {
                    w.key("envelope")
                    w.value(envelope)
                }
                if w.bytes.count >= 1 << 20 {
                    write(w.bytes)
                    w.bytes.removeAll(keepingCapacity: true)
                }
            }
            w.bytes.append(0x0A)
            write(w.bytes)
            w.bytes.removeAll(keepingCapacity: true)
        }
    }
}
