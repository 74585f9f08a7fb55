import TripStoreEngine
import TripStoreModels

/// What every command gets: its arguments, the console, the environment and the schema.
struct CommandContext {
    let args: ParsedArguments
    let console: Console
    let environment: [String: String]
    /// The program's schema for this command (see `SchemaResolution`).
    let schema: Schema
    let spec: CommandSpec
    /// Standard input (for `import -` and `shell`).
    let input: InputSource
    /// The executable that `compact --background` runs as (nil: automatic snapshots in the foreground).
    var program: String? = nil
    /// The stores this command opened, and how it may use their images.
    var session = CommandSession()

    /// Starts `tripstore compact --background` on this store, a process of
    /// its own (nil when the program runs in a test's process).
    var backgroundCompaction: (@Sendable () -> Void)? {
        guard let program else { return nil }
        let argv = ["--store", storePath, "compact", "--background"] + (args.value("schema").map { ["--schema", $0] } ?? [])
        return { BackgroundProcess.start(program, argv) }
    }

    /// `--store`, else `$TRIPSTORE_DIR`, else `./tripstore`.
    var storePath: String {
        args.value("store") ?? environment["TRIPSTORE_DIR"] ?? "./tripstore"
    }

    /// `--author`, else `$USER`, else `$LOGNAME`, else `unknown`.
    var author: String {
        args.value("author") ?? environment["USER"] ?? environment["LOGNAME"] ?? "unknown"
    }

    func usageError(_ message: String) -> CLIError {
        CLIError(message, usage: "usage: " + spec.usage)
    }

    func options() throws -> StoreOptions {
        // A command commits once and ends, so its automatic snapshot comes
        // sooner than a program's that stays open (each command's open reads
        // the journal); `apply` commits for as long as its feed lasts, so it
        // keeps the library's defaults.
        var o = spec.name == ApplyCommand.spec.name ? StoreOptions() : .committingOncePerOpen
        if let start = backgroundCompaction, spec.name != ApplyCommand.spec.name {
            // The snapshot a commit makes due is written by a process of its
            // own, without the lock: this command returns at once.
            o.snapshotWriter = { _ in start() }
        }
        if let w = args.value("wait") {
            guard let s = Double(w), s >= 0, s <= 86_400 else {
                throw usageError("--wait needs a number of seconds from 0 to 86400, got '\(w)'")
            }
            o.lockWait = s
        }
        try setThresholdsFromEnvironment(&o)
        o.imageChecks = session.imageChecks
        if !session.useImage { o.useSnapshotImage = false }
        return o
    }

    /// The thresholds of a command that commits once (`apply` folds by
    /// them as it ends), as the environment sets them.
    func thresholdsOfACommand() throws -> StoreOptions {
        var o = StoreOptions.committingOncePerOpen
        try setThresholdsFromEnvironment(&o)
        return o
    }

    /// The thresholds the environment sets; a value that is no whole number
    /// from 0 up is an error, as git's bad numeric settings are (an empty one is unset).
    private func setThresholdsFromEnvironment(_ o: inout StoreOptions) throws {
        func count(_ name: String) throws -> Int? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            guard let n = Int(text), n >= 0 else {
                throw CLIError("\(name)='\(text)': expected a whole number from 0 up (ENVIRONMENT in 'tripstore help --man' lists them)")
            }
            return n
        }
        if let n = try count("TRIPSTORE_SNAPSHOT_BYTES") { o.snapshotAfterBytes = n }
        if let n = try count("TRIPSTORE_SNAPSHOT_COMMIT_CHANGES") { o.snapshotCommitChanges = n }
        if let n = try count("TRIPSTORE_SNAPSHOT_TRANSACTIONS") { o.snapshotAfterTransactions = n }
        if let n = try count("TRIPSTORE_SNAPSHOT_LINE_BYTES") { o.snapshotAfterLineBytes = n }
    }

    /// Commits, then prints what the store warned about meanwhile (an automatic
    /// snapshot that failed: the transaction is durable in the journal).
    func commit(_ tx: TransactionBuilder, to store: Store) throws -> HistoryTransaction? {
        try reportingWarnings(of: store) { try store.commit(tx, author: author) }
    }

    /// Runs a write on the store, printing the warnings it added (an automatic snapshot that failed) on stderr.
    func reportingWarnings<T>(of store: Store, _ write: () throws -> T) throws -> T {
        let before = store.warnings.count
        let t = try write()
        for w in store.warnings.dropFirst(before) { console.err(CLIError.sentence(w)) }
        return t
    }

    /// Opens the store, printing its warnings (a torn journal tail) on stderr.
    func openStore(_ access: StoreAccess) throws -> Store {
        opened(try open(access, options: options()), access: access)
    }

    /// Opens the store for a while of a long command (the shell's next
    /// line): its warnings printed, but not kept to the end, so that the
    /// store it replaces, and the snapshot files that one maps, can go.
    func openStoreForAWhile(_ access: StoreAccess) throws -> Store {
        let store = try open(access, options: options())
        for w in store.warnings { console.err(CLIError.sentence(w)) }
        return store
    }

    /// Opens the store with the schema it records, whatever `--schema` says
    /// (`migrate`, whose `--schema` is the schema to move to).
    func openStoreWithItsSchema(_ access: StoreAccess) throws -> Store {
        var attempt = 0
        while true {
            guard let recorded = try Store.recordedSchema(in: storePath) else { throw StoreError.noStore(path: storePath) }
            do {
                return opened(try Store.open(storePath, schema: recorded, access: access, options: options()), access: access)
            } catch let e as StoreError where attempt < 5 {
                // Another writer migrated between reading the record and opening: read it again.
                switch e {
                case .schemaMismatch, .damaged: break
                default: throw e
                }
                guard let now = try Store.recordedSchema(in: storePath), now.fingerprint != recorded.fingerprint else { throw e }
                attempt += 1
            }
        }
    }

    /// The PostgreSQL schema of `--sql-schema NAME` (default `tripstore`).
    func sqlSchema() throws -> SQLSchema {
        let name = args.value("sql-schema") ?? "tripstore"
        guard SQLText.isPlainName(name) else {
            throw usageError("--sql-schema takes a name of ASCII letters, digits and '_' (not starting with a digit, at most 63), got '\(name)'")
        }
        return SQLSchema(name: name)
    }

    /// Keeps a store the command got from another (a migration's) until the command ends.
    func adopt(_ store: Store) {
        console.keepUntilExit(store)
        session.opened(store)
    }

    /// Opens a store that must exist to write, waiting for the lock as any
    /// writer does: a store whose first import is still running holds only
    /// its lock until that import commits, and exists once it has.
    func openExistingStore() throws -> Store {
        guard try Store.exists(in: storePath) || Store.isLocked(storePath) else { throw StoreError.noStore(path: storePath) }
        let store = try openStore(.write)
        if try !Store.exists(in: storePath) {
            // The import it waited for failed: there is still no store.
            store.close()
            Store.removeIfUnused(storePath)
            throw StoreError.noStore(path: storePath)
        }
        return store
    }

    /// A store's warning as a command opened with `access` prints it: a
    /// reader's torn tail with the way to cut it (writers cut it themselves).
    func sentence(_ warning: StoreWarning, access: StoreAccess) -> String {
        let tornTail = if case .tornTail = warning { true } else { false }
        return CLIError.sentence(warning) + (tornTail && access == .read ? CLIError.tornTailAdvice : "")
    }

    /// Prints an opened store's warnings and keeps it until the command ends.
    private func opened(_ store: Store, access: StoreAccess) -> Store {
        for w in store.warnings { console.err(sentence(w, access: access)) }
        console.keepUntilExit(store)
        session.opened(store)
        return store
    }

    /// Opens the store to read, as it was right after `--as-of TOKEN|TIME`
    /// when that is given (digits only: a token; anything else: an ISO 8601
    /// time, meaning the last token committed at or before it).
    func openStoreToRead() throws -> Store {
        guard let asOf = args.value("as-of") else { return try openStore(.read) }
        let point = try pointInTime(asOf, option: "--as-of")
        do {
            return opened(try open(.read, options: options(), asOf: point), access: .read)
        } catch let e as StoreError {
            switch e {
            case .tokenOutOfReach, .timeOutOfReach, .deletedValuesNotKept:
                // What a plain open warns of (a journal that lacks transactions) may be why.
                if let store = try? open(.read, options: options()) { for w in store.warnings { console.err(sentence(w, access: .read)) } }
            default: break
            }
            guard case .timeOutOfReach(_, let r, let earliest) = e else { throw e }
            let first = earliest.map { " (token \($0.token) was committed at \(ISODate.format($0.timestamp)))" } ?? ""
            throw CLIError("--as-of \(asOf) is before the oldest reachable state: --as-of reaches tokens \(r.lowerBound) to \(r.upperBound)\(first)")
        }
    }

    /// A token argument: digits, or an ISO 8601 time (the last token at or before it).
    func pointInTime(_ text: String, option: String) throws -> PointInTime {
        if !text.isEmpty && text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let t = Int64(text) else { throw usageError("\(option) \(text): not a token (a whole number up to \(Int64.max))") }
            return .token(t)
        }
        guard let time = ISOTime(text) else {
            throw usageError("\(option) takes a token (digits) or an ISO 8601 time such as 2026-11-16 or 2026-11-16T09:00:00Z, got '\(text)'")
        }
        return .time(time)
    }

    /// Opens the store with this command's schema. Without `--schema`, a
    /// writer may extend the store's schema between reading its record and
    /// reading its files: then the record is read again and the open retried,
    /// so a reader never fails because a writer is busy.
    /// `recorded`: start from the schema the store records now rather than
    /// the one it recorded when the command began (a long-running command,
    /// which a migration may overtake).
    func open(_ access: StoreAccess, options: StoreOptions, asOf point: PointInTime? = nil, recorded: Bool = false) throws -> Store {
        var schema = self.schema
        if recorded, args.value("schema") == nil, let now = try Store.recordedSchema(in: storePath) { schema = now }
        var attempt = 0
        while true {
            do {
                if let point { return try Store.open(storePath, schema: schema, asOf: point, options: options) }
                return try Store.open(storePath, schema: schema, access: access, options: options)
            } catch let e as StoreError where args.value("schema") == nil && attempt < 5 {
                switch e {
                case .schemaMismatch, .damaged: break
                default: throw e
                }
                guard let recorded = try Store.recordedSchema(in: storePath), recorded.fingerprint != schema.fingerprint else { throw e }
                schema = recorded
                attempt += 1
            }
        }
    }

    /// Positional argument `i`, or a usage error naming what is missing.
    func positional(_ i: Int, _ what: String) throws -> String {
        guard i < args.positionals.count else { throw usageError("missing \(what)") }
        return args.positionals[i]
    }

    /// Reads a file argument, or standard input for `-`.
    func readInput(_ path: String) throws -> [UInt8] {
        var identity: FileIdentity?
        return try readInput(path, identity: &identity)
    }

    /// `readInput`, noting a file's identity once read (nil for standard input).
    func readInput(_ path: String, identity: inout FileIdentity?) throws -> [UInt8] {
        if path == "-" {
            // An array, an object (JSON Lines), or a byte-order mark; anything else fails now.
            return try input.readAll(looksLikeJSON: { [0x5B, 0x7B, 0xEF].contains($0[0]) })
        }
        return try readingInput(path) { try FileIO.readFile(path, identity: &identity) }
    }

    /// Runs `body`, which reads the file at `path`, wording a read error as `readInput` does.
    func readingInput<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as IOError {
            throw Self.cannotRead(path, e)
        }
    }

    /// An input file that could not be read, in a few words.
    static func cannotRead(_ path: String, _ e: IOError) -> CLIError {
        CLIError("cannot read \(path): \(e.description.split(separator: ":").last.map { String($0).trimmed } ?? "\(e)")")
    }

    func intOption(_ name: String) throws -> Int? {
        guard let v = args.value(name) else { return nil }
        guard let n = Int(v), n >= 0 else { throw usageError("--\(name) needs a whole number, got '\(v)'") }
        return n
    }
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

/// What one run of a command did with its stores: which it opened, whether
/// their images are checked piece by piece, and whether that found damage.
final class CommandSession {
    /// Check the image's pieces as they are touched (the command touches little).
    var imageChecks: ImageChecks = .atOpen
    /// False on the run again from the JSON, after damage in the image.
    var useImage = true
    private var stores: [(store: Store, token: Int64)] = []

    func opened(_ store: Store) { stores.append((store, store.lastToken)) }

    /// The damage an opened store's image showed after open, if any.
    var damage: (image: String, detail: String)? {
        for (s, _) in stores { if let d = s.imageDamage { return (s.imagePath, d) } }
        return nil
    }

    /// Whether a store was changed by this run (it cannot run again).
    var committed: Bool { stores.contains { $0.store.lastToken != $0.token } }

    /// Closes every store this run opened (releasing a writer's lock for the run again).
    func closeAll() {
        for (s, _) in stores { s.close() }
        stores = []
    }

    /// Checks every piece of every opened store's image; false when damaged.
    func checkEverything() -> Bool {
        stores.allSatisfy { $0.store.checkImage() }
    }
}
