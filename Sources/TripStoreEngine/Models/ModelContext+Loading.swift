import TripStoreCore
import TripStoreFormat
import TripStoreJSON

/// Objects come into a context one at a time: a fetched object gets its
/// attributes (or those in `propertiesToFetch`); its relationships and any
/// other attribute are faults, loaded from the store on first read.
extension ModelContext {
    /// What a model field's accessors do at this moment. The program's own
    /// reads and writes are `.program`; the context fills and inspects
    /// fields under the other three, which neither load nor report changes.
    enum FieldAccess {
        /// A read loads a fault; a write is a change (inverses follow, a save writes it).
        case program
        /// A write sets the loaded value.
        case filling
        /// A write turns the field into a fault (its value is not used).
        case faulting
        /// A read of a fault sets `peekedFault` instead of loading.
        case peeking
    }

    /// Runs `body` with the fields' accessors meaning `access`.
    func with<R>(_ access: FieldAccess, _ body: () throws -> R) rethrows -> R {
        let saved = fieldAccess
        fieldAccess = access
        defer { fieldAccess = saved }
        return try body()
    }

    /// The instance for a row: the one already known, or a new one of the
    /// concrete class with its attributes (those named in `fetching`, or all)
    /// filled and everything else a fault.
    func materialize(_ row: RowID, fetching: Set<String>? = nil) -> PersistentModel? {
        guard let o = store.table.object(at: row) else { return nil }
        if let m = identity[o.id] { return m }
        for id in identity.sweepIfDue() where identity[id] == nil { read[id] = nil }
        let m = models.types[o.entity].init()
        m.persistentModelID = o.id
        m.modelContext = self
        identity[o.id] = m
        read[o.id] = ReadState(row: row, values: o.values, token: store.lastToken)
        let properties = models.properties[o.entity]
        with(.filling) {
            for (slot, p) in properties.enumerated() {
                guard case .attribute(_, _, let set) = p.kind, fetching?.contains(p.name) ?? true else { continue }
                if !set(m, o.values[slot]) { p.touch(m) }
            }
        }
        with(.faulting) {
            for p in properties {
                if case .attribute = p.kind, fetching?.contains(p.name) ?? true { continue }
                p.touch(m)
            }
        }
        return m
    }

    /// Called by a model field read while it is a fault.
    func fieldRead(_ m: PersistentModel, _ keyPath: AnyKeyPath) {
        switch fieldAccess {
        case .peeking: peekedFault = true
        case .filling, .faulting: break
        case .program:
            guard let e = models.entityID(of: m), let slot = models.slot(of: keyPath, in: e) else { return }
            container.lock.lock()
            defer { container.lock.unlock() }
            load(m, entity: e, slot: slot)
            // A fault filled from a damaged piece of the image is filled
            // again from the store read from its JSON (a read cannot throw:
            // if that fails, the damage stays noted and the next fetch or
            // save reports it).
            if store.imageDamage != nil, (try? readAgainAfterDamage()) != nil {
                load(m, entity: e, slot: slot)
            }
        }
    }

    /// Loads these properties of an object where they are faults.
    func load(_ m: PersistentModel, properties names: Set<String>) {
        guard let e = models.entityID(of: m) else { return }
        for (slot, p) in models.properties[e].enumerated() where names.contains(p.name) && isFault(m, p) {
            load(m, entity: e, slot: slot)
        }
    }

    /// Fills a faulted property from the store as it is now, and notes what
    /// was read (a later save compares the program's value with it). An
    /// object that is gone (deleted by another save) keeps what it holds.
    func load(_ m: PersistentModel, entity: Int, slot: Int) {
        container.lock.lock()
        defer { container.lock.unlock() }
        let p = models.properties[entity][slot]
        let id = m.persistentModelID
        guard identity[id] === m, let state = read[id], store.table.entity(at: state.row) == entity,
              store.table.recordedID(state.row) == id else {
            with(.filling) { p.touch(m) }
            return
        }
        let value = store.table.value(at: state.row, slot: slot)
        read[id]?.values[slot] = value
        if store.lastToken > state.token { read[id]?.loadedAt[slot] = store.lastToken }
        switch p.kind {
        case .attribute(_, _, let set):
            with(.filling) { if !set(m, value) { p.touch(m) } }
        case .relationship(let r, _, _, let set):
            let targets = value.rows.compactMap { materialize($0) }
            with(.filling) { set(m, r.isToMany ? .many(targets) : .one(targets.first)) }
        }
    }

    /// Whether a property of an object is a fault (nothing is loaded).
    func isFault(_ m: PersistentModel, _ p: ModelProperty) -> Bool {
        with(.peeking) {
            peekedFault = false
            switch p.kind {
            case .attribute(_, let get, _): _ = get(m)
            case .relationship(_, _, let get, _): _ = get(m)
            }
            return peekedFault
        }
    }

    /// An attribute's value as the program holds it; nil while it is a fault.
    func heldValue(_ m: PersistentModel, _ get: (PersistentModel) -> Value) -> Value? {
        with(.peeking) {
            peekedFault = false
            let v = get(m)
            return peekedFault ? nil : v
        }
    }

    /// The objects a relationship holds in the program; nil while it is a fault.
    func heldTargets(_ m: PersistentModel, _ get: (PersistentModel) -> ModelProperty.Related) -> [PersistentModel]? {
        with(.peeking) {
            peekedFault = false
            let related = get(m)
            return peekedFault ? nil : related.objects
        }
    }

    /// The objects a relationship holds, loading it first if it is a fault.
    func loadedTargets(_ m: PersistentModel, entity: Int, slot: Int) -> [PersistentModel] {
        guard case .relationship(_, _, let get, _) = models.properties[entity][slot].kind else { return [] }
        if let held = heldTargets(m, get) { return held }
        load(m, entity: entity, slot: slot)
        return heldTargets(m, get) ?? []
    }

    /// The rows a relationship's objects have; nil when one is not saved yet.
    func rows(of targets: [PersistentModel]) -> [RowID]? {
        var out: [RowID] = []
        out.reserveCapacity(targets.count)
        for t in targets {
            guard let r = read[t.persistentModelID]?.row else { return nil }
            out.append(r)
        }
        return out
    }

    /// Whether the program changed a loaded property since the context read
    /// it (a fault is unchanged).
    func isChanged(_ m: PersistentModel, slot: Int, _ p: ModelProperty, since state: ReadState) -> Bool {
        switch p.kind {
        case .attribute(_, let get, _):
            guard let v = heldValue(m, get) else { return false }
            return v != state.values[slot]
        case .relationship(_, _, let get, _):
            guard let targets = heldTargets(m, get) else { return false }
            guard let now = rows(of: targets) else { return true }
            return now != state.values[slot].rows
        }
    }

    /// Whether any loaded property differs from what was read.
    func differs(_ m: PersistentModel) -> Bool {
        guard let state = read[m.persistentModelID], let e = models.entityID(of: m) else { return true }
        return models.properties[e].enumerated().contains { slot, p in isChanged(m, slot: slot, p, since: state) }
    }
}

extension ModelProperty.Related {
    /// The objects it holds.
    var objects: [PersistentModel] {
        switch self {
        case .one(let t): return t.map { [$0] } ?? []
        case .many(let ts): return ts
        }
    }
}
