import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names for temporary files that no other writer uses: the process id
/// (another process) and a count (another thread of this one, such as two
/// lookups that build the same cache at once, or two stores of one program).
package enum TemporaryNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var count = 0

    /// `PID.N`, new at each call.
    package static func unique() -> String {
        let n = lock.withLock {
            count += 1
            return count
        }
        return "\(getpid()).\(n)"
    }
}
