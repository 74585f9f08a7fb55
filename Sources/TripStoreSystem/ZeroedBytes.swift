#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tables of byte-sized states that start at zero, from `calloc`: a large
/// one comes from pages the kernel zeroes when they are first touched, so a
/// table of a state per piece of a million-row image costs nothing until a
/// piece is used (a cold command touches a handful). Freed with `free`.
package enum ZeroedBytes {
    package static func allocate(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        // Out of memory is the only failure; it traps as any allocation does.
        guard let raw = calloc(max(1, count), 1) else { preconditionFailure("out of memory") }
        return raw.bindMemory(to: UInt8.self, capacity: max(1, count))
    }

    package static func free(_ bytes: UnsafeMutablePointer<UInt8>) {
        #if canImport(Glibc)
        Glibc.free(bytes)
        #else
        Darwin.free(bytes)
        #endif
    }
}
