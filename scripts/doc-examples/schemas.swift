// The schema a store records and the one a program brings.
import TripStoreEngine

let stored: Schema = declared()
let next: Schema = declared()
