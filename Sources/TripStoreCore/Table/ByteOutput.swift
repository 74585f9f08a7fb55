import TripStoreJSON

/// Bytes appended through a raw pointer, for a writer that appends millions
/// of small pieces (a snapshot's lines): `[UInt8].append` checks at each
/// piece that the array is unique and has room, and does not inline; here a
/// piece costs one capacity check and a copy.
///
/// Writes the same text as `JSONWriter`'s `append…` functions (they share
/// `JSONEscaping`). In the module that writes snapshot lines: across modules
/// its appends were calls, not inlined (a noncopyable type's), at every byte.
struct ByteOutput: ~Copyable {
    var start: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The bytes written so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    /// Hands the bytes over to an owner that frees them.
    consuming func finish() -> OwnedBytes {
        let owned = OwnedBytes(start: start, count: count)
        discard self
        return owned
    }

    /// Makes room for `n` more bytes.
    /// Empties the buffer, keeping its capacity.
    mutating func removeAll() { count = 0 }

    @inline(__always) mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(n) }
    }

    @inline(never) mutating func grow(_ n: Int) {
        let bigger = max(capacity * 2, count + n)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
        moved.update(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = bigger
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        start[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        if let from = bytes.baseAddress { UnsafeMutableRawPointer(start + count).copyMemory(from: from, byteCount: bytes.count) }
        count += bytes.count
    }

    /// `n` bytes that `write` puts in place (it writes all of them).
    @inline(__always) mutating func append(count n: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Void) {
        reserve(n)
        write(start + count)
        count += n
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// A string from its UTF-8 bytes, quoted and escaped.
    mutating func appendQuoted(utf8: UnsafeRawBufferPointer) {
        // Nearly every string: one capacity check for its worst case, six bytes per byte.
        if utf8.count <= JSONEscaping.pieceSize {
            reserve(utf8.count * 6 + 2)
            start[count] = UInt8(ascii: "\"")
            count += 1 + JSONEscaping.write(utf8, to: start + count + 1)
            start[count] = UInt8(ascii: "\"")
            count += 1
            return
        }
        append(UInt8(ascii: "\""))
        var done = 0
        repeat {
            // A piece at a time: room for its worst case, six bytes per byte.
            let piece = UnsafeRawBufferPointer(rebasing: utf8[done..<min(utf8.count, done + JSONEscaping.pieceSize)])
            reserve(piece.count * 6)
            count += JSONEscaping.write(piece, to: start + count)
            done += piece.count
        } while done < utf8.count
        append(UInt8(ascii: "\""))
    }

    mutating func appendInteger(_ v: Int64) {
        reserve(JSONEscaping.maxIntegerLength)
        count += JSONEscaping.writeInteger(v, to: start + count)
    }

    /// The shortest form that reads back to the same double (`100`, not `100.0`), as `JSONWriter.appendDouble`.
    mutating func appendDouble(_ v: Double) {
        if let integer = JSONEscaping.integerForm(v) { return appendInteger(integer) }
        guard v.isFinite else { return append(JSONEscaping.null) }
        var text = v.description
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// A date as a quoted ISO 8601 string, as `JSONWriter.date`.
    mutating func appendQuotedDate(_ seconds: Double) {
        reserve(ISODate.maxLength + 2)
        start[count] = UInt8(ascii: "\"")
        count += 1 + ISODate.write(seconds, to: start + count + 1)
        start[count] = UInt8(ascii: "\"")
        count += 1
    }
}

/// Bytes that free themselves: a finished `ByteOutput`, handed between threads whole.
final class OwnedBytes: @unchecked Sendable {
    private let start: UnsafeMutablePointer<UInt8>
    let count: Int

    init(start: UnsafeMutablePointer<UInt8>, count: Int) {
        self.start = start
        self.count = count
    }

    deinit { start.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }
}

