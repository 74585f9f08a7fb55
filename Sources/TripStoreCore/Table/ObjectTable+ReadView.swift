import TripStoreFormat

extension ObjectTable {
    /// The table as parallel workers see it: reading methods only, so the
    /// compiler keeps workers from changing it. Sharing it is safe because
    /// the table is changed by one thread, and never while `Parallel.map`
    /// runs workers over it (the caller waits for them).
    package struct ReadView: @unchecked Sendable {
        private let table: ObjectTable
        fileprivate var tableForLookup: ObjectTable { table }

        init(_ table: ObjectTable) {
            self.table = table
        }

        var schema: Schema { table.schema }
        var lists: RelationshipLists { table.lists }
        @inline(__always) func entity(at row: RowID) -> Int? { table.entity(at: row) }
        @inline(__always) func record(_ row: RowID) -> UnsafeRawPointer { table.record(row) }
        @inline(__always) func prefetch(_ row: RowID) { table.prefetch(row) }
        @inline(__always) func prefetchColumns(_ row: RowID) { table.prefetchColumns(row) }
        @inline(__always) func withID<R>(_ row: RowID, _ body: (UnsafeRawBufferPointer) -> R) -> R { table.withID(row, body) }
        func sortedRow(for id: String) -> RowID? { table.sortedRow(for: id) }
    }

    /// A view for workers to read through.
    var readView: ReadView { ReadView(self) }
}

/// Whole objects through a read view, for workers on a table whose image
/// was checked throughout (`checkEverything`), so that reading changes nothing.
extension ObjectTable.ReadView: ObjectLookup {
    package func object(at row: RowID) -> StoredObject? { tableForLookup.object(at: row) }
    package func id(at row: RowID) -> String? { tableForLookup.id(at: row) }
    package func reference(at row: RowID) -> (entity: Int, id: String)? { tableForLookup.reference(at: row) }
}
