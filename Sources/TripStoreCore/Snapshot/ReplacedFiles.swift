import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a new snapshot replaced, unlinked but held open by the process
/// that put it in place, so that their blocks are freed there and not by a
/// command that happened to be reading them.
///
/// A file's blocks are freed when the last process that has it open or
/// mapped lets it go, and freeing a snapshot of a million trips takes that
/// process most of a second. Every reader holds a shared `flock` on the
/// snapshot and image it reads (`holdForReading`), kept as long as the file
/// is open or mapped; `release` waits until it can take the lock
/// exclusively, which is when no reader has the file any more, and then
/// closes it. A reader that outlasts the wait frees the file itself, as
/// before: nothing is ever read from a file after it is truncated, because
/// it never is.
final class ReplacedFiles {
    private var held: [(fd: Int32, path: String)] = []

    /// Unlinks each of `paths`, keeping it open (unlinking an open file frees nothing yet).
    func take(_ paths: [String]) {
        for path in paths {
            if let fd = try? FileIO.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) {
                if FileIO.isRegularFile(fd) { held.append((fd, path)) } else { FileIO.close(fd) }
            }
            FileIO.unlink(path)
        }
    }

    /// Waits, up to `seconds` in all, for the readers that still have each
    /// file to let it go, then closes it, freeing its blocks in this process.
    func release(waitingForReaders seconds: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + seconds
        for (fd, _) in held {
            while !FileIO.tryLock(fd, exclusive: true) {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                guard Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 < end else { break }
                usleep(10_000)
            }
            FileIO.close(fd)
        }
        held = []
    }

    deinit { release(waitingForReaders: 0) }

    /// Marks an open snapshot or image as read by this process until it is
    /// closed and unmapped, so that a compaction that replaces it waits for
    /// this process to let it go before freeing it.
    static func holdForReading(_ fd: Int32) {
        _ = FileIO.tryLock(fd, exclusive: false)
    }
}
