import TripStoreJSON
import TripStoreSystem
/// Decodes envelopes straight from bytes, without building a JSON tree: the
/// load and import path. It uses the strict reader's own string, number and
/// literal scanning, so what it accepts is valid JSON; anything unusual
/// (escaped keys, `data` before `type`, a type mismatch) makes it give up,
/// and the caller decodes that record with `EnvelopeDecoder`, which either
/// reads it too or reports the error with record, property and expectation.
package struct EnvelopeFastDecoder {
    package typealias GiveUp = FastPathGiveUp

    let schema: Schema
    let entityNames: [[UInt8]]
    let propertyNames: [[[UInt8]]]
    let wantPaths: Bool
    /// See `EnvelopeDecoder.bareReferences`.
    package var bareReferences = false
    // Per decoder, not global: a decoder per core then shares no reference counts.
    let typeKey = Array("type".utf8)
    let idKey = Array("id".utf8)
    let dataKey = Array("data".utf8)

    package init(schema: Schema, wantPaths: Bool) {
        self.schema = schema
        self.wantPaths = wantPaths
        entityNames = schema.entities.map { Array($0.name.utf8) }
        propertyNames = schema.entities.map { e in e.properties.map { Array($0.name.utf8) } }
    }

    /// Decodes the envelope at the reader's position (after white space).
    func decode(_ r: inout JSONReader, at location: RecordLocation?, into out: inout [DecodedObject]) throws(GiveUp) {
        _ = try envelope(&r, allowed: nil, location: location, path: "", into: &out)
    }

    // MARK: - Structure

    /// Reads a key without escapes, up to and including the ':'; returns its byte range.
    @inline(__always) func key(_ r: inout JSONReader) throws(GiveUp) -> Range<Int> {
        let range = try r.plainString()
        try r.expectByte(UInt8(ascii: ":"))
        return range
    }

    @inline(__always) func string(_ r: inout JSONReader) throws(GiveUp) -> String {
        guard r.peekByte() == UInt8(ascii: "\"") else { throw GiveUp() }
        do {
            return try r.parseString()
        } catch {
            throw GiveUp()
        }
    }

    /// An id in NFC; anything the rules refuse goes to the tree decoder, which words the error.
    @inline(__always) func identifier(_ r: inout JSONReader) throws(GiveUp) -> String {
        let s = try string(&r)
        guard Identifier.problem(s) == nil else { throw GiveUp() }
        return Identifier.normalized(s)
    }

    @inline(__always) func isNull(_ r: inout JSONReader) throws(GiveUp) -> Bool {
        guard r.peekByte() == UInt8(ascii: "n") else { return false }
        do {
            try r.expectLiteral("null")
        } catch {
            throw GiveUp()
        }
        return true
    }

    func entity(named range: Range<Int>, _ r: JSONReader, allowed: Entity?) throws(GiveUp) -> Entity {
        if let allowed {
            for e in allowed.closure where r.bytes(range, equal: entityNames[e]) { return schema.entities[e] }
        } else {
            for (e, name) in entityNames.enumerated() where r.bytes(range, equal: name) { return schema.entities[e] }
        }
        throw GiveUp()
    }

    // MARK: - Envelopes

    func envelope(_ r: inout JSONReader, allowed: Entity?, location: RecordLocation?, path: String,
                  into out: inout [DecodedObject]) throws(GiveUp) -> ObjectReference {
        try r.expectByte(UInt8(ascii: "{"))
        var entity: Entity?
        var id: String?
        var index = -1
        repeat {
            let k = try key(&r)
            switch k.count {
            case 4 where r.bytes(k, equal: typeKey):
                entity = try self.entity(named: try r.plainString(), r, allowed: allowed)
            case 2 where r.bytes(k, equal: idKey):
                id = try identifier(&r)
                if id!.isEmpty { throw GiveUp() }
            case 4 where r.bytes(k, equal: dataKey):
                guard let e = entity ?? (allowed.flatMap { $0.closure.count == 1 ? $0 : nil }), index < 0 else { throw GiveUp() }
                entity = e
                index = out.count
                out.append(DecodedObject(entity: e.id, id: id ?? "", values: e.emptyValues, links: [],
                                         location: location, path: path))
                try data(&r, entity: e, index: index, location: location, path: path, into: &out)
            default:
                throw GiveUp()
            }
        } while try r.moreMembers(close: UInt8(ascii: "}"))
        guard index >= 0, let e = entity else { throw GiveUp() }
        if out[index].id.isEmpty { out[index].id = id ?? EnvelopeDecoder.newID() }
        _ = e
        return ObjectReference(type: schema.entities[out[index].entity].name, id: out[index].id, path: path)
    }

    func data(_ r: inout JSONReader, entity: Entity, index: Int, location: RecordLocation?, path: String,
              into out: inout [DecodedObject]) throws(GiveUp) {
        try r.expectByte(UInt8(ascii: "{"))
        var seen = 0  // bit per slot (entities have fewer than 64 properties, else give up)
        guard entity.properties.count <= 64 else { throw GiveUp() }
        if r.peekByte() == UInt8(ascii: "}") {
            r.index += 1
        } else {
            let names = propertyNames[entity.id]
            repeat {
                let k = try key(&r)
                var slot = -1
                for (s, name) in names.enumerated() where r.bytes(k, equal: name) {
                    slot = s
                    break
                }
                guard slot >= 0 else { throw GiveUp() }
                seen |= 1 << slot
                let p = entity.properties[slot]
                switch p.kind {
                case .attribute(let a):
                    out[index].values[slot] = try attribute(&r, a.type, optional: a.isOptional)
                case .relationship(let rel):
                    let targets = try relationship(&r, rel, property: p.name, location: location, path: path, into: &out)
                    out[index].links.append(PendingLink(slot: slot, targets: targets))
                }
            } while try r.moreMembers(close: UInt8(ascii: "}"))
        }
        for p in entity.properties where seen & (1 << p.slot) == 0 {
            if let a = p.attribute, !a.isOptional { throw GiveUp() }
        }
    }

    func relationship(_ r: inout JSONReader, _ rel: Relationship, property: String, location: RecordLocation?, path: String,
                      into out: inout [DecodedObject]) throws(GiveUp) -> [ObjectReference] {
        if try isNull(&r) { return [] }
        let dest = schema.entities[rel.destination]
        let base = wantPaths ? (path.isEmpty ? "data." : path + ".data.") + property : ""
        if !rel.isToMany {
            return [try related(&r, dest: dest, location: location, path: base, into: &out)]
        }
        try r.expectByte(UInt8(ascii: "["))
        if r.peekByte() == UInt8(ascii: "]") {
            r.index += 1
            return []
        }
        var targets: [ObjectReference] = []
        var i = 0
        repeat {
            targets.append(try related(&r, dest: dest, location: location, path: wantPaths ? "\(base)[\(i)]" : "", into: &out))
            i += 1
        } while try r.moreMembers(close: UInt8(ascii: "]"))
        return targets
    }

    /// A reference `{"type","id"}` / `{"id"}`, or an inline envelope.
    func related(_ r: inout JSONReader, dest: Entity, location: RecordLocation?, path: String,
                 into out: inout [DecodedObject]) throws(GiveUp) -> ObjectReference {
        let start = r.index
        try r.expectByte(UInt8(ascii: "{"))
        var type: String?
        var id: String?
        repeat {
            let k = try key(&r)
            if k.count == 4 && r.bytes(k, equal: typeKey) {
                let range = try r.plainString()
                type = schema.entities[try entity(named: range, r, allowed: dest).id].name
            } else if k.count == 2 && r.bytes(k, equal: idKey) {
                id = try identifier(&r)
            } else if k.count == 4 && r.bytes(k, equal: dataKey) {
                r.index = start
                return try envelope(&r, allowed: dest, location: location, path: path, into: &out)
            } else {
                throw GiveUp()
            }
        } while try r.moreMembers(close: UInt8(ascii: "}"))
        guard let id else { throw GiveUp() }
        if type == nil && dest.closure.count > 1 && !bareReferences { throw GiveUp() }
        return ObjectReference(type: type, id: id, path: path)
    }

    // MARK: - Values

    package func attribute(_ r: inout JSONReader, _ type: ValueType, optional: Bool) throws(GiveUp) -> Value {
        if try isNull(&r) {
            if optional { return .null }
            throw GiveUp()
        }
        guard let c = r.peekByte() else { throw GiveUp() }
        switch type {
        case .string:
            return .string(try string(&r))
        case .date:
            let range = try r.plainString()
            guard let d = ISODate.parse(bytes: UnsafeBufferPointer(rebasing: r.buffer[range])), ISODate.isWritable(d) else { throw GiveUp() }
            return .date(d)
        case .enumeration(let e):
            let range = try r.plainString()
            for c in e.cases where r.bytes(range, equal: Array(c.utf8)) { return .string(c) }
            throw GiveUp()
        case .int, .double:
            guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else { throw GiveUp() }
            let n: JSONValue
            do {
                n = try r.parseNumber()
            } catch {
                throw GiveUp()
            }
            switch (type, n) {
            case (.int, .int(let i)): return .int(i)
            case (.double, .int(let i)): return .double(Double(i))
            case (.double, .double(let d)) where d.isFinite: return .double(d)
            default: throw GiveUp()
            }
        case .bool:
            do {
                if c == UInt8(ascii: "t") { try r.expectLiteral("true"); return .bool(true) }
                if c == UInt8(ascii: "f") { try r.expectLiteral("false"); return .bool(false) }
            } catch {
                throw GiveUp()
            }
            throw GiveUp()
        case .array(let inner):
            try r.expectByte(UInt8(ascii: "["))
            var items: [Value] = []
            if r.peekByte() == UInt8(ascii: "]") {
                r.index += 1
                return .array(items)
            }
            repeat {
                items.append(try attribute(&r, inner, optional: false))
            } while try r.moreMembers(close: UInt8(ascii: "]"))
            return .array(items)
        case .embedded(let e):
            try r.expectByte(UInt8(ascii: "{"))
            var fields = Array(repeating: Value.null, count: e.fields.count)
            var seen = Array(repeating: false, count: e.fields.count)
            if r.peekByte() == UInt8(ascii: "}") {
                r.index += 1
            } else {
                repeat {
                    let k = try key(&r)
                    guard let i = e.fields.firstIndex(where: { r.bytes(k, equal: Array($0.name.utf8)) }) else { throw GiveUp() }
                    fields[i] = try attribute(&r, e.fields[i].type, optional: e.fields[i].isOptional)
                    seen[i] = true
                } while try r.moreMembers(close: UInt8(ascii: "}"))
            }
            for (i, f) in e.fields.enumerated() where !seen[i] && !f.isOptional { throw GiveUp() }
            return .embedded(fields)
        }
    }
}

