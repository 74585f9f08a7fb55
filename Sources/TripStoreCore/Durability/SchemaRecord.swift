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
/// the command line included, can open a store made by another; and the
/// pending record a migration writes before its snapshot commits it.
enum SchemaRecord {
    /// A schema record larger than this is damage, not a schema.
    static let limit = 16 << 20

    /// The schema the store in `folder` was last written with: its
    /// `schema.json`, else (a store from before the record existed) its newest
    /// snapshot's header; nil when the folder records none.
    ///
    /// - Throws: `StoreError.damaged` for a record that fails its checksum or
    ///   does not describe a schema, `StoreError.newerFormat`, `IOError`.
    static func schema(in folder: String) throws -> Schema? {
        let files = StoreFiles(folder: folder)
        // A record without a journal or snapshot is from a first commit that
        // never happened (a crash): the folder holds no store, and no schema.
        guard try files.exists() else { return nil }
        if let schema = try read(files) { return schema }
        guard let token = try files.list().snapshots.last else { return nil }
        let path = files.snapshot(token)
        let line: [UInt8]
        do {
            line = try firstLine(of: path, limit: limit)
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
    static func read(_ files: StoreFiles, known: Schema? = nil) throws -> Schema? {
        if let pending = try committedPending(files) { return pending }
        return try read(at: files.schemaRecord, known: known)
    }

    /// The pending record when the newest snapshot committed it.
    static func committedPending(_ files: StoreFiles) throws -> Schema? {
        guard FileIO.exists(files.pendingSchemaRecord),
              let pending = try? read(at: files.pendingSchemaRecord),
              let newest = try files.list().snapshots.last,
              let line = try? firstLine(of: files.snapshot(newest), limit: limit),
              let header = try? JSONReader.parse(line), case .string(let fp)? = header["schema"]?["fingerprint"],
              fp == pending.fingerprint else { return nil }
        return pending
    }

    /// The schema record at `path`, nil when there is no such file; `known`
    /// is returned without parsing the record when the record holds exactly
    /// the bytes it writes (the command line opens a store with the schema
    /// it has just read from there).
    static func read(at path: String, known: Schema? = nil) throws -> Schema? {
        guard let size = FileIO.fileSize(path) else { return nil }
        guard size <= limit else {
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
