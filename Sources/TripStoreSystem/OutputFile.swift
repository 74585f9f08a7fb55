#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file created (or emptied) for writing, closed when the value goes:
/// a program writes its bytes without holding a raw descriptor.
public final class OutputFile {
    /// Where it writes.
    public let path: String
    private let descriptor: Int32

    /// Creates the file at `path`, or empties the one there.
    /// - Throws: `IOError` when it cannot be opened for writing.
    public init(creating path: String) throws {
        self.path = path
        descriptor = try FileIO.open(path, O_WRONLY | O_CREAT | O_TRUNC)
    }

    deinit { FileIO.close(descriptor) }

    /// Appends `bytes`, all of them.
    /// - Throws: `IOError` when a write fails (a full disk, a lost device).
    public func write(_ bytes: [UInt8]) throws {
        try FileIO.writeAll(descriptor, bytes, path: path)
    }
}
