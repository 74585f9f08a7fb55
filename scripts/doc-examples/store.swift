// A store opened with the `Store` API.
import TripStoreEngine

nonisolated(unsafe) let store: Store = declared()
