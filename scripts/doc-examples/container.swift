// An open container and its model classes.
import TripStoreEngine

let models: ModelSchema = declared()
let container: ModelContainer = declared()
