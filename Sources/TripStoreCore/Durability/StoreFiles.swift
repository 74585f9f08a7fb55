import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
/// The names of a store's files and what a folder holds.
package struct StoreFiles: Sendable {
    package let folder: String

    package init(folder: String) {
        self.folder = folder
    }

    package func snapshot(_ token: Int64) -> String { folder + "/snapshot-\(token).jsonl" }
    package func journal(_ token: Int64) -> String { folder + "/journal-\(token).jsonl" }
    /// The replay state of the journal: a cache of the rows its lines changed (`JournalState`).
    package func journalState(_ token: Int64) -> String { folder + "/journal-\(token).state" }
    /// The tokens of the journal states in the folder.
    package func journalStateTokens() -> [Int64] {
        ((try? FileIO.listDirectory(folder)) ?? []).compactMap { name in
            guard name.hasPrefix("journal-"), name.hasSuffix(".state") else { return nil }
            return Int64(name.dropFirst(8).dropLast(6))
        }
    }
    /// The snapshot's image: its records as in memory, a cache for fast opening.
    package func image(_ token: Int64) -> String { folder + "/snapshot-\(token).image" }
    /// Where the snapshot's history lines are, by object, delete, type, author and time: a cache.
    package func historyIndex(_ token: Int64) -> String { folder + "/snapshot-\(token).history-index" }
    /// The history index of the snapshot at `snapshotPath`.
    static func historyIndex(ofSnapshot snapshotPath: String) -> String {
        (snapshotPath.hasSuffix(".jsonl") ? String(snapshotPath.dropLast(6)) : snapshotPath) + ".history-index"
    }
    /// The tokens of the history indexes in the folder (a reader may leave one of a snapshot since removed).
    package func historyIndexTokens() -> [Int64] {
        ((try? FileIO.listDirectory(folder)) ?? []).compactMap { name in
            guard name.hasPrefix("snapshot-"), name.hasSuffix(".history-index") else { return nil }
            return Int64(name.dropFirst(9).dropLast(14))
        }
    }
    package var lock: String { folder + "/" + StoreLock.fileName }
    /// The store's record of its schema.
    package var schemaRecord: String { folder + "/" + SchemaRecordFormat.fileName }
    /// A migration's new schema record, until its snapshot is written and it
    /// becomes `schema.json` (see `SchemaRecord.read`).
    package var pendingSchemaRecord: String { folder + "/" + SchemaRecordFormat.pendingFileName }

    /// Removes the folder when it holds nothing a commit wrote: only a lock
    /// file and empty journals (what opening a new store makes), and the
    /// schema record a first commit that failed left. For a
    /// command that opened a new store and then failed, so that it leaves no trace.
    package func removeIfUnused() {
        // Only under the lock, and only if no other writer has it: one that
        // does is using the folder.
        guard FileIO.exists(folder), let lock = try? StoreLock(folder: folder, wait: 0) else { return }
        guard let names = try? FileIO.listDirectory(folder) else { return }
        let lockName = StoreLock.fileName
        let unused = names.allSatisfy { name in
            // The schema is recorded just before the first commit is written: without a journal line it recorded nothing.
            name == lockName || name == SchemaRecordFormat.fileName
                || (StoreFiles.token(name, prefix: "journal-") != nil && FileIO.fileSize(folder + "/" + name) == 0)
        }
        guard unused else { return }
        for name in names where name != lockName { FileIO.unlink(folder + "/" + name) }
        withExtendedLifetime(lock) {
            lock.removeFile()
            _ = rmdir(folder)
        }
    }

    /// Tokens of the complete snapshot files and the journals, and leftover temporary files.
    package func list() throws -> (snapshots: [Int64], journals: [Int64], temporary: [String]) {
        guard FileIO.isDirectory(folder) else { return ([], [], []) }
        var snaps: [Int64] = []
        var journals: [Int64] = []
        var temps: [String] = []
        for name in try FileIO.listDirectory(folder) {
            if StoreFiles.isOwnTemporary(name) {
                // Not a folder: a write makes files, and a folder by that name is not what it left.
                if !FileIO.isDirectory(folder + "/" + name) { temps.append(folder + "/" + name) }
            } else if let t = StoreFiles.token(name, prefix: "snapshot-") {
                snaps.append(t)
            } else if let t = StoreFiles.token(name, prefix: "journal-") {
                journals.append(t)
            }
        }
        return (snaps.sorted(), journals.sorted(), temps)
    }

    /// Whether `name` is a temporary file a write of this store makes (a
    /// snapshot's, its image's or history index's, a journal's copy, the
    /// schema record's): only those are a writer's to remove, never another
    /// `.tmp` a user keeps in the folder.
    static func isOwnTemporary(_ name: String) -> Bool {
        guard name.hasSuffix(".tmp") else { return false }
        return name.hasPrefix("snapshot-") || name.hasPrefix("journal-")
            || name.hasPrefix(SchemaRecordFormat.fileName + ".") || name.hasPrefix(SchemaRecordFormat.pendingFileName + ".")
    }

    static func token(_ name: String, prefix: String) -> Int64? {
        guard name.hasPrefix(prefix), name.hasSuffix(".jsonl") else { return nil }
        return Int64(name.dropFirst(prefix.count).dropLast(6))
    }

    /// True when the folder holds a store (a snapshot or a journal).
    /// Whether the folder holds a store. A folder that does not exist holds
    /// none; one that cannot be read (permission denied) is an error, not "no store".
    package func exists() throws -> Bool {
        let l: (snapshots: [Int64], journals: [Int64], temporary: [String])
        do {
            l = try list()
        } catch let e as IOError where e.code == ENOENT || e.code == ENOTDIR {
            return false
        }
        return !l.snapshots.isEmpty || !l.journals.isEmpty
    }
}
