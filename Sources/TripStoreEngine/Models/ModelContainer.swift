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
    /// Read it under `lock`: after damage to the image it is replaced by the
    /// store read again from the JSON.
    package var store: Store { shared.store }
    /// How many times the store was read again from its JSON (see `store`).
    var storeGeneration: Int { shared.generation }
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

    /// Notes worth showing a person that did not stop the work: a torn
    /// journal tail that was ignored, an automatic snapshot that failed,
    /// damage to the image after which the store was read again from its
    /// JSON (`StoreWarning.imageReadAgain`, which took as long as opening
    /// without the image: tens of seconds at a million objects).
    public var warnings: [StoreWarning] { withStore { $0.warnings } }

    /// Reads the store again from its JSON files after damage to its image
    /// (see `Store.reopenedFromJSON`); the contexts on it go on with the new
    /// one, each taking in the rows of the objects it holds at its next use.
    /// Called with `lock` held.
    func readAgainFromJSON() throws {
        shared.store = try shared.store.reopenedFromJSON()
        shared.generation += 1
    }

    /// Closes this container: its contexts then throw
    /// `StoreError.containerClosed` at their next fetch or save. When it is
    /// the last open container on its folder in this process, the store
    /// closes too: a snapshot being written in the background is put in
    /// place, and the writer's lock is released, so another process may
    /// write. Closing twice does nothing; a container that goes out of use
    /// closes by itself.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return }
        isClosed = true
        shared.release()
    }

    /// Set by `close()` (under `lock`).
    private(set) var isClosed = false

    /// Throws when this container was closed (the store may still be open for others).
    func checkOpen() throws {
        if isClosed { throw StoreError.containerClosed }
    }

    deinit {
        lock.lock()
        defer { lock.unlock() }
        if !isClosed { shared.release() }
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
        lock = shared.lock
    }

    /// A container on a store of its own (time travel's read-only past);
    /// `closing: false` leaves the store open when the container goes (a
    /// migration stage's context, whose store the stage goes on with).
    init(models: ModelSchema, unshared store: Store, closing: Bool = true) {
        self.models = models
        shared = SharedStore(store: store, closing: closing)
        shared.retain()
        lock = shared.lock
    }
}

/// One open store per folder in a process. Model objects hold their context
/// and related objects hold each other (as in Core Data), so a container can
/// outlive its last use; a new container on the same folder then shares its
/// store instead of finding it locked by its own process.
final class SharedStore: @unchecked Sendable {
    /// Replaced (under `lock`) only by `ModelContainer.readAgainFromJSON`.
    var store: Store
    var generation = 0
    let lock = NSRecursiveLock()
    private let closing: Bool
    /// Containers on it not yet closed (under `lock`); the last one's `close()` closes the store.
    private var users = 0

    init(store: Store, closing: Bool = true) {
        self.store = store
        self.closing = closing
    }

    /// A container starts using it; false when the store closed meanwhile
    /// (the last container's `close()` ran first) or has another schema
    /// (`fingerprint`, when given), so a new one is opened.
    @discardableResult
    func retain(fingerprint: String? = nil) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard store.state != .closed, fingerprint.map({ $0 == store.schema.fingerprint }) ?? true else { return false }
        users += 1
        return true
    }

    /// A container closed: the store closes with the last one (called under `lock`).
    func release() {
        users -= 1
        if users == 0 && closing && store.state != .closed { store.close() }
    }

    deinit {
        if closing && store.state != .closed { store.close() }
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
        if let open = registry[key]?.shared, open.retain(fingerprint: schema.fingerprint) {
            return open
        }
        let shared = SharedStore(store: try Store.open(folder, schema: schema, access: .write, options: options))
        shared.retain()
        registry = registry.filter { $0.value.shared != nil }
        registry[key] = Entry(shared: shared)
        return shared
    }
}
