#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command writes: standard output and error, or buffers in tests.
public final class Console {
    public private(set) var capturedOut: [UInt8] = []
    public private(set) var capturedErr: [UInt8] = []
    let capture: Bool
    /// Whether standard output / error are terminals (tables and progress only there).
    public let outIsTerminal: Bool
    public let errIsTerminal: Bool
    public let inIsTerminal: Bool
    private var pending: [UInt8] = []

    /// The process's own standard streams.
    public static func standard() -> Console {
        Console(capture: false, outIsTerminal: isatty(1) == 1, errIsTerminal: isatty(2) == 1, inIsTerminal: isatty(0) == 1)
    }

    /// A console that keeps everything written, for tests.
    public static func captured(terminal: Bool = false) -> Console {
        Console(capture: true, outIsTerminal: terminal, errIsTerminal: false, inIsTerminal: false)
    }

    init(capture: Bool, outIsTerminal: Bool, errIsTerminal: Bool, inIsTerminal: Bool) {
        self.capture = capture
        self.outIsTerminal = outIsTerminal
        self.errIsTerminal = errIsTerminal
        self.inIsTerminal = inIsTerminal
    }

    public var outText: String { String(decoding: capturedOut, as: UTF8.self) }
    public var errText: String { String(decoding: capturedErr, as: UTF8.self) }

    /// Writes bytes to standard output (buffered; `flush` sends them).
    public func out(_ bytes: [UInt8]) {
        if capture {
            capturedOut.append(contentsOf: bytes)
            return
        }
        pending.append(contentsOf: bytes)
        if pending.count >= 1 << 16 { flush() }
    }

    public func out(_ text: String) { out(Array(text.utf8)) }

    public func line(_ text: String) { out(Array(text.utf8) + [0x0A]) }

    public func err(_ text: String) {
        flush()
        let bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
        if capture {
            capturedErr.append(contentsOf: bytes)
            return
        }
        Console.writeAll(2, bytes)
    }

    /// A progress line on a terminal, rewritten in place.
    public func progress(_ text: String) {
        guard errIsTerminal, !capture else { return }
        Console.writeAll(2, Array("\r\(text)\u{1B}[K".utf8))
    }

    public func endProgress() {
        guard errIsTerminal, !capture else { return }
        Console.writeAll(2, Array("\r\u{1B}[K".utf8))
    }

    /// Objects the process keeps until it exits: freeing a large store object
    /// by object takes longer than the exit that follows.
    nonisolated(unsafe) private static var keptUntilExit: [AnyObject] = []

    /// Keeps `object` alive until the process exits (only for the real process).
    public func keepUntilExit(_ object: AnyObject) {
        guard !capture else { return }
        Console.keptUntilExit.append(object)
    }

    public func flush() {
        guard !capture, !pending.isEmpty else { return }
        Console.writeAll(1, pending)
        pending.removeAll(keepingCapacity: true)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var done = 0
        bytes.withUnsafeBytes { p in
            while done < p.count {
                let n = write(fd, p.baseAddress! + done, p.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return  // a closed pipe: nothing more to say
                }
                done += n
            }
        }
    }
}

/// A value (not an object) handed to `Console.keepUntilExit`.
final class KeptValue<T> {
    let value: T
    init(_ value: T) { self.value = value }
}
