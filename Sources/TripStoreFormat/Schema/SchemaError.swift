import TripStoreJSON
import TripStoreSystem
/// A schema that cannot be used, with what is wrong and where.
public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Two models of one name.
    case duplicateEntity(String)
    /// A parent that is not in the schema.
    case unknownParent(entity: String, parent: String)
    /// A model that inherits from itself.
    case inheritanceCycle(String)
    /// A property declared twice (inherited ones included).
    case duplicateProperty(entity: String, property: String)
    /// A relationship to a model that is not in the schema.
    case unknownDestination(entity: String, relationship: String, destination: String)
    /// An inverse the destination does not declare.
    case unknownInverse(entity: String, relationship: String, inverse: String, destination: String)
    /// An inverse that does not mirror its relationship.
    case inverseMismatch(entity: String, relationship: String, detail: String)
    /// An enum attribute without cases.
    case emptyEnumeration(entity: String, attribute: String)
    /// A name that is not letters, digits and `_`.
    case invalidName(String)

    /// What is wrong with the schema, naming the model and property.
    public var description: String {
        switch self {
        case .duplicateEntity(let e): return "entity '\(e)' is declared twice"
        case .unknownParent(let e, let p): return "entity '\(e)' names parent '\(p)', which is not in the schema"
        case .inheritanceCycle(let e): return "entity '\(e)' is its own ancestor"
        case .duplicateProperty(let e, let p):
            return "entity '\(e)' has property '\(p)' twice (declared again or inherited)"
        case .unknownDestination(let e, let r, let d):
            return "relationship '\(e).\(r)' points at '\(d)', which is not in the schema"
        case .unknownInverse(let e, let r, let i, let d):
            return "relationship '\(e).\(r)' names inverse '\(i)', but '\(d)' has no relationship of that name"
        case .inverseMismatch(let e, let r, let detail):
            return "relationship '\(e).\(r)': \(detail)"
        case .emptyEnumeration(let e, let a): return "enum attribute '\(e).\(a)' has no cases"
        case .invalidName(let n): return "'\(n)' is not a valid name (letters, digits and '_', not starting with a digit)"
        }
    }
}
