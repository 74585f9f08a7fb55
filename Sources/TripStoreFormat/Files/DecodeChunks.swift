import TripStoreJSON
import TripStoreSystem
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes snapshot object lines on every core: the lines are split into one
/// chunk per core, each decoded on its own, results kept in file order.
package enum DecodeChunks {
    struct Chunk: Sendable {
        var objects: [DecodedObject] = []
        /// The first damaged line of the chunk, with what is wrong.
        var error: (Int, String)?
    }

    /// Decodes each range as one whole value; `location` names a range for messages.
    static func decode(_ lines: ArraySlice<Range<Int>>, in buffer: UnsafeBufferPointer<UInt8>, schema: Schema,
                       wantPaths: Bool = false, location: @escaping @Sendable (Int) -> RecordLocation = { .line($0) }) -> [Chunk] {
        let shared = SharedBytes(buffer)
        let first = lines.startIndex
        let all = Array(lines)
        return Parallel.mapRanges(all.count, parallelFrom: 512) { range in
            // A private copy of the schema per core: shared entity objects would
            // make both cores fight over their reference counts.
            let records = RecordDecoder(schema: schema.privateCopy(), wantPaths: wantPaths)
            var chunk = Chunk()
            chunk.objects.reserveCapacity(range.count)
            for i in range {
                var r = JSONReader(buffer: UnsafeBufferPointer(rebasing: shared.buffer[all[i]]))
                do {
                    try records.decodeWhole(&r, at: location(first + i + 1), into: &chunk.objects)
                } catch {
                    chunk.error = (first + i + 1, "\(error)")
                    break
                }
            }
            return chunk
        }
    }

}
