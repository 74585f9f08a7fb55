/// SplitMix64: a small, fast random generator that gives the same numbers on
/// every platform, for deterministic data sets and randomized tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64

    /// Nearby seeds start far apart on the sequence (the seed is hashed first).
    public init(seed: UInt64) {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        state = z ^ (z >> 33)
    }

    /// The next pseudo-random 64 bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
