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

    private func mapped(_ n: Int) -> [RowID] {
        let g = n >> RelationshipLists.groupShift
        if let lists = copied[g] { return lists[n & (RelationshipLists.groupSize - 1)] }
        let lists = source?.copyListGroup(g) ?? []
        copied[g] = lists
        return n & (RelationshipLists.groupSize - 1) < lists.count ? lists[n & (RelationshipLists.groupSize - 1)] : []
    }
}
