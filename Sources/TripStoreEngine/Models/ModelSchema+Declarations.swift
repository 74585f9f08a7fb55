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
        var declaredLabels = Set<String>()
        for (k, p) in own.enumerated() {
            // Where no marker tells (an embedded value, two equal markers), the name is trusted.
            guard let label = storedLabel(of: p, slot: k, in: instance) else {
                declaredLabels.insert(p.name)
                continue
            }
            guard label == p.name else { throw .keyPathMismatch(entity: entity, property: p.name, storedProperty: label) }
            declaredLabels.insert(label)
        }
        let transient = Set(t.transientProperties)
        for child in Mirror(reflecting: instance).children {
            guard let label = child.label, !label.hasPrefix("$__lazy_storage_$_") else { continue }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label  // a property wrapper's storage
            guard !declaredLabels.contains(label), !declaredLabels.contains(name), !transient.contains(name) else { continue }
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
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value ?? value
    }
}
