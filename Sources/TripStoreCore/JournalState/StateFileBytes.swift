import TripStoreSystem

/// The bytes of a replay state file as an open read them: mapped where the
/// system can, else read into memory.
///
/// Why mapped: an open reads every frame, and a copy into fresh memory
/// costs a page fault and a zeroed page per 4 KB on top of the copy; mapped,
/// the bytes are the page cache's pages. A mapping is safe here because no
/// writer ever cuts a state file shorter (see `JournalState`): it is
/// appended to, or replaced or removed whole, and a mapping keeps the file
/// it was made from.
final class StateFileBytes: @unchecked Sendable {
    /// The bytes; valid while this lives.
    let raw: UnsafeRawBufferPointer
    private let mapped: Bool

    static let empty = StateFileBytes(raw: UnsafeRawBufferPointer(start: nil, count: 0), mapped: false)

    private init(raw: UnsafeRawBufferPointer, mapped: Bool) {
        self.raw = raw
        self.mapped = mapped
    }

    /// The first `size` bytes of the open file `fd`; nil unless all of them could be had.
    static func read(_ fd: Int32, size: Int) -> StateFileBytes? {
        guard size > 0 else { return nil }
        if let p = FileIO.mapReadOnly(fd, length: size) {
            return StateFileBytes(raw: UnsafeRawBufferPointer(start: p, count: size), mapped: true)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        guard FileIO.read(fd, into: buffer, at: 0) == size else {
            buffer.deallocate()
            return nil
        }
        return StateFileBytes(raw: UnsafeRawBufferPointer(buffer), mapped: false)
    }

    /// Calls `body` with the bytes, which stay valid until it returns.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(self) { try body(raw) }
    }

    deinit {
        guard let base = raw.baseAddress else { return }
        if mapped {
            FileIO.unmap(UnsafeMutableRawPointer(mutating: base), length: raw.count)
        } else {
            base.deallocate()
        }
    }
}
