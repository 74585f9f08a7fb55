// A schema and the bytes of a file of envelopes.
import TripStoreEngine

let schema: Schema = declared()
let bytes: [UInt8] = declared()
