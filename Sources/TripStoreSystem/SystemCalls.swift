#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The C library calls whose names `FileIO` reuses for its own members, under
// names of their own, so nothing needs a module-qualified `Glibc.` call and
// the same code compiles on Linux and Darwin.

@inline(__always) func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
@inline(__always) func systemClose(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) func systemRead(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int) -> Int { read(fd, p, n) }
@inline(__always) func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
@inline(__always) func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
@inline(__always) func systemUnlink(_ path: String) -> Int32 { unlink(path) }

/// Flushes a file's data and metadata to stable storage. On Darwin `fsync`
/// only reaches the drive's cache; `F_FULLFSYNC` asks the drive to flush it.
@inline(__always) func systemFsync(_ fd: Int32) -> Int32 {
    #if canImport(Darwin)
    return fcntl(fd, F_FULLFSYNC) == -1 ? fsync(fd) : 0
    #else
    return fsync(fd)
    #endif
}

/// Flushes a file's data (and its size), skipping times. Darwin has no
/// `fdatasync`: the full flush stands in.
@inline(__always) func systemFdatasync(_ fd: Int32) -> Int32 {
    #if canImport(Darwin)
    return systemFsync(fd)
    #else
    return fdatasync(fd)
    #endif
}
