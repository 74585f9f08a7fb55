import Foundation
import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store's record of its own schema (`schema.json`), so that any program,
/// the command line included, can open a store made by another.
extension Store {
    /// A schema record larger than this is damage, not a schema.
    static let schemaRecordLimit = 16 << 20

    /// The schema the store in `folder` was last written with: its
    /// `schema.json`, else (a store from before the record existed) its newest
    /// snapshot's header; nil when the folder records none.
    ///
    /// - Throws: `StoreError.damaged` for a record that fails its checksum or
    ///   does not describe a schema, `StoreError.newerFormat`, `IOError`.
    public static func recordedSchema(in folder: String) throws -> Schema? {
        let files = StoreFiles(folder: folder)
        // A record without a journal or snapshot is from a first commit that
        // never happened (a crash): the folder holds no store, and no schema.
        guard try files.exists() else { return nil }
        if let schema = try readSchemaRecord(files) { return schema }
        guard let token = try files.list().snapshots.last else { return nil }
        let path = files.snapshot(token)
        let line: [UInt8]
        do {
            line = try firstLine(of: path, limit: schemaRecordLimit)
        } catch let e as IOError where e.code == ENOENT {
            return nil  // compacted away meanwhile: the caller's open will see the new files
        }
        guard let header = try? line.withUnsafeBufferPointer({ buf -> JSONValue in
            var r = JSONReader(buffer: buf)
            return try r.parseDocument()
        }), let s = header["schema"], let entities = s["entities"],
              let described = SchemaCoding.read(entities), let schema = try? Schema(described, version: s["version"].flatMap {
                  if case .string(let v) = $0 { return v } else { return nil } }) else {
            throw StoreError.damaged(file: path, line: 1, detail: "the header's schema is unreadable", repairable: false)
        }
        return schema
    }

    /// The store's schema record: `schema.json`, nil when there is no such
    /// file, unless a migration's `schema-next.json` was committed by the
    /// newest snapshot (its header has that schema) and a crash came before
    /// it took the place of `schema.json`. A pending record of a migration
    /// that did not commit is ignored.
    static func readSchemaRecord(_ files: StoreFiles, known: Schema? = nil) throws -> Schema? {
        if let pending = try committedPendingRecord(files) { return pending }
        return try readSchemaRecord(at: files.schemaRecord, known: known)
    }

    /// The pending record when the newest snapshot committed it.
    static func committedPendingRecord(_ files: StoreFiles) throws -> Schema? {
        guard FileIO.exists(files.pendingSchemaRecord),
              let pending = try? readSchemaRecord(at: files.pendingSchemaRecord),
              let newest = try files.list().snapshots.last,
              let line = try? firstLine(of: files.snapshot(newest), limit: schemaRecordLimit),
              let header = try? JSONReader.parse(line), case .string(let fp)? = header["schema"]?["fingerprint"],
              fp == pending.fingerprint else { return nil }
        return pending
    }

    /// A writer's first step: finishes a migration that committed before
    /// its schema record took its place, or removes one that did not commit.
    func finishInterruptedMigration() throws {
        guard FileIO.exists(files.pendingSchemaRecord) else { return }
        if try Store.committedPendingRecord(files) != nil {
            try FileIO.rename(files.pendingSchemaRecord, files.schemaRecord)
        } else {
            FileIO.unlink(files.pendingSchemaRecord)
        }
        try FileIO.fsyncDirectory(files.folder)
    }

    /// The schema record at `path`, nil when there is no such file; `known`
    /// is returned without parsing the record when the record holds exactly
    /// the bytes it writes (the command line opens a store with the schema
    /// it has just read from there).
    static func readSchemaRecord(at path: String, known: Schema? = nil) throws -> Schema? {
        guard let size = FileIO.fileSize(path) else { return nil }
        guard size <= schemaRecordLimit else {
            throw StoreError.damaged(file: path, line: 1, detail: "it holds \(size) bytes, more than a schema record can", repairable: false)
        }
        let bytes: [UInt8]
        do {
            bytes = try FileIO.readFile(path)
        } catch let e as IOError where e.code == ENOENT {
            return nil
        } catch let e as IOError where e.code == IOError.notRegularFile || e.code == EISDIR {
            throw StoreError.damaged(file: path, line: nil, detail: "not a regular file", repairable: false)
        }
        if let read = SchemaRecordMemo.shared.schema(for: bytes) { return read }
        if let known, bytes == SchemaRecordFormat.bytes(known) { return known }
        do {
            let schema = try SchemaRecordFormat.read(bytes)
            SchemaRecordMemo.shared.remember(schema, for: bytes)
            return schema
        } catch {
            switch error {
            case .damaged(let detail): throw StoreError.damaged(file: path, line: 1, detail: detail, repairable: false)
            case .newerFormat(let v): throw StoreError.newerFormat(file: path, version: v)
            }
        }
    }

    /// At open: reads `schema.json` and checks that this program's schema can
    /// use the store (equal, or only additions).
    func loadSchemaRecord() throws {
        guard try files.exists(), let recorded = try Store.readSchemaRecord(files, known: schema) else { return }
        recordedDescriptions = recorded.descriptions
        recordedFingerprint = recorded.fingerprint
        if recorded.fingerprint != schema.fingerprint {
            let problems = SchemaCompatibility.differences(stored: recorded.descriptions, current: schema.descriptions)
            if !problems.isEmpty { throw StoreError.schemaMismatch(problems) }
        }
    }

    /// Whether the folder says which schema wrote it (a record or a snapshot header).
    var schemaIsRecorded: Bool { recordedFingerprint != nil || hasSnapshot }

    /// Before a writer's first journal line or snapshot: records the schema
    /// when the store has no record or an older one (this program added to it).
    func recordSchemaIfNeeded() throws {
        guard recordedFingerprint != schema.fingerprint else { return }
        let previous = recordedFingerprint
        // The renames the record names stay named (see `Schema.keepingRenames`).
        try writeSchemaRecord(of: recordedDescriptions.map { schema.keepingRenames(recordedIn: $0) }, to: files.schemaRecord)
        recordedFingerprint = schema.fingerprint
        if previous != nil {
            warnings.append(.schemaExtended(fingerprint: schema.fingerprint, record: files.schemaRecord))
        }
    }

    /// Writes this store's schema (or `other`, of the same shape) as a
    /// record at `path`: a temporary file, flushed, renamed, and the folder flushed.
    func writeSchemaRecord(of other: Schema? = nil, to path: String) throws {
        try FileIO.replaceDurably(path, with: SchemaRecordFormat.bytes(other ?? schema), folder: files.folder)
    }

    /// The first line of a file, without its newline, read in pieces up to `limit` bytes.
    static func firstLine(of path: String, limit: Int) throws -> [UInt8] {
        let fd = try FileIO.openRegular(path)
        defer { FileIO.close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while out.count < limit {
            let n = chunk.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: out.count) }
            if n < 0 { throw IOError(operation: "read", path: path, code: errno) }
            if n == 0 { break }
            if let nl = chunk[0..<n].firstIndex(of: 0x0A) {
                out.append(contentsOf: chunk[0..<nl])
                return out
            }
            out.append(contentsOf: chunk[0..<n])
        }
        throw StoreError.damaged(file: path, line: 1, detail: "the header line has no end within \(limit) bytes", repairable: false)
    }
}

extension Store {
    /// Why the snapshot's image is stale rather than damaged, if it is: made
    /// by another version of the format, for another schema (the store's
    /// schema was extended since), or beside another copy of the snapshot
    /// file (the folder was copied or restored). The next writer writes a new one.
    public func imageStaleness() -> String? {
        guard let fd = try? FileIO.openRegular(files.image(snapshotToken)) else { return nil }
        defer { FileIO.close(fd) }
        var bytes = [UInt8](repeating: 0, count: SnapshotImage.Header.byteCount)
        let n = bytes.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: 0) }
        guard n == bytes.count else { return nil }
        if bytes.prefix(7).elementsEqual(SnapshotImage.magic.prefix(7)) && bytes[7] != SnapshotImage.magic[7] {
            return "it was written by another version of tripstore"
        }
        guard let header = bytes.withUnsafeBytes(SnapshotImage.Header.decode) else { return nil }
        if header.binding.fingerprint != SnapshotImage.fingerprint(schema) { return "it was made for an earlier schema" }
        guard let snapshot = try? FileIO.openRegular(files.snapshot(snapshotToken)) else { return nil }
        defer { FileIO.close(snapshot) }
        if let file = FileIdentity.of(snapshot), header.binding.token == snapshotToken, header.binding.snapshotBytes == file.size,
           header.binding.file != file {
            return "it was made beside another copy of the snapshot file (a copied or restored folder)"
        }
        return nil
    }
}

/// The schema record this process last read, by its exact bytes: a command
/// reads the record to learn the store's schema and then opens the store,
/// which reads it again; the same bytes are the same schema, so the second
/// read costs a comparison, not a parse.
final class SchemaRecordMemo: @unchecked Sendable {
    static let shared = SchemaRecordMemo()
    private let lock = NSLock()
    private var last: (bytes: [UInt8], schema: Schema)?

    func schema(for bytes: [UInt8]) -> Schema? {
        lock.lock()
        defer { lock.unlock() }
        guard let last, last.bytes == bytes else { return nil }
        return last.schema
    }

    func remember(_ schema: Schema, for bytes: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        last = (bytes, schema)
    }
}
