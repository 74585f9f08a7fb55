import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// Checks that a model class's `properties` describe its stored properties:
/// without a macro, a forgotten declaration would silently not be saved.
extension ModelSchema {
    /// The properties a class declares itself. A subclass that does not
    /// override `properties` inherits its superclass's list, which is not its own.
    static func ownProperties(of t: PersistentModel.Type, superType: PersistentModel.Type?) -> [ModelProperty] {
        let own = t.properties
        guard let superType, superType != PersistentModel.self else { return own }
        let inherited = superType.properties
        if own.count == inherited.count && zip(own, inherited).allSatisfy({ $0.keyPath == $1.keyPath }) { return [] }
        return own
    }

    /// Each declaration's key path is rooted at the class and reaches the
    /// stored property of the declared name; every stored property of the
    /// class is declared (or listed as transient).
    ///
    /// The stored property a key path reaches is found by writing a marker
    /// through it on a fresh instance and seeing which child of the
    /// instance's `Mirror` holds it.
    static func checkDeclarations(of t: PersistentModel.Type, _ own: [ModelProperty]) throws(SchemaError) {
        let entity = t.entityName
        for p in own {
            let root = type(of: p.keyPath).rootType
            guard root == t else { throw .keyPathRoot(entity: entity, property: p.name, root: "\(root)") }
        }
        let instance = t.init()
        let children = Mirror(reflecting: instance).children
        var declaredLabels = Set<String>()
        for (k, p) in own.enumerated() {
            // Where no marker tells (an embedded value, two equal markers), the name is trusted.
            let label = storedLabel(of: p, slot: k, in: instance) ?? "_" + p.name
            guard label == "_" + p.name else {
                let stored = label.hasPrefix("_") ? String(label.dropFirst()) : label
                guard stored == p.name else { throw .keyPathMismatch(entity: entity, property: p.name, storedProperty: stored) }
                throw .untrackedProperty(entity: entity, property: p.name, wrapper: p.wrapperName)
            }
            guard children.contains(where: { $0.label == label && $0.value is any AnyModelField }) else {
                throw .untrackedProperty(entity: entity, property: p.name, wrapper: p.wrapperName)
            }
            declaredLabels.insert(label)
        }
        let transient = Set(t.transientProperties)
        for child in children {
            guard let label = child.label, !label.hasPrefix("$__lazy_storage_$_") else { continue }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label  // a property wrapper's storage
            guard !declaredLabels.contains(label), !transient.contains(name) else { continue }
            throw .undeclaredProperty(entity: entity, property: name)
        }
    }

    /// The label of the stored property that the declaration writes, if a marker finds it.
    static func storedLabel(of p: ModelProperty, slot: Int, in instance: PersistentModel) -> String? {
        switch p.kind {
        case .attribute(let a, _, let set):
            guard let marker = marker(a.type, slot), set(instance, marker) else { return nil }
            let found = Mirror(reflecting: instance).children.filter { child in
                (unwrap(child.value) as? any ModelValue)?.storedValue == marker
            }
            return found.count == 1 ? found[0].label : nil
        case .relationship(let r, let destination, _, let set):
            let target = destination.init()
            set(instance, r.isToMany ? .many([target]) : .one(target))
            let found = Mirror(reflecting: instance).children.filter { child in
                let v = unwrap(child.value)
                if let m = v as? PersistentModel { return m === target }
                if let ms = v as? [PersistentModel] { return ms.contains { $0 === target } }
                return false
            }
            return found.count == 1 ? found[0].label : nil
        }
    }

    /// The value inside an `Optional` held as `Any`, so a cast sees the wrapped type.
    static func unwrap(_ value: Any) -> Any {
        if let field = value as? any AnyModelField { return unwrap(field.storedAny) }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value ?? value
    }
}
