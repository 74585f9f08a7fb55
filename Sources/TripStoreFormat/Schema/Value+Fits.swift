import TripStoreJSON
import TripStoreSystem
extension Value {
    /// Whether the value can be stored in an attribute of that type (nil
    /// only where the attribute is optional). Enum values must name a case.
    package func fits(_ type: ValueType, optional: Bool) -> Bool {
        switch (self, type) {
        case (.null, _): return optional
        case (.double(let d), .double): return d.isFinite
        case (.date(let d), .date): return ISODate.isWritable(d)
        case (.string, .string), (.int, .int), (.bool, .bool): return true
        case (.int, .double): return true
        case (.string(let s), .enumeration(let e)): return e.cases.contains(s)
        case (.array(let items), .array(let element)): return items.allSatisfy { $0.fits(element, optional: false) }
        case (.embedded(let fields), .embedded(let e)):
            return fields.count == e.fields.count
                && zip(fields, e.fields).allSatisfy { $0.fits($1.type, optional: $1.isOptional) }
        default: return false
        }
    }
}
