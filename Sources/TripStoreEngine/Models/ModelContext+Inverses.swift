import TripStoreCore
import TripStoreFormat
import TripStoreJSON

/// A write to a model field is seen by its context at once: the object is
/// marked changed, new objects it now reaches are inserted, and the other
/// side of the relationship follows (SwiftData's inverse maintenance), so
/// `item.trip = rome` puts `item` into `rome.bucketList` and takes it out of
/// its old trip's list before any save.
extension ModelContext {
    /// Before the program writes a field: a relationship is loaded if it is a
    /// fault, and its objects are returned (their inverses may need updating).
    func fieldWillChange(_ m: PersistentModel, _ keyPath: AnyKeyPath) -> [PersistentModel]? {
        guard m.modelContext === self, let e = models.entityID(of: m), let slot = models.slot(of: keyPath, in: e),
              case .relationship = models.properties[e][slot].kind else { return nil }
        return loadedTargets(m, entity: e, slot: slot)
    }

    /// After the program wrote a field.
    func fieldDidChange(_ m: PersistentModel, _ keyPath: AnyKeyPath, before: [PersistentModel]?) {
        guard m.modelContext === self, let e = models.entityID(of: m), let slot = models.slot(of: keyPath, in: e) else { return }
        changed[ObjectIdentifier(m)] = m
        writtenSlots[ObjectIdentifier(m), default: []].insert(slot)
        guard let before, case .relationship(_, _, let get, _) = models.properties[e][slot].kind else { return }
        let now = heldTargets(m, get) ?? []
        let new = now.filter { $0.modelContext == nil }
        if !new.isEmpty { adopt(new) }
        guard let inverse = models.schema.entities[e].properties[slot].relationship?.inverseSlot else { return }
        let wasHeld = Set(before.map(ObjectIdentifier.init))
        let isHeld = Set(now.map(ObjectIdentifier.init))
        for r in before where !isHeld.contains(ObjectIdentifier(r)) { unlink(r, slot: inverse, from: m) }
        for a in now where !wasHeld.contains(ObjectIdentifier(a)) { link(a, slot: inverse, to: m) }
    }

    /// Inserts new objects and the new objects they reach, then sets the
    /// inverses of their relationships.
    func adopt(_ roots: [PersistentModel]) {
        var work = roots
        var adopted: [PersistentModel] = []
        while let m = work.popLast() {
            guard m.modelContext == nil else { continue }
            m.modelContext = self
            identity[m.persistentModelID] = m
            inserted.append(m)
            adopted.append(m)
            guard let e = models.entityID(of: m) else { continue }
            for p in models.properties[e] {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                work.append(contentsOf: (heldTargets(m, get) ?? []).filter { $0.modelContext == nil })
            }
        }
        for m in adopted {
            guard let e = models.entityID(of: m) else { continue }
            for (slot, p) in models.properties[e].enumerated() {
                guard case .relationship(_, _, let get, _) = p.kind,
                      let inverse = models.schema.entities[e].properties[slot].relationship?.inverseSlot else { continue }
                for t in heldTargets(m, get) ?? [] { link(t, slot: inverse, to: m) }
            }
        }
    }

    /// The first object of another context that an inserted or changed
    /// object of this one relates to (Core Data refuses a relationship
    /// between objects of two contexts); a link undone before the save is
    /// none. Looks at what the save looks at: inserted and changed objects.
    func objectOfAnotherContext() -> PersistentModel? {
        for m in inserted + Array(changed.values) {
            guard let e = models.entityID(of: m) else { continue }
            for p in models.properties[e] {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                if let t = (heldTargets(m, get) ?? []).first(where: { $0.modelContext != nil && $0.modelContext !== self }) { return t }
            }
        }
        return nil
    }

    /// Takes an object being withdrawn (an unsaved insert that is deleted)
    /// out of the inverse relationships that hold it.
    func detachFromInverses(_ m: PersistentModel) {
        guard let e = models.entityID(of: m) else { return }
        for (slot, p) in models.properties[e].enumerated() {
            guard case .relationship(_, _, let get, _) = p.kind,
                  let inverse = models.schema.entities[e].properties[slot].relationship?.inverseSlot else { continue }
            for t in heldTargets(m, get) ?? [] { unlink(t, slot: inverse, from: m) }
        }
    }

    /// Makes `a`'s relationship at `slot` hold `m`. A to-one that held
    /// another object lets go of it, and that object's side follows.
    func link(_ a: PersistentModel, slot: Int, to m: PersistentModel) {
        guard a.modelContext === self, let e = models.entityID(of: a),
              case .relationship(let r, _, _, let set) = models.properties[e][slot].kind else { return }
        let held = loadedTargets(a, entity: e, slot: slot)
        if r.isToMany {
            guard !held.contains(where: { $0 === m }) else { return }
            with(.filling) { set(a, .many(held + [m])) }
        } else {
            guard held.first !== m else { return }
            with(.filling) { set(a, .one(m)) }
            if let old = held.first, let back = models.schema.entities[e].properties[slot].relationship?.inverseSlot {
                unlink(old, slot: back, from: a)
            }
        }
        changed[ObjectIdentifier(a)] = a
    }

    /// Makes `r`'s relationship at `slot` stop holding `m`.
    func unlink(_ r: PersistentModel, slot: Int, from m: PersistentModel) {
        guard r.modelContext === self, let e = models.entityID(of: r),
              case .relationship(let rel, _, _, let set) = models.properties[e][slot].kind else { return }
        let held = loadedTargets(r, entity: e, slot: slot)
        guard held.contains(where: { $0 === m }) else { return }
        with(.filling) { set(r, rel.isToMany ? .many(held.filter { $0 !== m }) : .one(nil)) }
        changed[ObjectIdentifier(r)] = r
    }
}
