import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

extension StoreLoader {
    /// Loads a snapshot the slow, forgiving way: every line read as JSON after
    /// the whole checksum matched, references to missing objects left out and
    /// listed in `danglingReferences`. Any other damage is still damage.
    func loadSnapshotSalvaging(_ token: Int64) throws {
        let path = store.files.snapshot(token)
        let fd = try FileIO.openRegular(path)
        var keepOpen = false
        defer { if !keepOpen { FileIO.close(fd) } }
        let size = try FileIO.size(fd, path: path)
        let trailer = try StoreLoader.readTrailer(fd, size: size, path: path)
        func damaged(_ line: Int?, _ detail: String) -> StoreError {
            .damaged(file: path, line: line, detail: detail, repairable: false)
        }
        var bytes = [UInt8](repeating: 0, count: trailer.start)
        guard bytes.withUnsafeMutableBytes({ FileIO.read(fd, into: $0, at: 0) }) == trailer.start else {
            throw damaged(nil, "the snapshot could not be read to its end")
        }
        let trailerTime = try trailer.check(bodyCRC: bytes.withUnsafeBytes { CRC32C.checksum($0) }, path: path)
        var lines: [Range<Int>] = []
        var start = 0
        for i in bytes.indices where bytes[i] == 0x0A {
            lines.append(start..<i)
            start = i + 1
        }
        guard start == bytes.count, lines.count == 1 + trailer.objects + trailer.history else {
            throw damaged(nil, "the trailer counts \(trailer.objects) objects and \(trailer.history) transactions, the file holds \(max(0, lines.count - 1)) lines")
        }
        func parse(_ k: Int) throws -> JSONValue {
            do {
                return try JSONReader.parse(Array(bytes[lines[k]]))
            } catch {
                throw damaged(k + 1, "\(error)")
            }
        }
        let headerStart = try readHeaderStart(fd, path: path)
        try StoreLoader.checkLastCommitIsSaid(headerStart, trailer, path: path)
        try checkHeader(try parse(0), start: headerStart, path: path, token: token)
        var envelopes: [JSONValue] = []
        envelopes.reserveCapacity(trailer.objects)
        var ids = Set<String>()
        for k in 0..<trailer.objects {
            let v = try parse(k + 1)
            if case .string(let id)? = v["id"] { ids.insert(id) }
            envelopes.append(v)
        }
        var decoder = EnvelopeDecoder(schema: store.schema)
        decoder.bareReferences = true
        var pending: [(RowID, [PendingLink])] = []
        for (k, envelope) in envelopes.enumerated() {
            let cleaned = withoutDanglingReferences(envelope, file: path, line: k + 2) { ids.contains($0) }
            var decoded: [DecodedObject] = []
            do {
                try decoder.decode(cleaned, at: .line(k + 2), into: &decoded)
            } catch {
                throw damaged(k + 2, "\(error)")
            }
            guard decoded.count == 1, let d = decoded.first else {
                throw damaged(k + 2, "a snapshot line holds one object, not inline related objects")
            }
            let row = store.table.append(StoredObject(entity: d.entity, id: d.id, values: d.values))
            store.indexes.appendType(row, d.entity)
            if !d.links.isEmpty { pending.append((row, d.links)) }
        }
        if let bad = store.table.adoptSnapshotOrder() {
            throw damaged(bad + 2, "objects are not in strictly increasing id order (a duplicate or misplaced id)")
        }
        try resolveSnapshotLinks(pending, file: path)
        if trailer.history > 0 {
            store.historyLog.pending = (fd, lines[1 + trailer.objects].lowerBound..<trailer.start, 2 + trailer.objects, path)
            keepOpen = true
        }
        store.historyLog.snapshotCount = trailer.history
        // The repair's snapshot keeps the oldest reachable state's time, as any other does.
        store.historyLog.oldestReachableCommit = headerStart?.oldestReachableCommit
        store.historyLog.snapshotLastCommit = headerStart?.lastCommit ?? trailerTime
        store.lastToken = token
    }

    /// A journal line with its references to missing objects left out (and listed).
    func salvage(journalLine line: JSONValue, file: String, line number: Int) -> JSONValue {
        guard case .object(var members) = line, let ci = members.firstIndex(where: { $0.key == "changes" }),
              case .array(var changes) = members[ci].value else { return line }
        var inserted = Set<String>()
        for c in changes where c["kind"] == .string("insert") {
            if case .string(let id)? = c["id"] { inserted.insert(id) }
        }
        let known: (String) -> Bool = { [table = store.table] id in inserted.contains(id) || table.row(for: id) != nil }
        for k in changes.indices {
            if changes[k]["kind"] == .string("insert") {
                changes[k] = withoutDanglingReferences(changes[k], file: file, line: number, known: known)
            } else if changes[k]["kind"] == .string("update"), case .string(let type)? = changes[k]["type"],
                      case .string(let id)? = changes[k]["id"], let entity = store.schema.entity(named: type),
                      case .object(var fields) = changes[k], let vi = fields.firstIndex(where: { $0.key == "values" }),
                      case .object(var values) = fields[vi].value {
                for j in values.indices {
                    guard let p = entity.property(named: values[j].key), p.relationship != nil,
                          case .object(var pair) = values[j].value, let ni = pair.firstIndex(where: { $0.key == "new" }) else { continue }
                    pair[ni].value = dropMissing(pair[ni].value, file: file, line: number, type: type, id: id, property: p.name, known: known)
                    values[j].value = .object(pair)
                }
                fields[vi].value = .object(values)
                changes[k] = .object(fields)
            }
        }
        members[ci].value = .array(changes)
        return .object(members)
    }

    /// An envelope whose relationship values keep only references to known ids.
    private func withoutDanglingReferences(_ envelope: JSONValue, file: String, line: Int,
                                           known: (String) -> Bool) -> JSONValue {
        guard case .object(var members) = envelope, case .string(let type)? = envelope["type"],
              case .string(let id)? = envelope["id"], let entity = store.schema.entity(named: type),
              let di = members.firstIndex(where: { $0.key == "data" }), case .object(var data) = members[di].value else {
            return envelope
        }
        for j in data.indices {
            guard let p = entity.property(named: data[j].key), p.relationship != nil else { continue }
            data[j].value = dropMissing(data[j].value, file: file, line: line, type: type, id: id, property: p.name, known: known)
        }
        members[di].value = .object(data)
        return .object(members)
    }

    private func dropMissing(_ value: JSONValue, file: String, line: Int, type: String, id: String, property: String,
                             known: (String) -> Bool) -> JSONValue {
        // History's old value names each reference's type, as every other reference in history does;
        // a snapshot writes `{"id":…}` where the destination has no subclasses.
        let destination = store.schema.entity(named: type)?.property(named: property)?.relationship.map { store.schema.entities[$0.destination].name }
        func typed(_ v: JSONValue) -> JSONValue {
            switch v {
            case .array(let items): return .array(items.map(typed))
            case .object(let m) where m.count == 1 && m[0].key == "id":
                return destination.map { .object([JSONMember("type", .string($0)), m[0]]) } ?? v
            default: return v
            }
        }
        func note(_ missing: String?) {
            store.danglingReferences.append(DanglingReference(file: file, line: line, type: type, id: id, property: property,
                                                        missingID: missing, recorded: typed(value)))
        }
        switch value {
        case .array(let items):
            var kept: [JSONValue] = []
            for item in items {
                if case .null = item {
                    note(nil)
                } else if case .string(let t)? = item["id"], !known(t) {
                    note(t)
                } else {
                    kept.append(item)
                }
            }
            return .array(kept)
        case .object:
            if case .string(let t)? = value["id"], !known(t) {
                note(t)
                return .null
            }
            return value
        default:
            return value
        }
    }
}
