import TripStoreCore
import TripStoreFormat
import TripStoreJSON
/// The base class of model objects, as SwiftData's `@Model` classes are.
///
/// A model class stores each persistent property in a model field
/// (`@Attribute`, `@Relationship`) and declares the properties it adds once,
/// in `properties`; subclasses call `super.init()` and declare only their
/// own properties.
///
/// ```swift
/// class Trip: PersistentModel {
///     @Attribute var name = ""
///     @Attribute var destination = ""
///     @Relationship var bucketList: [BucketListItem] = []
///     override class var properties: [ModelProperty] {
///         [.attribute("name", \Trip.name, options: [.indexed]), .attribute("destination", \Trip.destination),
///          .toMany("bucketList", \Trip.bucketList, inverse: "trip", deleteRule: .cascade)]
///     }
/// }
/// final class BusinessTrip: Trip {
///     @Attribute var perDiemRate = 0.0
///     override class var properties: [ModelProperty] { [.attribute("perDiemRate", \BusinessTrip.perDiemRate)] }
/// }
/// ```
///
/// Models are not `Sendable`: a `ModelContext` confines them.
open class PersistentModel {
    /// The persistent identifier: the envelope's `id`.
    public internal(set) var persistentModelID: String

    /// The context that inserted or fetched the object (nil before `insert`);
    /// its unloaded properties load through it.
    public internal(set) var modelContext: ModelContext?

    /// True once the object is deleted: by `delete` (until a rollback), by a
    /// save's cascade, or by another save (found by `refresh`). A deleted
    /// object that a relationship still reaches is never written back.
    public internal(set) var isDeleted = false

    /// For an object another save deleted: the conflict a save that still
    /// reaches it reports.
    var deletedElsewhere: StoreConflict?

    /// A new object with a new UUID as its id.
    public required init() {
        persistentModelID = EnvelopeDecoder.newID()
    }

    /// The properties this class declares (not the inherited ones), in order.
    /// A subclass that adds no stored property need not override it.
    open class var properties: [ModelProperty] { [] }

    /// Stored properties of this class that are deliberately not saved
    /// (SwiftData's `@Transient`); any other undeclared stored property is an error.
    open class var transientProperties: [String] { [] }

    /// The entity name: the type tag in envelopes. The class name by default.
    open class var entityName: String { String(describing: self) }
    /// The entity's name in the store before a migration renamed it (nil: not renamed).
    open class var originalEntityName: String? { nil }
}
