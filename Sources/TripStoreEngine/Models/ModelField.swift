import TripStoreCore
import TripStoreFormat
import TripStoreJSON

/// The storage of a declared property of a model class: `@Attribute var name = ""`,
/// `@Relationship var bucketList: [BucketListItem] = []`. It does what
/// SwiftData's `@Model` macro does to a property, without a macro:
///
/// - a property the context has not loaded yet (a relationship of a fetched
///   object, an attribute left out of `propertiesToFetch`) is a fault, loaded
///   from the store the first time it is read;
/// - a write tells the object's context, so `save()` visits only the objects
///   that changed, and setting one side of a relationship updates the other
///   side at once (`item.trip = t` puts `item` into `t.bucketList`).
///
/// Outside a context (an object not inserted yet) it is a plain stored property.
@propertyWrapper
public struct ModelField<Value> {
    var value: Value
    var isFault = false

    /// A property with this initial value.
    public init(wrappedValue: Value) {
        value = wrappedValue
    }

    /// Model fields are read through their model object (see the subscript below).
    @available(*, unavailable, message: "@Attribute and @Relationship are for properties of PersistentModel classes")
    public var wrappedValue: Value {
        get { value }
        set { value = newValue }
    }

    /// Reads and writes of the property, seen with the object that holds it.
    public static subscript<M: PersistentModel>(
        _enclosingInstance object: M,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<M, ModelField<Value>>
    ) -> Value {
        get {
            if object[keyPath: storageKeyPath].isFault, let context = object.modelContext {
                context.fieldRead(object, wrappedKeyPath)
            }
            return object[keyPath: storageKeyPath].value
        }
        set {
            guard let context = object.modelContext else {
                object[keyPath: storageKeyPath].value = newValue
                object[keyPath: storageKeyPath].isFault = false
                // Relating a new object to one in a context inserts it there, as in SwiftData.
                if let related = newValue as? any RelatedModels, let context = related.context, !object.isDeleted {
                    context.insert(object)
                }
                return
            }
            switch context.fieldAccess {
            case .faulting:
                object[keyPath: storageKeyPath].isFault = true
            case .filling, .peeking:
                object[keyPath: storageKeyPath].value = newValue
                object[keyPath: storageKeyPath].isFault = false
            case .program:
                let before = context.fieldWillChange(object, wrappedKeyPath)
                object[keyPath: storageKeyPath].value = newValue
                object[keyPath: storageKeyPath].isFault = false
                context.fieldDidChange(object, wrappedKeyPath, before: before)
            }
        }
    }
}

/// An attribute's storage: `@Attribute var name = ""` (SwiftData's spelling; options go in `properties`).
public typealias Attribute<Value> = ModelField<Value>
/// A relationship's storage: `@Relationship var trip: Trip?` (delete rule and inverse go in `properties`).
public typealias Relationship<Value> = ModelField<Value>

/// Lets the declaration checks recognise a field's storage in a `Mirror`.
protocol AnyModelField {
    var storedAny: Any { get }
}

extension ModelField: AnyModelField {
    var storedAny: Any { value }
}

/// The value of a relationship field: the context its objects belong to.
protocol RelatedModels {
    var context: ModelContext? { get }
}

extension Optional: RelatedModels where Wrapped: PersistentModel {
    var context: ModelContext? { self?.modelContext }
}

extension Array: RelatedModels where Element: PersistentModel {
    var context: ModelContext? { lazy.compactMap(\.modelContext).first }
}
