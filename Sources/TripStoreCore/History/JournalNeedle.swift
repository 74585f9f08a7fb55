import TripStoreFormat
import TripStoreSystem

/// Bytes that every journal line holding a change a history filter keeps
/// must hold: the object's id as JSON writes it, or a kind's name in
/// quotes. A line without them is passed over unread (see
/// `HistoryLog.loaded(passing:)`); a line with them may still hold no such
/// change, and the filter decides.
struct JournalNeedle {
    let bytes: [UInt8]

    /// Nil when the filter names no such bytes: it asks for no one object
    /// and no one kind, or for an id some JSON writer could write otherwise
    /// (escaped, or not ASCII; a line is checksummed as written, but an
    /// older version of the writer may have written it).
    init?(_ filter: HistoryFilter) {
        if let id = filter.id {
            let utf8 = Array(id.utf8)
            // Written as they are by any JSON writer: printable ASCII but the quote, the backslash and the slash.
            guard !utf8.isEmpty, utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C && $0 != 0x2F }) else { return nil }
            bytes = [0x22] + utf8 + [0x22]
        } else if let kinds = filter.kinds, kinds.count == 1, let kind = kinds.first, kind != .insert {
            // An insert's kind may be implied by the line's form; the others are written out.
            bytes = Array("\"\(kind.rawValue)\"".utf8)
        } else {
            return nil
        }
    }

    /// Whether `line` holds the bytes.
    func isIn(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { ByteSearch.contains(UnsafeRawBufferPointer(line), UnsafeRawBufferPointer($0)) }
    }
}
