import TripStoreSystem

/// A cache file made of 4096-byte pages, each ending in the CRC-32C of the
/// rest of it, so that a reader checks exactly the pages it reads and a
/// lookup costs what it reads at any file size. A section is a run of
/// pages holding fixed-size elements; an element never straddles two pages.
enum PagedFile {
    static let pageSize = 4096
    static let payload = pageSize - 4

    /// Where a section is: its first page and how many elements it holds.
    struct Section: Equatable {
        var firstPage: Int64 = 0
        var count: Int64 = 0

        /// How many pages `count` elements of `size` bytes take.
        func pages(elementSize size: Int) -> Int64 {
            let per = Int64(PagedFile.payload / size)
            return (count + per - 1) / per
        }
    }

    /// A page's payload bytes followed by their checksum.
    static func seal(_ page: inout [UInt8]) {
        let crc = page.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<payload])) }
        for k in 0..<4 { page[payload + k] = UInt8(truncatingIfNeeded: crc >> (8 * k)) }
    }

    static func isSealed(_ page: UnsafeRawBufferPointer) -> Bool {
        guard page.count == pageSize else { return false }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: page[0..<payload]))
        var said: UInt32 = 0
        for k in 0..<4 { said |= UInt32(page[payload + k]) << (8 * k) }
        return crc == said
    }
}

/// Writes a paged file section by section, from page 1 on (page 0 is the
/// header, written last).
struct PagedFileWriter {
    let fd: Int32
    let path: String
    private(set) var nextPage: Int64 = 1

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Writes `count` elements of `size` bytes that `element(i, &out)` appends.
    mutating func section(elementSize size: Int, count: Int, element: (Int, inout [UInt8]) -> Void) throws -> PagedFile.Section {
        let per = PagedFile.payload / size
        let section = PagedFile.Section(firstPage: nextPage, count: Int64(count))
        var page: [UInt8] = []
        page.reserveCapacity(PagedFile.pageSize)
        var out: [UInt8] = []
        out.reserveCapacity(64 * PagedFile.pageSize)
        var i = 0
        while i < count {
            page.removeAll(keepingCapacity: true)
            for k in i..<min(count, i + per) { element(k, &page) }
            i = min(count, i + per)
            page.append(contentsOf: repeatElement(0, count: PagedFile.pageSize - page.count))
            PagedFile.seal(&page)
            out.append(contentsOf: page)
            if out.count >= 64 * PagedFile.pageSize {
                try flush(&out)
            }
        }
        try flush(&out)
        return section
    }

    private mutating func flush(_ out: inout [UInt8]) throws {
        guard !out.isEmpty else { return }
        try out.withUnsafeBytes { try FileIO.writeAll(fd, $0, at: Int(nextPage) * PagedFile.pageSize, path: path) }
        nextPage += Int64(out.count / PagedFile.pageSize)
        out.removeAll(keepingCapacity: true)
    }

    /// Writes the header page.
    func header(_ bytes: [UInt8]) throws {
        var page = bytes + Array(repeating: 0, count: PagedFile.pageSize - bytes.count)
        PagedFile.seal(&page)
        try page.withUnsafeBytes { try FileIO.writeAll(fd, $0, at: 0, path: path) }
    }
}

/// Reads elements of a paged file, checking each page it reads once.
final class PagedFileReader {
    let fd: Int32
    let pages: Int64

    init(fd: Int32, size: Int) {
        self.fd = fd
        self.pages = Int64(size / PagedFile.pageSize)
    }

    deinit { FileIO.close(fd) }

    /// One whole page, or nil when it cannot be read or fails its checksum.
    func page(_ number: Int64) -> [UInt8]? {
        guard number >= 0, number < pages else { return nil }
        var bytes = [UInt8](repeating: 0, count: PagedFile.pageSize)
        let got = bytes.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: Int(number) * PagedFile.pageSize) }
        guard got == PagedFile.pageSize, bytes.withUnsafeBytes(PagedFile.isSealed) else { return nil }
        return bytes
    }

    /// The bytes of elements `range` of a section of `size`-byte elements,
    /// back to back; nil when a page they are on is damaged.
    func elements(_ section: PagedFile.Section, size: Int, _ range: Range<Int>) -> [UInt8]? {
        guard range.lowerBound >= 0, Int64(range.upperBound) <= section.count else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(range.count * size)
        let per = PagedFile.payload / size
        var i = range.lowerBound
        while i < range.upperBound {
            let pageIndex = i / per
            guard let p = page(section.firstPage + Int64(pageIndex)) else { return nil }
            let end = min(range.upperBound, (pageIndex + 1) * per)
            out.append(contentsOf: p[((i - pageIndex * per) * size)..<((end - pageIndex * per) * size)])
            i = end
        }
        return out
    }
}

/// Little-endian fixed-width fields, for the index's elements.
extension Array where Element == UInt8 {
    mutating func put<T: FixedWidthInteger>(_ v: T) {
        var le = v
        for _ in 0..<MemoryLayout<T>.size {
            append(UInt8(truncatingIfNeeded: le))
            le = le >> 8
        }
    }

    func get<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var v: T = 0
        for k in (0..<MemoryLayout<T>.size).reversed() { v = v << 8 | T(truncatingIfNeeded: self[offset + k]) }
        return v
    }
}
