import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// How a store moves from one version of an app's models to the next
/// (SwiftData's `SchemaMigrationPlan`): stages in order, each from one
/// `ModelSchema` to the next.
///
/// ```swift
/// let plan = MigrationPlan([
///     .lightweight(from: PeopleV1.models, to: PeopleV2.models),
///     .custom(from: PeopleV2.models, to: PeopleV3.models, willMigrate: { old in
///         for p in try old.fetch(FetchDescriptor<PeopleV2.Person>()) { p.last = p.name.split(separator: " ").last.map(String.init) }
///         try old.save()
///     }),
/// ])
/// let container = try ModelContainer(folder: "people", models: PeopleV3.models, migrationPlan: plan)
/// ```
///
/// Each stage is one `migrate` transaction (and the saves of its closures
/// their own): a store whose plan was cut short by a crash is at one of the
/// versions, and the next open goes on from there.
public struct MigrationPlan: Sendable {
    /// One step from a version to the next.
    public enum Stage: Sendable {
        /// Renames (from `originalName`), additions, removals and the other
        /// lightweight changes, with nothing to run.
        case lightweight(from: ModelSchema, to: ModelSchema)
        /// A lightweight migration with work around it: `willMigrate` gets a
        /// context on the old schema before it, `didMigrate` one on the new
        /// schema after it (changes are saved when the closure returns).
        case custom(from: ModelSchema, to: ModelSchema,
                    willMigrate: (@Sendable (ModelContext) throws -> Void)? = nil,
                    didMigrate: (@Sendable (ModelContext) throws -> Void)? = nil)

        var from: ModelSchema {
            switch self {
            case .lightweight(let from, _), .custom(let from, _, _, _): return from
            }
        }

        var to: ModelSchema {
            switch self {
            case .lightweight(_, let to), .custom(_, let to, _, _): return to
            }
        }
    }

    /// The stages, oldest version first.
    public var stages: [Stage]
    /// The name the migrations are recorded under in history.
    public var author: String

    /// A plan of these stages.
    public init(_ stages: [Stage], author: String = "migration") {
        self.stages = stages
        self.author = author
    }

    /// Brings the store in `folder` to `models` before a container opens
    /// it: the plan's stages from the store's version on, then a
    /// lightweight migration for what remains. A store of additions only
    /// opens as it is; a later version than `models` is refused.
    static func prepare(folder: String, models: ModelSchema, plan: MigrationPlan?, options: StoreOptions) throws {
        guard var recorded = try Store.recordedSchema(in: folder), !SchemaMigration(from: recorded, to: models.schema).isEmpty else { return }
        if let stored = recorded.version, let program = models.version, compareVersions(stored, program) == .orderedDescending {
            throw StoreError.newerSchema(store: stored, program: program)
        }
        let stages = plan?.stages ?? []
        let author = plan?.author ?? "migration"
        // Whether the store is at `schema`: the same version where both say
        // one, else the same shape with no rename left to apply (two
        // versions that swap two names have one shape).
        func isAt(_ schema: Schema) -> Bool {
            if let v = recorded.version, let w = schema.version { return v == w }
            return SchemaMigration(from: recorded, to: schema).isEmpty
        }
        // A stage the store has reached first, so that a stage whose shape
        // equals its source's never runs twice.
        let next = stages.lastIndex(where: { isAt($0.to.schema) }).map { $0 + 1 } ?? stages.firstIndex(where: { isAt($0.from.schema) })
        if let next {
            for stage in stages[next...] {
                try run(stage, folder: folder, options: options, author: author)
                recorded = stage.to.schema
            }
        }
        let rest = SchemaMigration(from: recorded, to: models.schema)
        // Additions alone open as they are; anything else (a rename
        // included, even one that keeps the shape) is migrated.
        guard !rest.renames.isEmpty || (!rest.isEmpty
              && !SchemaCompatibility.differences(stored: recorded.descriptions, current: models.schema.descriptions).isEmpty) else { return }
        let store = try Store.open(folder, schema: recorded, access: .write, options: options)
        defer { store.close() }
        let done = try Migrator(store).migrate(to: models.schema, author: author)
        done.store.close()
    }

    private static func run(_ stage: Stage, folder: String, options: StoreOptions, author: String) throws {
        var will: (@Sendable (ModelContext) throws -> Void)?
        var did: (@Sendable (ModelContext) throws -> Void)?
        if case .custom(_, _, let w, let d) = stage { (will, did) = (w, d) }
        var store = try Store.open(folder, schema: stage.from.schema, access: .write, options: options)
        defer { store.close() }
        if let will { try withContext(on: store, models: stage.from, author: author, will) }
        if !SchemaMigration(from: stage.from.schema, to: stage.to.schema).isEmpty {
            let done = try Migrator(store).migrate(to: stage.to.schema, author: author)
            store = done.store
        }
        if let did { try withContext(on: store, models: stage.to, author: author, did) }
    }

    private static func withContext(on store: Store, models: ModelSchema, author: String,
                                    _ body: (ModelContext) throws -> Void) throws {
        let context = ModelContext(ModelContainer(models: models, unshared: store, closing: false))
        try body(context)
        if context.hasChanges { _ = try context.save(author: author) }
    }

    /// Dotted versions compare number by number ("1.10" after "1.9"); other text as text.
    static func compareVersions(_ a: String, _ b: String) -> ComparisonResult {
        let x = a.split(separator: "."), y = b.split(separator: ".")
        let xs = x.compactMap { Int($0) }, ys = y.compactMap { Int($0) }
        guard xs.count == x.count, ys.count == y.count else { return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending) }
        for i in 0..<max(xs.count, ys.count) {
            let p = i < xs.count ? xs[i] : 0, q = i < ys.count ? ys[i] : 0
            if p != q { return p < q ? .orderedAscending : .orderedDescending }
        }
        return .orderedSame
    }
}
