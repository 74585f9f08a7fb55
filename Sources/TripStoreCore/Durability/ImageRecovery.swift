/// What a program does when work on stores opened from their snapshot
/// images meets damage to an image after the open (the pieces are checked
/// as reads first touch them): the image is a cache and the JSON files are
/// the truth, so the work runs once more on stores read from their JSON,
/// unless it already committed. A commit checks every piece it reads
/// before it writes, so what it wrote is sound; only what this process
/// read was hurt, and the work is not done twice.
///
/// `ModelContext` recovers by itself (it reads the store again and keeps
/// its objects); this is for a program that opens stores for a piece of
/// work, as each `tripstore` command does:
///
/// ```swift
/// var opened: Store?
/// let (count, outcome) = try ImageRecovery.run(damage: { opened?.imageDamage.map { (opened!.imagePath, $0) } },
///                                              committed: { false }) { fromJSON in
///     var options = StoreOptions()
///     options.useSnapshotImage = !fromJSON
///     opened = try Store.open("trips", schema: schema, access: .read, options: options)
///     return try opened!.run(Query("is Trip"), countOnly: true).rows.count
/// }
/// ```
public enum ImageRecovery {
    /// How the work went.
    public enum Outcome: Sendable, Equatable {
        /// No damage was met.
        case sound
        /// Damage was met before anything was committed; the work ran again
        /// from the JSON, and its result is that run's.
        case ranAgainFromJSON(file: String, detail: String)
        /// Damage was met after the work committed: its result stands, and
        /// the image is left to be replaced (the next snapshot, or a repair).
        case damagedAfterCommit(file: String, detail: String)
    }

    /// Runs `work` on stores opened from their images (`fromJSON` false),
    /// then, when a read met damage (`damage()` says so, or the work threw
    /// `StoreError.imageDamaged`) and nothing was committed (`committed()`),
    /// `beforeRunningAgain` with the damage (drop what the first run
    /// produced, close its stores) and `work` once more with `fromJSON`
    /// true. Where `mayRunAgain()` says no (the work consumed input it
    /// cannot read twice), it throws `StoreError.imageDamaged` instead:
    /// nothing was committed, so the work may be done again from the start.
    public static func run<R>(damage: () -> (file: String, detail: String)?, committed: () -> Bool,
                              mayRunAgain: () -> Bool = { true },
                              beforeRunningAgain: (_ file: String, _ detail: String) -> Void = { _, _ in },
                              _ work: (_ fromJSON: Bool) throws -> R) throws -> (result: R, outcome: Outcome) {
        let first: Result<R, any Error>
        do {
            first = .success(try work(false))
        } catch {
            first = .failure(error)
        }
        var found = damage()
        if found == nil, case .failure(let e) = first, case StoreError.imageDamaged(let file, let detail)? = e as? StoreError {
            found = (file, detail)  // a store the caller does not hold (time travel's past)
        }
        guard let (file, detail) = found else { return (try first.get(), .sound) }
        if committed() { return (try first.get(), .damagedAfterCommit(file: file, detail: detail)) }
        guard mayRunAgain() else { throw StoreError.imageDamaged(file: file, detail: detail) }
        beforeRunningAgain(file, detail)
        return (try work(true), .ranAgainFromJSON(file: file, detail: detail))
    }
}
