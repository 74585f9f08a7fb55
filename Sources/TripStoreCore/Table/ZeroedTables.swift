import TripStoreSystem

/// A table of byte-sized states from `ZeroedBytes`, freed with its owner:
/// a state per value of a million-value index costs a page only where a
/// command touches it.
final class ZeroedTable {
    let count: Int
    private let bytes: UnsafeMutablePointer<UInt8>

    init(count: Int) {
        self.count = max(0, count)
        bytes = ZeroedBytes.allocate(self.count)
    }

    deinit { ZeroedBytes.free(bytes) }

    var indices: Range<Int> { 0..<count }

    subscript(i: Int) -> UInt8 {
        get {
            precondition(i >= 0 && i < count, "state out of range")
            return bytes[i]
        }
        set {
            precondition(i >= 0 && i < count, "state out of range")
            bytes[i] = newValue
        }
    }
}
