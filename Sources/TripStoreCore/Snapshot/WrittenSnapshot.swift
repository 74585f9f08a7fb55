import TripStoreFormat
import TripStoreSystem

/// A snapshot written to its temporary file and flushed, with its image
/// being written beside it: made by `SnapshotWriter`, committed by
/// `Store.install`, or thrown away by `discard()` (also when it is freed).
/// One thread owns it at a time: the one that wrote it hands it over whole.
final class WrittenSnapshot: @unchecked Sendable {
    /// The last transaction it holds.
    let token: Int64
    /// `snapshot-<token>.jsonl.tmp`.
    let temp: String
    /// The whole file's length and checksum, which the image is bound to.
    let bytes: Int
    let crc: UInt32
    /// Where its history lines are, how many, and when the last one was committed.
    let history: Range<Int>
    let historyCount: Int
    let lastCommit: Double?
    /// Its object lines.
    let objects: Int
    /// Set once the rename made it the store's snapshot.
    var renamed = false
    private var historyDescriptor: Int32
    private var image: Parallel.Pending<UnboundImage?>?

    init(token: Int64, temp: String, bytes: Int, crc: UInt32, history: Range<Int>, historyCount: Int, historyFD: Int32,
         lastCommit: Double?, objects: Int, image: Parallel.Pending<UnboundImage?>) {
        self.token = token
        self.temp = temp
        self.bytes = bytes
        self.crc = crc
        self.history = history
        self.historyCount = historyCount
        self.historyDescriptor = historyFD
        self.lastCommit = lastCommit
        self.objects = objects
        self.image = image
    }

    /// A descriptor of the file, open for reading its history later, or -1
    /// when its history was read into memory before it was written.
    var historyFD: Int32 { historyDescriptor }

    /// Hands over the history descriptor (the caller closes it).
    func takeHistoryFD() -> Int32 {
        defer { historyDescriptor = -1 }
        return historyDescriptor
    }

    /// Waits for the image and hands it over (nil if it could not be written).
    func takeImage() -> UnboundImage? {
        defer { image = nil }
        return image?.wait()
    }

    /// Waits for the image thread (so nothing reads the table after this).
    func waitForImage() {
        _ = image?.wait()
    }

    /// Waits for the image and flushes it to disk. A cache needs no flush;
    /// a compaction without the lock does it before it takes the lock, so
    /// that the writers' next flushes do not wait for its dirty pages
    /// (a file system that orders data, as ext4 does, writes them first).
    func flushImage() {
        guard let image = image?.wait() ?? nil else { return }
        try? FileIO.fsync(image.fd, path: image.path, dataOnly: true)
    }

    /// Removes what was not handed over: the image, the descriptor and, unless renamed, the file.
    func discard() {
        takeImage()?.discard()
        let fd = takeHistoryFD()
        if fd >= 0 { FileIO.close(fd) }
        if !renamed { FileIO.unlink(temp) }
    }

    deinit { discard() }
}

/// The lines a journal holds after a snapshot's token: they become that
/// snapshot's journal when it is put in place.
struct JournalTail {
    /// Their bytes in the current journal.
    var bytes: Range<Int>
    var transactions: Int

    static let none = JournalTail(bytes: 0..<0, transactions: 0)
}
