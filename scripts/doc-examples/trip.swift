// A trip of the trip domain (the TripStoreModels product).
import TripStoreEngine
import TripStoreModels

nonisolated(unsafe) let trip: Trip = declared()
