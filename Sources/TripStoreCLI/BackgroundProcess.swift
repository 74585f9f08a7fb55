#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a program that outlives the command: the automatic snapshot's
/// `tripstore compact --background`.
enum BackgroundProcess {
    /// Starts `program` with `arguments` in a session of its own, its
    /// standard streams on /dev/null, and does not wait for it (a command
    /// ends right after; the system reaps it).
    static func start(_ program: String, _ arguments: [String]) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in 0...2 {
            posix_spawn_file_actions_addopen(&actions, Int32(fd), "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        #if canImport(Glibc)
        // Not in the command's process group: a Ctrl-C at the terminal is the command's, not the snapshot's.
        // (glibc's POSIX_SPAWN_SETSID, from 2.26 on; Swift does not see it without _GNU_SOURCE.)
        posix_spawnattr_setflags(&attributes, 0x80)
        #endif
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid = pid_t()
        _ = posix_spawn(&pid, program, &actions, &attributes, argv, environ)
    }
}
