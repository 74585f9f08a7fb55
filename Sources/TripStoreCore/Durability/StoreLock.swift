import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The single-writer lock: an exclusive `flock` on `tripstore.lock`, holding
/// the writer's pid so a waiting writer can say who holds it.
package final class StoreLock {
    package static let fileName = "tripstore.lock"
    let fd: Int32
    let path: String

    /// Takes the lock, waiting up to `wait` seconds.
    package init(folder: String, wait: Double) throws(StoreError) {
        path = folder + "/" + StoreLock.fileName
        let deadline = StoreLock.now() + wait
        while true {
            let fd = try StoreLock.openLockFile(path, folder: folder)
            while !FileIO.tryLock(fd, exclusive: true) {
                if StoreLock.now() >= deadline {
                    let holder = StoreLock.readPID(fd)
                    FileIO.close(fd)
                    throw .locked(path: path, pid: holder)
                }
                usleep(20_000)
            }
            // The file may have been removed while we waited (a failed first
            // import removes the folder it made, under this lock): a lock on
            // a file that is no longer the folder's locks nothing, so take the
            // folder's own again.
            if StoreLock.isStill(fd, at: path) {
                self.fd = fd
                break
            }
            FileIO.close(fd)
        }
        FileIO.truncate(fd, to: 0)
        _ = FileIO.write(fd, Array("\(getpid())\n".utf8), at: 0)
    }

    /// Opens (creating it, and the folder if it went) the lock file, never through a link.
    private static func openLockFile(_ path: String, folder: String) throws(StoreError) -> Int32 {
        var fd: Int32 = -1
        for attempt in 0..<2 {
            do {
                // Never follow a link: truncating the lock would truncate its target.
                fd = try FileIO.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK)
                break
            } catch let e as IOError where e.code == ELOOP {
                throw .damaged(file: path, line: nil, detail: "the lock file is a symbolic link; it is not followed", repairable: false)
            } catch let e as IOError where e.code == ENOENT && attempt == 0 {
                do { try FileIO.makeDirectory(folder) } catch let e as IOError { throw .io(e) } catch { throw .io(IOError(operation: "mkdir", path: folder, code: EIO)) }
            } catch let e as IOError {
                throw .io(e)
            } catch {
                throw .io(IOError(operation: "open", path: path, code: EIO))
            }
        }
        guard FileIO.isRegularFile(fd) else {
            FileIO.close(fd)
            throw .damaged(file: path, line: nil, detail: "the lock file is not a regular file", repairable: false)
        }
        return fd
    }

    /// Whether the open file `fd` is still the one at `path`.
    private static func isStill(_ fd: Int32, at path: String) -> Bool {
        var open = stat(), named = stat()
        guard fstat(fd, &open) == 0, lstat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Removes the lock file while holding it, so that a writer waiting on
    /// it takes a new one instead of this unlinked one (see `init`).
    package func removeFile() {
        FileIO.unlink(path)
    }

    deinit {
        FileIO.unlock(fd)
        FileIO.close(fd)
    }

    /// True when some process holds the writer's lock (used by readers to stay quiet about a torn tail).
    package static func isHeld(folder: String) -> Bool {
        guard let fd = try? FileIO.open(folder + "/" + fileName, O_RDONLY) else { return false }
        defer { FileIO.close(fd) }
        if FileIO.tryLock(fd, exclusive: false) {
            FileIO.unlock(fd)
            return false
        }
        return true
    }

    static func readPID(_ fd: Int32) -> Int32? {
        var buf = [UInt8](repeating: 0, count: 32)
        let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: buf[0..<n], as: UTF8.self).trimmed(" \n"))
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
