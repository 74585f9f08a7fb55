import Dispatch

/// Decodes snapshot object lines on every core: the lines are split into one
/// chunk per core, each decoded on its own, results kept in file order.
enum DecodeChunks {
    struct Chunk: Sendable {
        var objects: [DecodedObject] = []
        /// The first damaged line of the chunk, with what is wrong.
        var error: (Int, String)?
    }

    static func decode(_ lines: ArraySlice<Range<Int>>, in buffer: UnsafeBufferPointer<UInt8>, schema: Schema) -> [Chunk] {
        let cores = max(1, min(8, sysconfCores()))
        let count = lines.count >= 20_000 ? cores : 1
        let per = (lines.count + count - 1) / max(count, 1)
        let results = UnsafeMutablePointer<Chunk>.allocate(capacity: count)
        results.initialize(repeating: Chunk(), count: count)
        defer {
            results.deinitialize(count: count)
            results.deallocate()
        }
        nonisolated(unsafe) let out = results
        nonisolated(unsafe) let buf = buffer
        let first = lines.startIndex
        let all = Array(lines)
        DispatchQueue.concurrentPerform(iterations: count) { k in
            let records = RecordDecoder(schema: schema, wantPaths: false)
            var chunk = Chunk()
            let lo = k * per, hi = min(all.count, lo + per)
            chunk.objects.reserveCapacity(max(0, hi - lo))
            var i = lo
            while i < hi {
                var r = JSONReader(buffer: UnsafeBufferPointer(rebasing: buf[all[i]]))
                do {
                    try records.decodeWhole(&r, at: .line(first + i + 1), into: &chunk.objects)
                } catch {
                    chunk.error = (first + i + 1, "\(error)")
                    break
                }
                i += 1
            }
            out[k] = chunk
        }
        return (0..<count).map { results[$0] }
    }

    static func sysconfCores() -> Int {
        #if canImport(Glibc)
        return Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
        return 2
        #endif
    }
}
#if canImport(Glibc)
import Glibc
#endif
