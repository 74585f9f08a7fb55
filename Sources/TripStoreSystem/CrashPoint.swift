#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Test hook for crash tests: when `TRIPSTORE_CRASH_AT` names a point, the
/// process kills itself with SIGKILL there, as a power cut or `kill -9` would
/// (or, at `input-shrinks-after-map`, truncates its mapped input, and at
/// `grow`'s points appends to it, as another process may: see `MappedInput`
/// and `BulkImporter.plan(file:…)`).
/// Only debug builds (which the crash tests run) have it: in a release build
/// `armed` is nil and `hit` does nothing, whatever the environment says.
/// There is no injected-failure hook: a global switch would leak into tests
/// running in parallel.
package enum CrashPoint {
    #if TRIPSTORE_TEST_HOOKS
    package static let armed: String? = {
        guard let p = getenv("TRIPSTORE_CRASH_AT") else { return nil }
        return String(cString: p)
    }()

    @inline(__always) package static func hit(_ name: String) {
        guard let armed, armed == name else { return }
        kill(getpid(), SIGKILL)
    }

    /// Appends a newline to the file at `path` when armed at `name`: another
    /// process writing the input while an import reads it.
    package static func grow(_ path: String, at name: String) {
        guard let armed, armed == name else { return }
        let fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { return }
        _ = write(fd, "\n", 1)
        close(fd)
    }

    /// When `TRIPSTORE_PAUSE_AT` (a comma-separated list) names `name`, the
    /// thread sleeps there, holding open a window a test needs (files
    /// another thread must meet while they exist).
    package static func pause(_ name: String, milliseconds: UInt32) {
        guard let p = getenv("TRIPSTORE_PAUSE_AT"), String(cString: p).split(separator: ",").contains(Substring(name)) else { return }
        usleep(milliseconds * 1000)
    }
    #else
    package static let armed: String? = nil

    @inline(__always) package static func hit(_ name: String) {}

    @inline(__always) package static func grow(_ path: String, at name: String) {}

    @inline(__always) package static func pause(_ name: String, milliseconds: UInt32) {}
    #endif
}
