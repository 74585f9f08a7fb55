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
MemoryTuning.keepFreedMemory()
MappedInput.allowMapping()
let status = TripStoreCLI.run(Array(CommandLine.arguments.dropFirst()), console: .standard(), environment: environment)
Trace.mark("command returned")
exit(status)
