import Foundation

/// An interactive bash, zsh or fish in a private tmux server, typed into
/// as a person types (`send-keys`) and read back from the screen
/// (`capture-pane`). No rc file of the user's is read: HOME is a scratch
/// folder, the shell starts without its startup files, and the prompt is
/// `$ `. Every wait polls the screen up to `timeout`.
final class TypedShell {
    let shell: String
    /// The shell's working folder (and, under it, its HOME).
    let folder: String
    private let tmux: String
    private let socket = "tripstore-" + UUID().uuidString.prefix(8)
    var timeout: TimeInterval = 20

    /// The first of the usual places that holds `name`, if any.
    static func program(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `shell` in `folder` with `path` as its PATH, and types
    /// `setup` (one command a line); nil where tmux or the shell is not
    /// installed (CI installs them).
    init?(_ shell: String, folder: String, path: String, environment: [String: String] = [:], setup: [String]) throws {
        guard let tmux = Self.program("tmux"), let binary = Self.program(shell) else { return nil }
        self.shell = shell
        self.folder = folder
        self.tmux = tmux
        let home = folder + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var env = ["HOME=" + home, "PATH=" + path, "TERM=xterm-256color", "LANG=C.UTF-8", "PS1=$ "]
        env += environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let flags: [String]
        switch shell {
        case "bash": flags = ["--norc", "--noprofile"]
        case "zsh": flags = ["-f"]
        default: flags = ["--no-config", "-C", "function fish_prompt; printf '$ '; end; set -g fish_autosuggestion_enabled 0"]
        }
        serverID = try Self.spawn([tmux, "-D", "-L", socket, "-f", "/dev/null"])
        // Several arguments: tmux runs the program itself, with no shell of the user's between.
        let session = ["new-session", "-d", "-x", "200", "-y", "50", "-c", folder, "/usr/bin/env", "-i"] + env + [binary] + flags
        // list-sessions starts no server: once it answers, new-session finds this one.
        let end = Date().addingTimeInterval(timeout)
        while try run(["list-sessions"]).status != 0 {
            guard Date() < end else { throw Failure(message: "the tmux server did not start") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard try run(session).status == 0 else { throw Failure(message: "tmux started no \(shell)") }
        for line in setup { try type(line) }
        try clear()
    }

    deinit {
        guard serverID > 0 else { return }
        _ = try? run(["kill-server"])
        var status: Int32 = 0
        let end = Date().addingTimeInterval(5)
        while waitpid(serverID, &status, WNOHANG) == 0 {
            if Date() > end { kill(serverID, SIGKILL) }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    private var serverID: pid_t = 0

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The test's environment but for a tmux of its own, whose socket
    /// (`-L`, which tmux leaves behind) goes with the test run's folder.
    private static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["TMUX"] = nil
        env["TMUX_TMPDIR"] = CLIRunner.runRoot
        return env
    }

    /// Starts `args` with no signal blocked or ignored, and /dev/null for
    /// its standard files; its pid. (Foundation's Process passes on the
    /// signals this process blocks, so the tmux server, and the shells it
    /// starts, would never see SIGTERM or SIGHUP; and it would wait for a
    /// server that runs on.)
    static func spawn(_ args: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&files, fd, "/dev/null", O_RDWR, 0) }
        let argv = args.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0.key + "=" + $0.value) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let error = posix_spawn(&pid, args[0], &files, &attributes, argv, envp)
        guard error == 0 else { throw Failure(message: "cannot start \(args[0]): error \(error)") }
        return pid
    }

    /// Runs a tmux client command: its exit status and what it printed.
    @discardableResult
    private func run(_ args: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tmux)
        p.arguments = ["-L", socket, "-f", "/dev/null"] + args
        p.environment = Self.environment
        let out = Pipe()
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// The screen's lines, trailing blanks and empty lines at the end left off.
    func screen() throws -> [String] {
        var lines = try run(["capture-pane", "-p", "-J"]).output.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop(while: { $0 == " " }).reversed())
        }
        while lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Polls the screen until `done` holds; the screen then. Throws, with
    /// the screen, where it does not within `timeout` (a line left open, a
    /// prompt that never came back), so a stuck session fails at once.
    @discardableResult
    func wait(for what: String, _ done: ([String]) -> Bool) throws -> [String] {
        let end = Date().addingTimeInterval(timeout)
        var lines = try screen()
        while !done(lines) {
            guard Date() < end else { throw Failure(message: "\(shell): no \(what) on the screen:\n" + lines.joined(separator: "\n")) }
            Thread.sleep(forTimeInterval: 0.05)
            lines = try screen()
        }
        return lines
    }

    /// Keys by name (`Tab`, `Enter`, `C-u`).
    func keys(_ names: String...) throws { try run(["send-keys"] + names) }

    /// Text typed as it is, no key names read in it.
    func text(_ s: String) throws { try run(["send-keys", "-l", s]) }

    /// Types a command, runs it and waits for the next prompt; its output.
    @discardableResult
    func type(_ command: String) throws -> [String] {
        try clear()
        try text(command)
        return try enter()
    }

    /// Enter: runs the line and waits for the next prompt; what it printed.
    func enter() throws -> [String] {
        try keys("Enter")
        let lines = try wait(for: "prompt after the command") { $0.count > 1 && $0.last == "$" }
        return Array(lines.dropFirst().dropLast())
    }

    /// An empty line on an empty screen.
    func clear() throws {
        try keys("C-u")
        try keys("C-l")
        try run(["clear-history"])
        try wait(for: "empty screen") { $0 == ["$"] }
    }

    /// Types `typed` and a Tab on an empty screen; the line after the
    /// prompt once the shell has completed it (or left it as it was).
    func complete(_ typed: String) throws -> String {
        try clear()
        try text(typed)
        try keys("Tab")
        // A mark typed after the Tab shows once the shell has read the Tab: the line before it is final.
        try text("%")
        let lines = try wait(for: "mark after the Tab") { $0.first?.hasSuffix("%") == true }
        try keys("BSpace")
        try wait(for: "line without the mark") { $0.first?.hasSuffix("%") == false }
        let line = (lines.first ?? "").dropFirst(2).dropLast()
        return String(line.reversed().drop(while: { $0 == " " }).reversed())
    }
}
