import Foundation

#if canImport(Glibc)
@_silgen_name("malloc_info")
private func glibcMallocInfo(_ options: Int32, _ stream: UnsafeMutablePointer<FILE>?) -> Int32
#endif

/// Phase timings on stderr when `TRIPSTORE_TRACE` is set, for profiling the
/// load and import paths (the benchmark reads them too).
package enum Trace {
    static let enabled: Bool = getenv("TRIPSTORE_TRACE") != nil
    private static let previous = Previous()

    /// The time of the last mark, behind a lock (marks may come from any thread).
    private final class Previous: @unchecked Sendable {
        private let lock = NSLock()
        private var time = Trace.now()

        func swap(_ t: Double) -> Double {
            lock.lock()
            defer { lock.unlock() }
            let old = time
            time = t
            return old
        }
    }

    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// When the process started tracing: each mark also says how long after.
    private static let origin = Trace.now()

    /// Prints the time since the previous mark.
    package static func mark(_ phase: @autoclosure () -> String) {
        guard enabled else { return }
        let t = now()
        let line = "trace: \(phase()) \(String(format3(t - previous.swap(t))))s @\(format3(t - origin))\(memory())\(threadTimes())\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// ", thread user U s, sys S s": the calling thread's CPU time so far
    /// (Linux), which tells its own work from waiting on the kernel (fresh pages).
    static func threadTimes() -> String {
        #if os(Linux)
        var usage = rusage()
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return "" }  // RUSAGE_THREAD
        func seconds(_ t: timeval) -> String { format3(Double(t.tv_sec) + Double(t.tv_usec) / 1e6) }
        return ", thread user \(seconds(usage.ru_utime)) s, sys \(seconds(usage.ru_stime)) s"
        #else
        return ""
        #endif
    }

    /// ", rss N MB, peak M MB" from /proc (Linux), else nothing.
    static func memory() -> String {
        guard let f = fopen("/proc/self/status", "r") else { return "" }
        defer { fclose(f) }
        var rss = "", peak = ""
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, f) != nil {
            let s = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let kb = s.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
            if s.hasPrefix("VmRSS:") { rss = kb }
            if s.hasPrefix("VmHWM:") { peak = kb }
        }
        guard let r = Int(rss), let p = Int(peak) else { return "" }
        return ", rss \(r / 1024) MB, peak \(p / 1024) MB\(heapInUse())"
    }

    /// ", heap N MB": bytes malloc has handed out and not had back (glibc),
    /// which the resident size hides once freed memory is kept for reuse.
    static func heapInUse() -> String {
        #if canImport(Glibc)
        var text: UnsafeMutablePointer<CChar>?
        var length = 0
        guard let stream = open_memstream(&text, &length) else { return "" }
        _ = glibcMallocInfo(0, stream)
        fclose(stream)
        guard let text else { return "" }
        defer { free(text) }
        // The last (all-heaps) totals of malloc_info's XML: the heap's size, less what is free in it.
        let xml = String(cString: text)
        func size(after tag: String) -> Int {
            guard let r = xml.range(of: tag, options: .backwards),
                  let s = xml[r.upperBound...].range(of: "size=\"") else { return 0 }
            return Int(xml[s.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        let inUse = size(after: "<system type=\"current\"") - size(after: "<total type=\"fast\"") - size(after: "<total type=\"rest\"")
        return ", heap in use \(inUse >> 20) MB"
        #else
        return ""
        #endif
    }

    static func format3(_ v: Double) -> String {
        let ms = Int((v * 1000).rounded())
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - String(ms % 1000).count))\(ms % 1000)"
    }
}
