// The first and third versions of the README's models.
import TripStoreEngine

let v1: ModelSchema = declared()
let v3: ModelSchema = declared()
