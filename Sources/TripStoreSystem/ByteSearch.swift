#if canImport(Glibc)
import Glibc

/// glibc's `memmem`, which Swift's Glibc module leaves out (it is a GNU extension there).
@_silgen_name("memmem")
private func cMemmem(_ haystack: UnsafeRawPointer?, _ haystackCount: Int, _ needle: UnsafeRawPointer?, _ needleCount: Int) -> UnsafeMutableRawPointer?
#elseif canImport(Darwin)
import Darwin
private let cMemmem = memmem
#endif

/// Finding bytes among bytes, as the C library does it (far faster than a
/// loop over them in Swift).
package enum ByteSearch {
    /// Whether `needle` occurs in `haystack`; an empty needle occurs everywhere.
    package static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        guard needle.count > 0 else { return true }
        guard haystack.count >= needle.count else { return false }
        return cMemmem(haystack.baseAddress, haystack.count, needle.baseAddress, needle.count) != nil
    }
}
