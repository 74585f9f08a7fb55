import TripStoreFormat
import TripStoreSystem

/// The to-many relationship lists of a table; a record's to-many slot holds a
/// list number. List 0 is the shared empty list, never changed in place.
///
/// Lists that came from a snapshot image stay in the mapped file until a
/// process reads one: then its group of `groupSize` lists is checked against
/// its checksum and copied out as arrays. A process that answers `get ID`
/// copies a group or two, not every list of the store.
final class RelationshipLists {
    static let groupShift = SnapshotImage.groupShift
    static let groupSize = SnapshotImage.groupSize

    /// Lists kept in the image: numbers `0..<mappedCount`.
    private(set) var mappedCount = 0
    /// Per group of mapped lists, its arrays once read (nil: still in the file).
    @exclusivity(unchecked) private var copied: [[[RowID]]?] = []
    private var source: MappedImage?
    /// Lists made in this process (or all of them, for a store read from JSON): numbers from `mappedCount`.
    @exclusivity(unchecked) private var made: [[RowID]] = [[]]

    /// The number of lists (one past the highest list number).
    var count: Int { mappedCount + made.count }

    /// Takes the image's lists (the table is empty).
    func adopt(_ image: MappedImage) {
        source = image
        mappedCount = image.listCount
        copied = Array(repeating: nil, count: (mappedCount + RelationshipLists.groupSize - 1) >> RelationshipLists.groupShift)
        made = []
    }

    subscript(n: Int) -> [RowID] {
        @inline(__always) get {
            if n >= mappedCount { return made[n - mappedCount] }
            return mapped(n)
        }
        set {
            if n >= mappedCount {
                made[n - mappedCount] = newValue
                return
            }
            _ = mapped(n)
            copied[n >> RelationshipLists.groupShift]![n & (RelationshipLists.groupSize - 1)] = newValue
        }
    }

    /// Adds a list; its number.
    @discardableResult
    func append(_ list: [RowID]) -> Int {
        made.append(list)
        return count - 1
    }

    /// Adds `k` empty lists, to be set by number; the first one's number.
    func appendEmpty(_ k: Int) -> Int {
        let first = count
        made.append(contentsOf: repeatElement([], count: k))
        return first
    }

    private func mapped(_ n: Int) -> [RowID] {
        let g = n >> RelationshipLists.groupShift
        if let lists = copied[g] { return lists[n & (RelationshipLists.groupSize - 1)] }
        let lists = source?.copyListGroup(g) ?? []
        copied[g] = lists
        return n & (RelationshipLists.groupSize - 1) < lists.count ? lists[n & (RelationshipLists.groupSize - 1)] : []
    }
}

/// Every list of a table laid end to end in memory of its own, for workers
/// that read many lists at once (a snapshot's encoders): reading one costs
/// no reference count, where two cores counting references to the same
/// arrays would contend for them. A copy; the table's lists stay the truth.
final class FlatLists: @unchecked Sendable {
    private let starts: UnsafeMutablePointer<Int>
    private let elements: UnsafeMutablePointer<RowID>
    private let count: Int

    /// Pointers into the copy, valid while it lives: a plain value that
    /// workers pass around without counting references.
    struct View: @unchecked Sendable {
        fileprivate let starts: UnsafePointer<Int>
        fileprivate let elements: UnsafePointer<RowID>
        fileprivate let count: Int

        /// List `n` (a number the table's records hold); empty for a number
        /// past the lists, which only a damaged record could hold.
        @inline(__always) subscript(n: Int) -> UnsafeBufferPointer<RowID> {
            guard n >= 0 && n < count else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(start: elements + starts[n], count: starts[n + 1] - starts[n])
        }
    }

    init(_ lists: RelationshipLists) {
        let count = lists.count
        self.count = count
        starts = .allocate(capacity: count + 1)
        var total = 0
        for n in 0..<count {
            starts[n] = total
            total += lists[n].count
        }
        starts[count] = total
        elements = .allocate(capacity: max(1, total))
        for n in 0..<count {
            lists[n].withUnsafeBufferPointer { list in
                if let base = list.baseAddress { (elements + starts[n]).initialize(from: base, count: list.count) }
            }
        }
    }

    deinit {
        starts.deallocate()
        elements.deallocate()
    }

    var view: View { View(starts: starts, elements: elements, count: count) }
}
