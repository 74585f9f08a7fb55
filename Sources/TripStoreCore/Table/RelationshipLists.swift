import TripStoreFormat
import TripStoreSystem

/// Where a table's lists come from until a process changes them: a
/// snapshot image, or the lists a bulk import built end to end.
protocol ListSource: AnyObject {
    /// Lists `0..<listCount`.
    var listCount: Int { get }
    /// The lists of group `g` as arrays (checked first where that is needed).
    func copyListGroup(_ g: Int) -> [[RowID]]
    /// List `n` where it can be read in place, with nothing to check first; nil otherwise.
    func list(_ n: Int) -> UnsafeBufferPointer<RowID>?
}

/// The to-many relationship lists of a table; a record's to-many slot holds a
/// list number. List 0 is the shared empty list, never changed in place.
///
/// Lists that came from a snapshot image stay in the mapped file until a
/// process reads one: then its group of `groupSize` lists is checked against
/// its checksum and copied out as arrays. A process that answers `get ID`
/// copies a group or two, not every list of the store. Lists a bulk import
/// built stay end to end (`BuiltLists`) until one of their group changes:
/// millions of small arrays cost more to make and free than to write.
final class RelationshipLists {
    static let groupShift = SnapshotImage.groupShift
    static let groupSize = SnapshotImage.groupSize

    /// Lists kept in the source: numbers `0..<mappedCount`.
    private(set) var mappedCount = 0
    /// Per group of the source's lists, 0 while it is only in the source,
    /// else 1 + where its arrays are in `copied`. A table of zeros from the
    /// kernel: a cold command copies a group or two of thousands, and pays
    /// for the pages of the table it touches, not for zeroing all of it.
    @exclusivity(unchecked) private var copiedAt = ZeroedBytes.allocate(4)
    /// The groups copied out of the source, each its lists' arrays.
    @exclusivity(unchecked) private var copied: [[[RowID]]] = []
    private var source: (any ListSource)?
    /// Lists made in this process (or all of them, for a store read from JSON): numbers from `mappedCount`.
    @exclusivity(unchecked) private var made: [[RowID]] = [[]]
    /// Lists of the source a journal's replay state holds anew (see
    /// `adoptReplayed`): read in their place, and the group stays uncopied.
    private var replaced: [Int: [RowID]] = [:]
    /// The source's lists this process changed or took anew, for a journal's
    /// replay state written anew (`changedOrMadeLists`).
    private var changedInSource = Set<Int>()
    /// The lists changed or made since `takeChanged`, while a journal's replay state is kept.
    private var changedSinceTaken: Set<Int>?

    /// The number of lists (one past the highest list number).
    var count: Int { mappedCount + made.count }

    /// Takes the lists of an image, or those a bulk import built (the table
    /// holds no list but the shared empty one, which the source has as list 0).
    func adopt(_ source: any ListSource) {
        self.source = source
        mappedCount = source.listCount
        ZeroedBytes.free(copiedAt)
        copiedAt = ZeroedBytes.allocate(4 * ((mappedCount + RelationshipLists.groupSize - 1) >> RelationshipLists.groupShift))
        copied = []
        made = []
        replaced = [:]
        changedInSource = []
    }

    /// Takes the lists a journal's replay state holds: those of the source
    /// it changed, and the lists made after them, every one in number order
    /// (the table holds none made yet).
    func adoptReplayed(_ records: ReplayedRecords) {
        precondition(made.isEmpty)
        for l in records.lists {
            let n = Int(l.number)
            if n < mappedCount {
                replaced[n] = records.rows(of: l)
                changedInSource.insert(n)
            } else {
                made.append(records.rows(of: l))
            }
        }
    }

    /// From now on, notes the lists changed or made, for `takeChanged`.
    func noteChanges() {
        if changedSinceTaken == nil { changedSinceTaken = [] }
    }

    /// The lists changed or made since the last call, in number order.
    func takeChanged() -> [Int] {
        defer { if changedSinceTaken != nil { changedSinceTaken = [] } }
        return (changedSinceTaken ?? []).sorted()
    }

    /// Every list a journal's replay state written anew holds: the source's
    /// lists changed since it was adopted, and every list made, in number order.
    var changedOrMadeLists: [Int] { changedInSource.sorted() + Array(mappedCount..<count) }

    subscript(n: Int) -> [RowID] {
        @inline(__always) get {
            if n >= mappedCount { return made[n - mappedCount] }
            if !replaced.isEmpty, let list = replaced[n] { return list }
            // Read in place where that needs no check: reading changes nothing, so workers may read at once.
            if isInSource(n), let list = source?.list(n) { return Array(list) }
            return mapped(n)
        }
        set {
            changedSinceTaken?.insert(n)
            if n >= mappedCount {
                made[n - mappedCount] = newValue
                return
            }
            changedInSource.insert(n)
            if replaced[n] != nil {
                replaced[n] = newValue
                return
            }
            _ = mapped(n)
            copied[copiedIndex(n >> RelationshipLists.groupShift) - 1][n & (RelationshipLists.groupSize - 1)] = newValue
        }
    }

    /// `body` with list `n`, without an array where it is still in place.
    @inline(__always) func withList<R>(_ n: Int, _ body: (UnsafeBufferPointer<RowID>) -> R) -> R {
        if n >= mappedCount { return made[n - mappedCount].withUnsafeBufferPointer(body) }
        if !replaced.isEmpty, let list = replaced[n] { return list.withUnsafeBufferPointer(body) }
        if isInSource(n), let list = source?.list(n) { return body(list) }
        return mapped(n).withUnsafeBufferPointer(body)
    }

    /// The built lists, where they are every list and none has changed: a
    /// flat copy of them would be the same bytes.
    fileprivate var unchangedBuiltLists: BuiltLists? {
        guard made.isEmpty, let built = source as? BuiltLists, copied.isEmpty, replaced.isEmpty else { return nil }
        return built
    }

    /// Whether list `n` holds exactly `rows` (read in place where it can be).
    func holds(_ n: Int, _ rows: [RowID]) -> Bool {
        withList(n) { $0.elementsEqual(rows) }
    }

    /// Adds a list; its number.
    @discardableResult
    func append(_ list: [RowID]) -> Int {
        made.append(list)
        changedSinceTaken?.insert(count - 1)
        return count - 1
    }

    /// Whether list `n`'s group is still only in the source (not copied out).
    @inline(__always) private func isInSource(_ n: Int) -> Bool {
        copiedIndex(n >> RelationshipLists.groupShift) == 0
    }

    /// `copiedAt`'s entry for group `g` (of the source's, below `mappedCount`).
    @inline(__always) private func copiedIndex(_ g: Int) -> Int {
        Int(UnsafeRawPointer(copiedAt).load(fromByteOffset: 4 * g, as: Int32.self))
    }

    deinit { ZeroedBytes.free(copiedAt) }

    private func mapped(_ n: Int) -> [RowID] {
        let g = n >> RelationshipLists.groupShift
        let at = copiedIndex(g)
        if at != 0 { return copied[at - 1][n & (RelationshipLists.groupSize - 1)] }
        let lists = source?.copyListGroup(g) ?? []
        copied.append(lists)
        UnsafeMutableRawPointer(copiedAt).storeBytes(of: Int32(copied.count), toByteOffset: 4 * g, as: Int32.self)
        return n & (RelationshipLists.groupSize - 1) < lists.count ? lists[n & (RelationshipLists.groupSize - 1)] : []
    }
}

/// Lists laid end to end, as a bulk import builds them: list `n` is
/// `elements[starts[n]..<starts[n + 1]]`, list 0 empty.
final class BuiltLists: ListSource {
    let listCount: Int
    fileprivate let starts: UnsafeMutablePointer<Int>
    fileprivate let elements: UnsafeMutablePointer<RowID>

    /// Takes over `starts` (`listCount + 1` of them, from 0) and `elements`, allocated by the caller.
    init(listCount: Int, starts: UnsafeMutablePointer<Int>, elements: UnsafeMutablePointer<RowID>) {
        self.listCount = listCount
        self.starts = starts
        self.elements = elements
    }

    deinit {
        starts.deallocate()
        elements.deallocate()
    }

    @inline(__always) func list(_ n: Int) -> UnsafeBufferPointer<RowID>? {
        UnsafeBufferPointer(start: elements + starts[n], count: starts[n + 1] - starts[n])
    }

    func copyListGroup(_ g: Int) -> [[RowID]] {
        let first = g << SnapshotImage.groupShift, stop = min(listCount, first + SnapshotImage.groupSize)
        return (first..<stop).map { Array(UnsafeBufferPointer(start: elements + starts[$0], count: starts[$0 + 1] - starts[$0])) }
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
    /// Lists a bulk import built, unchanged: shared, not copied (they never change in place).
    private let shared: BuiltLists?

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

    /// How many lists there are, the empty one (number 0) among them.
    var listCount: Int { count }
    /// How many elements all of them hold.
    var elementCount: Int { starts[count] }

    init(_ lists: RelationshipLists) {
        if let built = lists.unchangedBuiltLists {
            (starts, elements, count, shared) = (built.starts, built.elements, built.listCount, built)
            return
        }
        shared = nil
        let count = lists.count
        self.count = count
        starts = .allocate(capacity: count + 1)
        var total = 0
        for n in 0..<count {
            starts[n] = total
            total += lists.withList(n) { $0.count }
        }
        starts[count] = total
        elements = .allocate(capacity: max(1, total))
        for n in 0..<count {
            lists.withList(n) { list in
                if let base = list.baseAddress { (elements + starts[n]).initialize(from: base, count: list.count) }
            }
        }
    }

    deinit {
        guard shared == nil else { return }
        starts.deallocate()
        elements.deallocate()
    }

    var view: View { View(starts: starts, elements: elements, count: count) }
}
