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
    /// While set, output is held back (see `hold`); the check decides when it may go.
    private var holdCheck: (() -> Bool)?
    private var heldErr: [UInt8] = []
    /// A held run that will be discarded: its output is dropped as it comes.
    private var discarding = false
    /// Whether the terminal shows a progress line that the next error must clear.
    private var progressShowing = false

    /// The process's own standard streams.
    public static func standard() -> Console {
        Console(capture: false, outIsTerminal: isatty(1) == 1, errIsTerminal: isatty(2) == 1, inIsTerminal: isatty(0) == 1)
    }

    /// A console that keeps everything written, for tests.
    package static func captured(terminal: Bool = false) -> Console {
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
        if discarding { return }
        if capture && holdCheck == nil {
            capturedOut.append(contentsOf: bytes)
            return
        }
        pending.append(contentsOf: bytes)
        if pending.count >= 1 << 16 { flush() }
    }

    /// Holds standard output and error back until the command is known to
    /// rest on sound data: its store was opened without checking every piece
    /// of the snapshot image, and damage found later means the command runs
    /// again from the JSON, so nothing it printed may have gone out yet. When
    /// the held output grows large, `check` is asked to check everything
    /// (true: sound, and output flows from then on).
    func hold(check: @escaping () -> Bool) {
        holdCheck = check
        discarding = false
    }

    /// Sends what was held, and stops holding.
    func release() {
        holdCheck = nil
        discarding = false
        let err = heldErr
        heldErr = []
        flush()
        if !err.isEmpty { writeErr(err) }
    }

    /// Drops what was held (the command runs again), and stops holding.
    func discardHeld() {
        holdCheck = nil
        discarding = false
        pending.removeAll()
        heldErr.removeAll()
    }

    public func out(_ text: String) { out(Array(text.utf8)) }

    public func line(_ text: String) { out(Array(text.utf8) + [0x0A]) }

    public func err(_ text: String) {
        let bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
        if holdCheck != nil {
            if !discarding { heldErr.append(contentsOf: bytes) }
            return
        }
        flush()
        // An error never shares its line with a progress line.
        if progressShowing { endProgress() }
        writeErr(bytes)
    }

    private func writeErr(_ bytes: [UInt8]) {
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
        progressShowing = true
    }

    public func endProgress() {
        guard errIsTerminal, !capture else { return }
        Console.writeAll(2, Array("\r\u{1B}[K".utf8))
        progressShowing = false
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
        guard !pending.isEmpty else { return }
        if let check = holdCheck {
            guard pending.count >= 1 << 16 else { return }
            guard check() else {
                // Damage: this run's output is wrong and will be dropped.
                discarding = true
                pending.removeAll()
                return
            }
            holdCheck = nil
            let err = heldErr
            heldErr = []
            if !err.isEmpty { writeErr(err) }
        }
        if capture {
            capturedOut.append(contentsOf: pending)
        } else {
            writeOut(pending)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Whether standard output was found closed (a reader of the pipe went away).
    public private(set) var outputClosed = false

    private func writeOut(_ bytes: [UInt8]) {
        if !Console.writeAll(1, bytes) { outputClosed = true }
    }

    /// False when the descriptor would take no more (a closed pipe).
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
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
        return done == bytes.count
    }
}

/// A value (not an object) handed to `Console.keepUntilExit`.
final class KeptValue<T> {
    let value: T
    init(_ value: T) { self.value = value }
}
