import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ObjectTable {
    // MARK: Finding by id

    package func row(for id: String) -> RowID? {
        let id = Identifier.normalized(id)
        if let r = sortedRow(for: id) { return r }
        extendLaterIDs()
        return laterIDs[id]
    }

    private func extendLaterIDs() {
        laterIDsCover = max(laterIDsCover, idOrderedRows)
        guard laterIDsCover < rowCount else { return }
        for i in laterIDsCover..<rowCount where rawEntity(i) >= 0 {
            laterIDs[RecordReader.idString(record(RowID(i)))] = RowID(i)
        }
        laterIDsCover = rowCount
    }

    /// The live row of an id among the id-ordered rows, by binary search.
    func sortedRow(for id: String) -> RowID? {
        var id = id
        return id.withUTF8 { key in sortedRow(UnsafeRawBufferPointer(key)) }
    }

    func sortedRow(_ key: UnsafeRawBufferPointer) -> RowID? {
        let k = ObjectTable.prefix(key)
        // The group whose rows may start the run of this prefix: the last one
        // that begins below it (the run may go on into the next ones).
        var lo = 0, hi = fences.count
        if let image {
            lo = image.groupsBelow(k)
        } else {
            while lo < hi {
                let mid = (lo + hi) / 2
                if fences[mid] < k { lo = mid + 1 } else { hi = mid }
            }
        }
        var i = max(0, lo - 1) << SnapshotImage.groupShift
        guard i < baseRows, prefixesAreSound(i) else { return nil }
        var stop = min(baseRows, i + SnapshotImage.groupSize)
        while i < stop {
            let mid = (i + stop) / 2
            if basePrefixes[mid] < k { i = mid + 1 } else { stop = mid }
        }
        while i < baseRows {
            checkedForAttributes(i)
            guard basePrefixes[i] == k else { return nil }
            if baseEntities[i] >= 0 && withID(RowID(i), { ObjectTable.equal($0, key) }) { return RowID(i) }
            i += 1
        }
        return nil
    }

    /// A `LoadHash` over the id-ordered rows.
    func loadHash() -> LoadHash { LoadHash(Array(UnsafeBufferPointer(start: basePrefixes, count: baseRows))) }
}

extension ObjectTable {
    /// Live ids that begin with `prefix`, in byte order, at most `limit`: a
    /// binary search among the id-ordered rows and a walk from there (rows
    /// not yet checked are checked as they are read); the few rows after
    /// them are scanned.
    func ids(withPrefix prefix: String, limit: Int) -> [String] {
        let key = Array(Identifier.normalized(prefix).utf8)
        func starts(_ id: UnsafeRawBufferPointer) -> Bool {
            id.count >= key.count && key.withUnsafeBytes { k in key.isEmpty || memcmp(id.baseAddress!, k.baseAddress!, key.count) == 0 }
        }
        var lo = 0, hi = idOrderedRows
        key.withUnsafeBytes { k in
            while lo < hi {
                let mid = (lo + hi) / 2
                checked(mid)
                if withID(RowID(mid), { ObjectTable.less($0, k) }) { lo = mid + 1 } else { hi = mid }
            }
        }
        var out: [String] = []
        var i = lo
        while i < idOrderedRows && out.count < limit {
            checked(i)
            guard withID(RowID(i), starts) else { break }
            if rawEntity(i) >= 0 { out.append(RecordReader.idString(record(RowID(i)))) }
            i += 1
        }
        for r in idOrderedRows..<rowCount where rawEntity(r) >= 0 && withID(RowID(r), starts) {
            out.append(RecordReader.idString(record(RowID(r))))
        }
        return Array(out.sorted(by: ObjectTable.byteLess).prefix(limit))
    }
}
