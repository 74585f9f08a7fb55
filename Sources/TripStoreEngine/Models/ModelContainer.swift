import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation
// Sendable: `models` is immutable, and the store is only used under `lock`
// (every context operation takes it), so contexts in different isolation
// domains can share one container.
/// A store opened for model classes: the folder and the model schema.
/// `Sendable`: contexts on any actor share it, taking turns with the store.
///
/// ```swift
/// let container = try ModelContainer(folder: "trips", models: ModelSchema([Trip.self, BusinessTrip.self]))
/// let context = ModelContext(container)
/// ```
public final class ModelContainer: @unchecked Sendable {
    /// The model classes.
    public let models: ModelSchema
    /// The open store (writing; it holds the lock while the container lives).
    /// Use it directly only where no context on another actor runs, or inside `withStore`.
    public let store: Store
    /// Serialises the contexts' use of the store.
    let lock = NSRecursiveLock()

    /// Runs `body` with the store while no context uses it.
    public func withStore<R>(_ body: (Store) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(store)
    }

    /// Opens (or creates) the store in `folder` for these models.
    ///
    /// - Throws: `StoreError` when the store is damaged, locked by another
    ///   writer, of a newer format, or of a schema that differs other than by
    ///   additions; `IOError` when the folder cannot be created.
    public init(folder: String, models: ModelSchema, options: StoreOptions = StoreOptions()) throws {
        self.models = models
        self.store = try Store.open(folder, schema: models.schema, access: .write, options: options)
    }
}
