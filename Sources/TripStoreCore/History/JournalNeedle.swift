import TripStoreFormat
import TripStoreSystem

/// Bytes of which every journal line holding a change a history filter
/// keeps must hold one: the object's id, the author or a type's name as
/// JSON writes them, or a kind's name, each in quotes. A line without them
/// is passed over unread (see `HistoryLog.loaded(passing:)`); a line with
/// them may still hold no such change, and the filter decides.
struct JournalNeedle {
    /// Any one of these.
    let alternatives: [[UInt8]]

    /// Nil when the filter names no such bytes: it asks for no one object,
    /// kind, author or set of types, or names one some JSON writer could
    /// write otherwise (escaped, or not ASCII; a line is checksummed as
    /// written, but an older version of the writer may have written it).
    init?(_ filter: HistoryFilter) {
        if let id = filter.id {
            guard let bytes = Self.quoted(id) else { return nil }
            alternatives = [bytes]
        } else if let kinds = filter.kinds, kinds.count == 1, let kind = kinds.first, kind != .insert {
            // An insert's kind may be implied by the line's form; the others are written out.
            alternatives = [Array("\"\(kind.rawValue)\"".utf8)]
        } else if let author = filter.author {
            guard let bytes = Self.quoted(author) else { return nil }
            alternatives = [bytes]
        } else if let types = filter.types, filter.typeNames == nil, !types.isEmpty, types.count <= 16 {
            // (Names that change with a migration are each line's own: every line is read.)
            let quoted = types.sorted().compactMap(Self.quoted)
            guard quoted.count == types.count else { return nil }
            alternatives = quoted
        } else {
            return nil
        }
    }

    /// `text` in quotes, where any JSON writer writes it so: printable ASCII
    /// but the quote, the backslash and the slash.
    private static func quoted(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard !utf8.isEmpty, utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C && $0 != 0x2F }) else { return nil }
        return [0x22] + utf8 + [0x22]
    }

    /// Whether `line` holds one of the alternatives.
    func isIn(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        alternatives.contains { a in a.withUnsafeBufferPointer { ByteSearch.contains(UnsafeRawBufferPointer(line), UnsafeRawBufferPointer($0)) } }
    }
}
