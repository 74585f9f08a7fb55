#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripStoreCLI
import TripStoreEngine

var environment: [String: String] = [:]
var p = environ
while let entry = p.pointee {
    let s = String(cString: entry)
    if let eq = s.firstIndex(of: "=") { environment[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
    p += 1
}
signal(SIGPIPE, SIG_IGN)
ProcessSetup.forCommandLine(
    onMappedInputFault: "error: the input file changed size or could not be read while it was imported; nothing was imported\n",
    exitCode: 1)
// The automatic snapshot runs as this same program, in a process of its own.
#if os(Linux)
// By its real path, as `ps` then shows it.
let program: String? = realpath("/proc/self/exe", nil).map { p in defer { free(p) }; return String(cString: p) } ?? "/proc/self/exe"
#else
let program: String? = nil
#endif
let status = TripStoreCLI.run(Array(CommandLine.arguments.dropFirst()), console: .standard(), environment: environment, program: program)
ProcessSetup.trace("command returned")
exit(status)
