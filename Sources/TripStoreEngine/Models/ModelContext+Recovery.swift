import TripStoreCore
import TripStoreFormat

/// Damage to the snapshot image found after the open. The image is a cache
/// checked a piece at a time as reads touch it (`ImageChecks.onFirstTouch`),
/// and a piece that fails reads as empty: the work that met it would answer
/// something wrong. The JSON files are the truth, so the container reads the
/// store again from them (`Store.reopenedFromJSON`), the objects the context
/// holds take the stored values where the program changed nothing (pending
/// changes stay), and the work runs once more. `container.warnings` then ends
/// with `StoreWarning.imageReadAgain`.
extension ModelContext {
    /// Runs `work`; when it met damage to the image (noted by a read, or
    /// thrown by a commit that refused), reads the store again from its JSON
    /// and runs it once more. Called with the container's lock held.
    func recoveringFromDamage<R>(_ work: () throws -> R) throws -> R {
        do {
            let result = try work()
            if store.imageDamage == nil { return result }
        } catch {
            guard store.imageDamage != nil || isImageDamage(error) else { throw error }
        }
        try readAgainAfterDamage()
        let result = try work()
        if let damage = store.imageDamage { throw StoreError.imageDamaged(file: store.imagePath, detail: damage) }
        return result
    }

    /// The container reads the store again from its JSON, and this context's
    /// objects take the values stored there (what the program changed stays).
    func readAgainAfterDamage() throws {
        if container.store.imageDamage != nil {
            try container.readAgainFromJSON()
        }
        for m in Array(identity.values) { refresh(m) }
    }

    /// After the container's store was read again: the row of each object
    /// this context read, looked up by id in the new store (a snapshot
    /// written meanwhile may have given it another). One that is gone gets
    /// a row past the table's, where every read checks the id and finds it
    /// is not there.
    func takeRowsFromNewStore() {
        storeGeneration = container.storeGeneration
        let table = container.store.table
        for id in Array(read.keys) {
            read[id]?.row = table.row(for: id) ?? RowID(table.rowCount)
        }
    }

    private func isImageDamage(_ error: any Error) -> Bool {
        if case StoreError.imageDamaged = error { return true }
        return false
    }
}
