import TripStorePrefetch

/// Cache hints for loops that visit memory in an order the hardware cannot
/// guess (records reached through rows sorted by id): asking for the next
/// items while this one is worked on overlaps their cache misses instead
/// of waiting for each in turn. Only a hint; no result ever depends on it.
/// Swift has no prefetch of its own, so it is the C compiler's builtin, in
/// a header of this package's own (an LLVM intrinsic reached by its symbol
/// name would not build under the sanitizers).
enum Prefetch {
    /// Starts loading the cache line that holds `address` for reading.
    @inline(__always) static func read(_ address: UnsafeRawPointer) {
        tripstore_prefetch_read(address)
    }
}
