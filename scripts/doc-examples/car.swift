// A `Car` between `Vehicle` and nothing else, and an owner to insert.
import TripStoreEngine

class Car: Vehicle {}
nonisolated(unsafe) let owner: Owner = declared()
