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
    /// A name that is not letters, digits and `_`; `owner` is the entity that
    /// declares it (nil for an entity's own name).
    case invalidName(String, owner: String?)
    /// A schema without a single entity.
    case noEntities
    /// An enum attribute that lists a case twice.
    case duplicateEnumCase(entity: String, attribute: String, value: String)
    /// A stored property of a model class that `properties` does not declare
    /// (it would silently not be saved).
    case undeclaredProperty(entity: String, property: String)
    /// A declared property that is a plain stored property instead of a model
    /// field, so its context could not see it change or load it lazily.
    case untrackedProperty(entity: String, property: String, wrapper: String)
    /// A declaration whose name is not the name of the stored property its key path reaches.
    case keyPathMismatch(entity: String, property: String, storedProperty: String)
    /// A declaration whose key path is rooted at another class.
    case keyPathRoot(entity: String, property: String, root: String)
    /// A schema file that does not have the expected form, and where.
    case malformedFile(location: String, detail: String)
    /// A `default` that is not a value of its attribute's type.
    case invalidDefault(entity: String, attribute: String, detail: String)

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
        case .invalidName(let n, let owner):
            return (owner.map { "entity '\($0)': property " } ?? "entity ") + "'\(n)' is not a valid name (ASCII letters, digits and '_', not starting with a digit)"
        case .noEntities: return "the schema declares no entity"
        case .duplicateEnumCase(let e, let a, let v): return "enum attribute '\(e).\(a)' lists case '\(v)' twice"
        case .malformedFile(let location, let detail): return location + ": " + detail
        case .invalidDefault(let e, let a, let detail): return "attribute '\(e).\(a)': its default is not a value of its type: \(detail)"
        case .undeclaredProperty(let e, let p):
            return "class \(e): stored property '\(p)' is not declared in 'properties', so it would not be saved; "
                + "declare it, make it computed, or list it in 'transientProperties'"
        case .untrackedProperty(let e, let p, let wrapper):
            return "class \(e): property '\(p)' is a plain stored property; declare it '\(wrapper) var \(p)' "
                + "so that its changes are saved and it can load lazily"
        case .keyPathMismatch(let e, let p, let stored):
            return "class \(e): property '\(p)' is declared with the key path of stored property '\(stored)'"
        case .keyPathRoot(let e, let p, let root):
            return "class \(e): property '\(p)' is declared with a key path rooted at \(root); use \\\(e).\(p)"
        }
    }
}
