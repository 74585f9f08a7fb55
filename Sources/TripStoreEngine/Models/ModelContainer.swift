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
    public let models: ModelSchema
    public let store: Store

    public init(folder: String, models: ModelSchema, options: StoreOptions = StoreOptions()) throws {
        self.models = models
        self.store = try Store.open(folder, schema: models.schema, access: .write, options: options)
    }
}
