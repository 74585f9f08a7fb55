// A context on a container.
import TripStoreEngine

nonisolated(unsafe) let context: ModelContext = declared()
