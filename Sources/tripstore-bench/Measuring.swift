#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

// Figures read from the system and from samples.

/// The child's own high-water mark (VmHWM, which its trace prints): its
/// ru_maxrss would start from this process's size at fork.
func tracedPeak(_ traced: String) -> Double {
    let peakMB = traced.split(separator: "\n").last { $0.contains("peak ") }
        .flatMap { $0.components(separatedBy: "peak ").last?.split(separator: " ").first.flatMap { Double($0) } } ?? 0
    return peakMB * 1024 * 1024
}

/// The `p`th percentile of `xs` (nearest rank).
func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s[max(0, min(s.count - 1, Int((p / 100 * Double(s.count)).rounded(.up)) - 1))]
}

/// This process's resident size now (VmRSS).
func residentBytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) * 1024
    }
    return 0
}
