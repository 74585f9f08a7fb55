import TripStoreEngine
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `tripstore verify [--repair]`: checks every file; cuts a torn tail on request.
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check every snapshot and journal record; --repair cuts a torn journal tail, removes dangling references and what interrupted writes left",
        usage: "tripstore verify [--repair]",
        flagOptions: ["repair": "cut a torn last journal line, keeping every complete transaction; remove references to missing objects (one transaction by author 'repair'); remove what an interrupted write left, and a damaged image, history index or journal state (caches, written again)"],
        examples: ["tripstore verify", "tripstore verify --repair"], maxPositionals: 0)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let c = ctx.console
        guard try Store.exists(in: ctx.storePath) else { return try noStore(ctx) }
        let store: Store
        do {
            var options = try ctx.options()
            options.useSnapshotImage = false  // check the JSON itself, every byte
            store = try ctx.open(.read, options: options)
        } catch StoreError.danglingReferences {
            return try repairDangling(ctx)
        } catch let e as StoreError {
            c.err("error: " + e.description + CLIError.advice(e))
            if case .damaged = e { c.err("verify: the damage is not a torn tail; --repair cannot fix it and changed nothing") }
            return CLIError.exitCode(e)
        }
        // The JSON alone says nothing of transactions its journal lost: an
        // open that reads the replay state does, and no repair brings them
        // back. (An open that fails here is left to the checks below to name.)
        if let lost = (try? ctx.open(.read, options: try ctx.options()))?.warnings.first(where: {
            if case .journalBehindState = $0 { return true } else { return false }
        }), case .journalBehindState(let file, let detail) = lost {
            c.err("error: the store is damaged: \(file): \(detail)")
            c.err("verify: --repair cannot bring back lost transactions; it changed nothing")
            return 2
        }
        // Before the history is read whole (which lets go of the snapshot's history lines).
        let indexProblem = store.historyIndexProblem()
        let problems = store.checkInvariants() + store.commitTimeProblems()
        for p in problems { c.err("error: \(p)") }
        if !problems.isEmpty { return 2 }
        if store.hasTornTail {
            guard ctx.args.has("repair") else {
                c.err("verify: journal-\(store.snapshotToken).jsonl ends with an incomplete transaction (a torn write); 'tripstore verify --repair' cuts it")
                return 2
            }
            _ = try ctx.openStore(.write)  // a writer cuts the torn tail on open
            c.line("repaired: cut the torn tail of journal-\(store.snapshotToken).jsonl; \(store.lastToken) transactions intact")
            return 0
        }
        if let problem = try imageProblem(ctx, store) {
            return deleteDamagedCache(store.imagePath, problem, ctx)
        }
        let (stateProblem, stateCompared) = try journalStateProblem(ctx, store)
        if let problem = stateProblem {
            return deleteDamagedCache(store.journalStatePath, problem, ctx)
        }
        if let (problem, stale) = indexProblem {
            let index = store.historyIndexPath
            if stale {
                c.line("note: \(index): \(problem): it is ignored, and built again when history is next looked up")
            } else if ctx.args.has("repair") {
                guard removed(index) else {
                    c.err("verify: \(index): \(problem), and it could not be removed (a folder that is not empty?): remove it yourself")
                    return 2
                }
                c.line("repaired: deleted \(index) (\(problem)); it is built again when history is next looked up")
                return 0
            } else {
                c.err("verify: \(index): \(problem); the JSON decides: 'tripstore verify --repair' deletes it")
                return 2
            }
        }
        if let problem = LocklessCompaction.lockProblem(in: ctx.storePath) {
            guard ctx.args.has("repair") else {
                c.err("verify: \(problem); 'tripstore verify --repair' removes it")
                return 2
            }
            guard LocklessCompaction.removeBrokenLock(in: ctx.storePath) else {
                c.err("verify: \(problem), and it could not be removed (a folder that is not empty?): remove it yourself")
                return 2
            }
            c.line("repaired: removed what stood at fold.lock (\(problem)); the next compaction makes it again")
            return 0
        }
        // Files an interrupted write left (temporary ones, and those a newer snapshot replaced): never read, removed by the next writer.
        let leftovers = store.leftoverTemporaryFiles
        if !leftovers.isEmpty {
            let names = leftovers.joined(separator: ", ")
            if ctx.args.has("repair") {
                _ = try ctx.openStore(.write)  // a writer removes them on open
                // What is not a file (a folder that is not empty) stays.
                let remaining = Set(Store.leftoverTemporaryFiles(in: ctx.storePath))
                let gone = leftovers.filter { !remaining.contains($0) }
                if !gone.isEmpty { c.line("repaired: removed \(gone.joined(separator: ", ")), left by an interrupted write") }
                let kept = leftovers.filter { remaining.contains($0) }
                if !kept.isEmpty {
                    c.err("verify: \(kept.joined(separator: ", ")) could not be removed (a folder that is not empty?): remove \(kept.count == 1 ? "it" : "them") yourself")
                    return 2
                }
            } else {
                c.line("note: \(names) left by an interrupted write: never read; 'tripstore verify --repair' or the next writer removes \(leftovers.count == 1 ? "it" : "them")")
            }
        }
        var stale: String?
        if store.hasSnapshotFile, let why = store.imageStaleness() {
            stale = why
            c.line("note: \(store.imagePath) is stale (\(why)): it is ignored, and the next writer writes it again")
        } else if store.hasSnapshotFile && store.imageIsOfAnotherCopy() {
            c.line("note: \(store.imagePath) was made beside another copy of the snapshot file (a copied or restored folder): "
                   + "each open reads the snapshot through to check it first, until the next writer binds the image to this copy")
        }
        var checked = ["checksums", "order", "references", "ids"]
        if store.hasSnapshotFile && stale == nil && FileIO.exists(store.imagePath) { checked.append("the image") }
        if indexProblem == nil && FileIO.exists(store.historyIndexPath) { checked.append("the history index") }
        if stateCompared { checked.append("the journal's replay state") }
        let list = checked.dropLast().joined(separator: ", ") + " and " + (checked.last ?? "")
        c.line("ok: \(counted(store.objectCount, "object")), \(counted(store.historyCount, "transaction")) in history, last token \(store.lastToken); \(list) verified")
        return 0
    }

    /// A damaged cache (the image, the journal's replay state): an error,
    /// or with `--repair` deleted (the JSON decides; the next writer writes it again).
    private static func deleteDamagedCache(_ path: String, _ problem: String, _ ctx: CommandContext) -> Int32 {
        let c = ctx.console
        guard ctx.args.has("repair") else {
            c.err("verify: \(path): \(problem); the JSON decides: 'tripstore verify --repair' deletes it")
            return 2
        }
        guard removed(path) else {
            c.err("verify: \(path): \(problem), and it could not be removed (a folder that is not empty?): remove it yourself")
            return 2
        }
        c.line("repaired: deleted \(path) (\(problem)); the next writer writes it again")
        return 0
    }

    /// Removes a file, or an empty folder, at `path`; true once nothing is there.
    private static func removed(_ path: String) -> Bool {
        if unlink(path) != 0 { _ = rmdir(path) }
        var st = stat()
        return lstat(path, &st) != 0
    }

    /// What is wrong with the snapshot's image, if there is one: it does not
    /// load (damaged, stale, not a regular file), or loads a different store
    /// than the JSON.
    private static func imageProblem(_ ctx: CommandContext, _ json: Store) throws -> String? {
        guard json.hasSnapshotFile else { return nil }
        let path = json.imagePath
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }  // no image: nothing to check
        var options = try ctx.options()
        options.useJournalState = false  // the image alone (the state is compared with it next)
        let fromImage = try ctx.open(.read, options: options)
        // A writer committed (or compacted) between the two opens: they replayed
        // different journals, so comparing them would call a sound image damaged.
        guard fromImage.snapshotToken == json.snapshotToken, fromImage.lastToken == json.lastToken else {
            ctx.console.line("note: the store changed while it was verified; its image was not compared (run verify again)")
            return nil
        }
        guard fromImage.loadedFromImage else {
            // Stale (another format version, schema or copy of the snapshot): ignored, not damaged.
            if json.imageStaleness() != nil { return nil }
            return "it does not match its snapshot or fails its checks"
        }
        // Its type and value indexes must agree with its own records (read from the image, not built).
        if let problem = fromImage.checkInvariants().first { return "\(problem) in the image" }
        let a = json.rowsInIDOrder(), b = fromImage.rowsInIDOrder()
        guard a.count == b.count else { return "it holds \(b.count) objects, the snapshot's JSON \(a.count)" }
        for (x, y) in zip(a, b) {
            let o = json.object(at: x), p = fromImage.object(at: y)
            guard let o, let p, o.id == p.id, o.entity == p.entity else { return "it holds other objects than the snapshot's JSON" }
            for property in json.schema.entities[o.entity].properties where property.attribute != nil && o.values[property.slot] != p.values[property.slot] {
                return "it holds another value of \(json.schema.entities[o.entity].name) '\(o.id)'.\(property.name) than the snapshot's JSON"
            }
        }
        return nil
    }

    /// What is wrong with the journal's replay state, if there is one: the
    /// objects an open that takes it sees differ from those a replay of the
    /// journal over the image gives. A state that binds to nothing (made for
    /// another image or journal) is ignored, and noted.
    private static func journalStateProblem(_ ctx: CommandContext, _ json: Store) throws -> (problem: String?, compared: Bool) {
        var st = stat()
        guard json.hasSnapshotFile, lstat(json.journalStatePath, &st) == 0 else { return (nil, false) }
        // Only a file of its own is read or written there.
        guard (st.st_mode & S_IFMT) == S_IFREG else { return ("it is not a regular file (a folder, a link or a FIFO at its name)", false) }
        let options = try ctx.options()
        var replaying = options
        replaying.useJournalState = false
        let fromState = try ctx.open(.read, options: options), replayed = try ctx.open(.read, options: replaying)
        guard fromState.snapshotToken == json.snapshotToken, fromState.lastToken == json.lastToken,
              replayed.snapshotToken == json.snapshotToken, replayed.lastToken == json.lastToken else {
            ctx.console.line("note: the store changed while it was verified; its journal's replay state was not compared (run verify again)")
            return (nil, false)
        }
        // An open that met damage in the rows the state names answered from the JSON instead.
        if replayed.loadedFromImage && !fromState.loadedFromImage {
            return ("it names rows the image holds otherwise (an open that takes it answers from the JSON)", true)
        }
        guard fromState.journalStateLines > 0 else {
            ctx.console.line("note: \(json.journalStatePath) covers none of the journal (made for another image or journal, or damaged): it is ignored (a cache: a writer writes it again)")
            return (nil, false)
        }
        // By id: a writer numbers the rows of objects made and deleted in one transaction, a replay does not.
        let a = replayed.rowsInIDOrder(), b = fromState.rowsInIDOrder()
        guard a.map(replayed.id) == b.map(fromState.id) else { return ("it holds other objects than the journal", true) }
        for (x, y) in zip(a, b) where !sameObject(replayed, x, fromState, y) {
            return ("it holds another '\(replayed.id(at: x) ?? "")' than the journal does", true)
        }
        if let d = fromState.imageDamage { return ("it names rows the image holds otherwise (\(d))", true) }
        return (nil, true)
    }

    /// Whether two stores hold the same object at these rows: the same
    /// type and values, relationships to objects of the same ids.
    private static func sameObject(_ a: Store, _ x: RowID, _ b: Store, _ y: RowID) -> Bool {
        guard let o = a.object(at: x), let p = b.object(at: y), o.entity == p.entity, o.id == p.id else { return false }
        return zip(o.values, p.values).allSatisfy { v, w in
            switch (v, w) {
            case (.toOne, .toOne), (.toMany, .toMany): return v.rows.map(a.id) == w.rows.map(b.id)
            default: return v == w
            }
        }
    }

    /// Lists every reference to a missing object; with `--repair`, removes them in one transaction.
    private static func repairDangling(_ ctx: CommandContext) throws -> Int32 {
        let c = ctx.console
        var options = try ctx.options()
        options.useSnapshotImage = false
        options.salvageDanglingReferences = true
        let found = try ctx.open(.read, options: options)
        for d in found.danglingReferences { c.err("error: \(d)") }
        // Reported, though they do not stop the repair.
        for p in found.commitTimeProblems() { c.err("error: \(p)") }
        let n = found.danglingReferences.count
        let other = found.checkInvariants()
        if !other.isEmpty {
            for p in other { c.err("error: \(p)") }
            c.err("verify: besides \(n) dangling reference\(n == 1 ? "" : "s"), the store has damage that --repair cannot fix; nothing was changed")
            return 2
        }
        guard ctx.args.has("repair") else {
            c.err("verify: \(n) dangling reference\(n == 1 ? "" : "s"); 'tripstore verify --repair' removes \(n == 1 ? "it" : "them") (recorded in history by author 'repair')")
            return 2
        }
        let store = try ctx.open(.write, options: options)
        let t: HistoryTransaction?
        do {
            t = try store.removeDanglingReferences(author: "repair")
        } catch let e as StoreError {
            c.err("error: " + e.description)
            c.err("verify: --repair changed nothing")
            return CLIError.exitCode(e)
        }
        c.line("repaired: removed \(n) dangling reference\(n == 1 ? "" : "s")"
               + (t.map { " as transaction \($0.token) by author 'repair'" } ?? " (their holders were deleted later; the files were rewritten)")
               + "; \(counted(store.objectCount, "object")) intact")
        return 0
    }

    /// No store, but perhaps what a first import killed before its commit
    /// left (its snapshot's temporary files, up to the size of the store):
    /// named, and removed on request, so nothing lingers unseen.
    private static func noStore(_ ctx: CommandContext) throws -> Int32 {
        if Store.isLocked(ctx.storePath) && !Store.leftoverTemporaryFiles(in: ctx.storePath).isEmpty {
            // A first import holds the lock and is writing them now.
            ctx.console.err("error: no store at \(ctx.storePath) yet: a first import is writing it (it holds the lock); verify once it has finished")
            return CLIError.exitCode(StoreError.noStore(path: ctx.storePath))
        }
        let leftovers = Store.leftoverTemporaryFiles(in: ctx.storePath)
        guard !leftovers.isEmpty else { throw StoreError.noStore(path: ctx.storePath) }
        let names = leftovers.joined(separator: ", ")
        guard ctx.args.has("repair") else {
            ctx.console.err("error: no store at \(ctx.storePath); \(names) left by a first write interrupted before it committed "
                            + "(nothing was committed): 'tripstore verify --repair' removes \(leftovers.count == 1 ? "it" : "them"), "
                            + "and importing again does too")
            return CLIError.exitCode(StoreError.noStore(path: ctx.storePath))
        }
        try ctx.openStoreForAWhile(.write).close()  // a writer removes them on open
        Store.removeIfUnused(ctx.storePath)
        ctx.console.line("repaired: removed \(names), left by a first write interrupted before it committed; there is no store at \(ctx.storePath): import a file to create one")
        return 0
    }
}
