import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation
// Sendable: `models` is immutable, and the store is only used under `lock`
// (every context operation and `withStore` take it, and no public member
// hands the store out), so contexts in different isolation domains can
// share one container.
/// A store opened for model classes: the folder and the model schema.
/// `Sendable`: contexts on any actor or thread share it, taking turns with
/// the store under the container's lock (see "Threads and actors" in
/// `docs/library.md`).
///
/// ```swift
/// let container = try ModelContainer(folder: "trips", models: ModelSchema([Trip.self, BusinessTrip.self]))
/// let context = ModelContext(container)
/// ```
public final class ModelContainer: @unchecked Sendable {
    /// The model classes.
    public let models: ModelSchema
    /// The open store (writing; it holds the writer's lock while the
    /// container lives). A `Store` belongs to one thread at a time, so the
    /// container never hands it out: a program reaches it inside `withStore`.
    package let store: Store
    /// Serialises the contexts' use of the store (shared by every container on it).
    let lock: NSRecursiveLock
    /// The open store this container shares with other containers on the same folder in this process.
    private let shared: SharedStore

    /// Runs `body` with the store while no context uses it: the one way to
    /// the `Store` API (queries by text, the bulk importer, the feed) from a
    /// container that contexts on other threads share. Keep the store inside
    /// `body`: used after it returns, it races with those contexts.
    public func withStore<R>(_ body: (Store) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(store)
    }

    /// Closes the store: a snapshot being written in the background is put
    /// in place, and the writer's lock is released, so another process (or
    /// a new container) may write. Contexts on this container then throw
    /// `StoreError.closed` at their next fetch or save. Closing twice does
    /// nothing; a container that goes out of use closes by itself.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        if store.state != .closed { store.close() }
    }

    /// Opens (or creates) the store in `folder` for these models. A store of
    /// an earlier schema is migrated first: by the stages of `migrationPlan`
    /// from the store's version on, then by a lightweight migration for
    /// what remains (without a plan, lightweight changes only); a store of
    /// only additions opens as it is.
    ///
    /// - Throws: `StoreError` when the store is damaged, locked by another
    ///   writer, of a newer format, of a later schema version
    ///   (`.newerSchema`), or of a schema a migration cannot reach
    ///   (`.migrationRefused`); `IOError` when the folder cannot be created.
    ///
    /// Containers on the same folder in one process share one open store (a
    /// store has one writer), as long as their schemas are the same.
    public init(folder: String, models: ModelSchema, migrationPlan: MigrationPlan? = nil,
                options: StoreOptions = StoreOptions()) throws {
        try MigrationPlan.prepare(folder: folder, models: models, plan: migrationPlan, options: options)
        self.models = models
        shared = try SharedStore.open(folder, schema: models.schema, options: options)
        store = shared.store
        lock = shared.lock
    }

    /// A container on a store of its own (time travel's read-only past);
    /// `closing: false` leaves the store open when the container goes (a
    /// migration stage's context, whose store the stage goes on with).
    init(models: ModelSchema, unshared store: Store, closing: Bool = true) {
        self.models = models
        shared = SharedStore(store: store, closing: closing)
        self.store = store
        lock = shared.lock
    }
}

/// One open store per folder in a process. Model objects hold their context
/// and related objects hold each other (as in Core Data), so a container can
/// outlive its last use; a new container on the same folder then shares its
/// store instead of finding it locked by its own process.
final class SharedStore: @unchecked Sendable {
    package let store: Store
    let lock = NSRecursiveLock()
    private let closing: Bool

    init(store: Store, closing: Bool = true) {
        self.store = store
        self.closing = closing
    }

    deinit {
        if closing { store.close() }
    }

    private struct Entry {
        weak var shared: SharedStore?
    }

    // Guarded by `registryLock`.
    nonisolated(unsafe) private static var registry: [String: Entry] = [:]
    private static let registryLock = NSLock()

    static func open(_ folder: String, schema: Schema, options: StoreOptions) throws -> SharedStore {
        let key = URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path
        registryLock.lock()
        defer { registryLock.unlock() }
        if let open = registry[key]?.shared, open.store.state != .closed, open.store.schema.fingerprint == schema.fingerprint {
            return open
        }
        let shared = SharedStore(store: try Store.open(folder, schema: schema, access: .write, options: options))
        registry = registry.filter { $0.value.shared != nil }
        registry[key] = Entry(shared: shared)
        return shared
    }
}
