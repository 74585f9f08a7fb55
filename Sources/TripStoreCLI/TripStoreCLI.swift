#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripStoreEngine
import TripStoreModels

/// The `tripstore` command line as a library: `main.swift` only calls `run`.
public enum TripStoreCLI {
    /// Runs one command line and returns the exit code. `program`: this
    /// program's executable, which a write that makes the automatic snapshot
    /// due starts as `tripstore compact --background` (nil: the write
    /// writes it before it returns, as in a program that runs commands in
    /// its own process).
    public static func run(_ arguments: [String], console: Console, environment: [String: String],
                           input: InputSource = .standard, program: String? = nil) -> Int32 {
        let code: Int32
        do {
            let parsed = try ArgumentScanner.scan(arguments)
            if parsed.manualPage {
                console.out(ManualPage.text)
                console.flush()
                return 0
            }
            if parsed.version {
                console.out(versionText)
                console.flush()
                return 0
            }
            guard let name = parsed.command, let spec = Commands.spec(name) else {
                console.out(Commands.overview)
                console.flush()
                return parsed.help || arguments.isEmpty ? (arguments.isEmpty ? 1 : 0) : 1
            }
            if parsed.help {
                console.out(spec.help)
                console.flush()
                return 0
            }
            if let most = spec.maxPositionals, parsed.positionals.count > most {
                // A word too many is a mistake (a second file, a stray id), never ignored.
                throw CLIError("unexpected '\(parsed.positionals[most])'", usage: "usage: " + spec.usage)
            }
            let storePath = parsed.value("store") ?? environment["TRIPSTORE_DIR"] ?? "./tripstore"
            let schema = try SchemaResolution.resolve(parsed, storePath: storePath)
            let ctx = CommandContext(args: parsed, console: console, environment: environment,
                                     schema: schema, spec: spec, input: input, program: program)
            code = try runRecovering(name, ctx)
        } catch {
            let e = CLIError.from(error)
            console.err("error: " + e.message.split(separator: "\n", omittingEmptySubsequences: false)
                .map { String($0).escapingControls() }.joined(separator: "\n"))
            if let u = e.usage { console.err(u) }
            console.flush()
            return e.exitCode
        }
        console.flush()
        return code
    }

    /// What `tripstore --version` prints: the program's version and the store formats it reads and writes.
    static var versionText: String {
        """
        tripstore \(StoreFormats.programVersion)
        store formats: snapshot and journal \(StoreFormats.snapshot) (\(StoreFormats.snapshot - 1) until history is pruned; \
        reads 1 to \(StoreFormats.snapshot)), \
        snapshot image \(StoreFormats.image), schema record \(StoreFormats.schemaRecord)

        """
    }

    /// Runs a command through the library's `ImageRecovery`: damage to an
    /// image that the command meets after the open runs it again from the
    /// JSON (its output held back until then, where it checks pieces as it
    /// touches them), unless it already committed.
    private static func runRecovering(_ name: String, _ ctx: CommandContext) throws -> Int32 {
        let console = ctx.console
        let touchesLittle = ctx.spec.touchesLittle
        if touchesLittle {
            ctx.session.imageChecks = .onFirstTouch
            console.hold(check: { ctx.session.checkEverything() })
        }
        do {
            let (code, outcome) = try ImageRecovery.run(
                damage: { ctx.session.damage.map { (file: $0.image, detail: $0.detail) } },
                committed: { ctx.session.committed },
                // Input read line by line (`shell`, `apply -`) is gone; input read whole is kept.
                mayRunAgain: { ctx.input.mayBeReadAgain },
                beforeRunningAgain: { file, detail in
                    if touchesLittle { console.discardHeld() }
                    ctx.session.closeAll()
                    console.err("warning: \(file): \(detail); \(touchesLittle ? "answered" : "done") from the JSON instead\(imageAdvice)")
                }) { fromJSON in
                    guard fromJSON else { return try Commands.run(name, ctx) }
                    var again = ctx
                    again.session = CommandSession()
                    again.session.useImage = false
                    return try Commands.run(name, again)
                }
            if touchesLittle { console.release() }
            if case .damagedAfterCommit(let file, let detail) = outcome {
                console.err("warning: \(file): \(detail)\(imageAdvice)")
            }
            return code
        } catch {
            if touchesLittle { console.release() }
            throw error
        }
    }

    private static let imageAdvice = "; 'tripstore compact' writes a new one, 'tripstore verify --repair' deletes it"
}

/// Where `import -`, `apply -` and `shell` read from: standard input, or text in tests.
public final class InputSource {
    private var lines: [String]?
    private let text: [UInt8]?
    /// Bytes read ahead by `readLineBytes`: from `start`, with no newline before `scanned`.
    private var pending: [UInt8] = []
    private var start = 0, scanned = 0
    private var ended = false
    private var scratch: [UInt8] = []

    /// The process's standard input.
    public static var standard: InputSource { InputSource(text: nil) }

    /// Fixed text, for tests.
    package static func text(_ s: String) -> InputSource { InputSource(text: Array(s.utf8)) }

    /// Bytes that arrive in these pieces, one a read, as through a pipe (for tests).
    package static func arriving(_ pieces: [[UInt8]]) -> InputSource {
        let source = InputSource(text: nil)
        source.pieces = pieces[...]
        return source
    }

    /// The pieces still to arrive, in place of standard input.
    private var pieces: ArraySlice<[UInt8]>?

    init(text: [UInt8]?) {
        self.text = text
    }

    /// One read of standard input (or of the next piece) into `buffer`: the bytes read, 0 at the end.
    private func readSome(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if pieces != nil {
            var next = pieces?.popFirst()
            while next?.isEmpty == true { next = pieces?.popFirst() }
            guard let piece = next else { return 0 }
            let n = min(piece.count, buffer.count)
            piece.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
            if n < piece.count, var rest = pieces {
                rest.insert(Array(piece[n...]), at: rest.startIndex)
                pieces = rest
            }
            return n
        }
        var n = 0
        repeat {
            n = read(0, buffer.baseAddress, buffer.count)
        } while n < 0 && errno == EINTR
        return n
    }

    /// Everything, as bytes.
    public func readAll() -> [UInt8] {
        (try? readAll(looksLikeJSON: { _ in true })) ?? []
    }

    /// Reads all of standard input, checking the first bytes as they arrive:
    /// input that cannot be JSON (a stream of NULs, say) fails at once instead
    /// of being read to its end.
    func readAll(looksLikeJSON: ([UInt8]) -> Bool) throws -> [UInt8] {
        if let text { return text }
        if let whole { return whole }
        let out = try readAllOnce(looksLikeJSON: looksLikeJSON)
        whole = out
        return out
    }

    /// Standard input read whole, kept: a command run again (from the JSON,
    /// after damage to an image) reads the same bytes.
    private var whole: [UInt8]?
    /// Whether input was read a line at a time: what was read is gone.
    private var readByLines = false

    /// Whether a command that read this input may read it again from the start.
    var mayBeReadAgain: Bool { !readByLines }

    private func readAllOnce(looksLikeJSON: ([UInt8]) -> Bool) throws -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        var checked = false
        while true {
            let n = buf.withUnsafeMutableBytes { readSome(into: $0) }
            if n <= 0 { break }
            out.append(contentsOf: buf[0..<n])
            // Only the new bytes are looked at: leading white space costs one pass.
            if !checked, let first = buf[0..<n].first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) {
                checked = true
                if !looksLikeJSON([first]) { throw CLIError("standard input is not JSON: it starts with byte 0x\(String(first, radix: 16))") }
            }
        }
        return out
    }

    /// The next line as bytes, without its newline (or CR LF), or nil at
    /// the end: a line of any length (a feed line runs to gigabytes), handed
    /// over as soon as its newline arrives.
    public func readLineBytes() -> [UInt8]? {
        readByLines = true
        if let text, !ended {
            pending = text
            ended = true
        }
        while true {
            if let newline = pending[scanned...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start && pending[end - 1] == 0x0D { end -= 1 }
                if start == 0 && end >= 1 << 20 {
                    // A long line is handed over in its own buffer, not copied.
                    var line = pending
                    pending = Array(pending[(newline + 1)...])
                    scanned = 0
                    line.removeSubrange(end...)
                    return line
                }
                let line = Array(pending[start..<end])
                start = newline + 1
                scanned = start
                if start >= 1 << 20 {
                    // A fresh buffer for what is left: a long line's is not kept for the rest of a follow.
                    pending = Array(pending[start...])
                    start = 0
                    scanned = 0
                }
                return line
            }
            scanned = pending.count
            if ended {
                guard start < pending.count else { return nil }
                defer { start = pending.count }
                return Array(pending[start...])
            }
            // Into a buffer kept for the purpose: a pipe hands over a few kilobytes a read.
            if scratch.isEmpty { scratch = [UInt8](repeating: 0, count: 1 << 20) }
            let n = scratch.withUnsafeMutableBytes { readSome(into: $0) }
            if n <= 0 { ended = true } else { pending.append(contentsOf: scratch[0..<n]) }
        }
    }

    /// The next line without its newline, or nil at the end.
    public func readLine() -> String? {
        readByLines = true
        guard let text else { return Swift.readLine(strippingNewline: true) }
        if lines == nil {
            lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines?.last == "" { lines?.removeLast() }
        }
        guard let l = lines, !l.isEmpty else { return nil }
        lines!.removeFirst()
        return l[0]
    }
}
