@testable import TripStoreEngine

extension StoreError {
    /// The errors the command line reports as a damaged or unusable store (exit 2).
    var isDamage: Bool {
        switch self {
        case .damaged, .danglingReferences, .locked, .newerFormat, .schemaMismatch: return true
        default: return false
        }
    }
}
