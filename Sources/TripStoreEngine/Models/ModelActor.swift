import TripStoreCore
import Foundation

/// Work with models in the background, as SwiftData's `@ModelActor` gives:
/// an actor that owns a context on a shared container. Without a macro, the
/// actor declares the two properties itself.
///
/// ```swift
/// actor Importer: ModelActor {
///     let modelContainer: ModelContainer
///     let modelContext: ModelContext
///     init(modelContainer: ModelContainer) {
///         self.modelContainer = modelContainer
///         self.modelContext = ModelContext(modelContainer)
///     }
///     func addTrips(_ names: [String]) throws {
///         for n in names { modelContext.insert(Trip(name: n, destination: "", startDate: .now, endDate: .now)) }
///         try modelContext.save(author: "importer")
///     }
/// }
/// let importer = Importer(modelContainer: container)
/// try await importer.addTrips(["Rome", "Oslo"])
/// ```
public protocol ModelActor: Actor {
    /// The shared container.
    nonisolated var modelContainer: ModelContainer { get }
    /// This actor's own context.
    var modelContext: ModelContext { get }
}
