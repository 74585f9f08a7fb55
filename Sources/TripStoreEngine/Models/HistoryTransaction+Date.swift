import Foundation
import TripStoreFormat

extension HistoryTransaction {
    /// When it was committed (`timestamp` holds the same instant as seconds
    /// since 2001-01-01T00:00:00Z, which is what the files record).
    public var date: Date { Date(timeIntervalSinceReferenceDate: timestamp) }
}
