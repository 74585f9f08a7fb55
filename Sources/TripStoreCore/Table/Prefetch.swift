/// LLVM's target-independent prefetch intrinsic (`prefetcht0` on x86-64,
/// `prfm pldl1keep` on arm64), reached by its symbol name: Swift has no
/// other way to ask for it, and a plain load would stall until it arrives.
@_silgen_name("llvm.prefetch.p0")
private func llvmPrefetch(_ address: UnsafeRawPointer, _ write: Int32, _ locality: Int32, _ cacheType: Int32)

/// Cache hints for loops that visit memory in an order the hardware cannot
/// guess (records reached through rows sorted by id): asking for the next
/// items while this one is worked on overlaps their cache misses instead
/// of waiting for each in turn. Only a hint; no result ever depends on it.
enum Prefetch {
    /// Starts loading the cache line that holds `address` for reading.
    @inline(__always) static func read(_ address: UnsafeRawPointer) {
        llvmPrefetch(address, 0, 3, 1)
    }
}
