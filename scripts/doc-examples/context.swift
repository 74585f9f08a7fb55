// An open container and a context on it.
import TripStoreEngine

nonisolated(unsafe) let models: ModelSchema = declared()
nonisolated(unsafe) let container: ModelContainer = declared()
nonisolated(unsafe) let context: ModelContext = declared()
