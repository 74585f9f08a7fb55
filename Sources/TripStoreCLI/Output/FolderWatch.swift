#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits for something in a folder to change: with inotify where the kernel
/// has it (the wait costs nothing until a writer touches a file), else by
/// polling the folder's files every `pollInterval` seconds.
final class FolderWatch {
    private var fd: Int32 = -1
    /// Used without inotify: how often to look.
    let pollInterval: Double
    /// Whether the kernel watches for us (false: polling).
    var usesInotify: Bool { fd >= 0 }

    init(folder: String, pollInterval: Double = 0.1, useInotify: Bool = true) {
        self.pollInterval = pollInterval
        #if os(Linux)
        guard useInotify else { return }
        let f = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard f >= 0 else { return }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE | IN_ATTRIB)
        guard inotify_add_watch(f, folder, mask) >= 0 else {
            _ = close(f)
            return
        }
        fd = f
        #endif
    }

    deinit {
        if fd >= 0 { _ = close(fd) }
    }

    /// Returns after a change in the folder (true), or after `timeout`
    /// seconds or a signal (false). A polling watch always waits one interval
    /// (or `timeout`, if shorter) and says true: the caller looks again.
    /// `output`, when given, is watched too: its reader going away (a closed
    /// pipe) ends the wait at once.
    @discardableResult
    func wait(timeout: Double, output: Int32? = nil) -> Bool {
        guard fd >= 0 else {
            let seconds = max(0, min(timeout, pollInterval))
            var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
            _ = nanosleep(&ts, nil)
            return true
        }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        if let output { fds.append(pollfd(fd: output, events: 0, revents: 0)) }
        let n = poll(&fds, nfds_t(fds.count), Int32(max(0, min(timeout, 86_400)) * 1000))
        guard n > 0, fds[0].revents != 0 else { return false }
        // Drain the events: which file changed does not matter, only that one did.
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
        return true
    }
}

extension FolderWatch {
    /// Whether `fd` is a pipe or socket whose reader has gone (nothing
    /// written to it could ever be read).
    static func readerGone(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: 0, revents: 0)
        guard poll(&p, 1, 0) > 0 else { return false }
        return p.revents & Int16(POLLERR | POLLHUP) != 0
    }
}

/// SIGINT and SIGTERM as a flag that a long-running command checks between
/// waits, so that it can stop cleanly (exit 0) instead of being killed.
enum Interruption {
    nonisolated(unsafe) private static var flag: sig_atomic_t = 0

    /// Installs the handlers (once per process is enough), and unblocks the
    /// two signals: a parent may start us with them blocked (Foundation's
    /// `Process` passes its thread's mask on), and then nothing would stop us.
    static func install() {
        signal(SIGINT) { _ in Interruption.flag = 1 }
        signal(SIGTERM) { _ in Interruption.flag = 1 }
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Whether SIGINT or SIGTERM arrived since `install`.
    static var requested: Bool { flag != 0 }
}
