#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Test hook for crash tests: when `TRIPSTORE_CRASH_AT` names a point, the
/// process kills itself with SIGKILL there, as a power cut or `kill -9` would
/// (or, at `input-shrinks-after-map`, truncates its mapped input, as another
/// process may: see `MappedInput`).
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

    @inline(__always) package static func pause(_ name: String, milliseconds: UInt32) {}
    #endif
}
