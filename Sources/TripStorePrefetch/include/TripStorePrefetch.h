#ifndef TRIPSTORE_PREFETCH_H
#define TRIPSTORE_PREFETCH_H

/// Starts loading the cache line that holds `address` for reading, to be
/// kept in every level of the cache (`prefetcht0` on x86-64, `prfm
/// pldl1keep` on arm64). A hint only: it never faults, whatever the address.
/// Inline in a header, so Swift code that calls it compiles to the one
/// instruction, and builds under the sanitizers like any C.
static inline void tripstore_prefetch_read(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
