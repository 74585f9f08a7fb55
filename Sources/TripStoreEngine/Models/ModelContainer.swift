import TripStoreCore
import TripStoreFormat
import TripStoreJSON
/// A store opened for model classes: the folder and the model schema.
///
/// ```swift
/// let container = try ModelContainer(folder: "trips", models: ModelSchema([Trip.self, BusinessTrip.self]))
/// let context = ModelContext(container)
/// ```
public final class ModelContainer {
    /// The model classes.
    public let models: ModelSchema
    /// The open store (writing; it holds the lock while the container lives).
    public let store: Store

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
