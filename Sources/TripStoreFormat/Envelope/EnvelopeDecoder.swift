import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A reference to an object by id, not yet resolved to a row.
package struct ObjectReference: Sendable, Equatable {
    /// The type tag, when the reference or inline envelope gave one.
    package var type: String?
    package var id: String
    /// Where the reference stands in its record, for messages.
    package var path: String
}

/// Relationship targets of one slot, not yet resolved.
package struct PendingLink: Sendable {
    package var slot: Int
    package var targets: [ObjectReference]
}

/// One object read from an envelope: attributes decoded, relationships pending.
public struct DecodedObject: Sendable {
    /// The concrete entity's index.
    public var entity: Int
    /// The id (given, or a new UUID).
    public var id: String
    /// Attribute slots hold values; relationship slots hold `.null` until linked.
    public var values: [Value]
    package var links: [PendingLink]
    /// Where the record was, for messages.
    public var location: RecordLocation?
    /// Empty for a top-level envelope, else where it was inline (`data.bucketList[0]`).
    public var path: String
}

/// Decodes envelopes (`{"type": …, "id": …, "data": {…}}`) against a schema.
///
/// Inline related envelopes become objects of their own, placed after their
/// owner; references stay pending until the whole input is read, so they may
/// point forward.
package struct EnvelopeDecoder {
    package let schema: Schema
    /// Leaves a missing required attribute nil instead of refusing the
    /// envelope: for history's view of an object whose values were redacted.
    package var allowMissingAttributes = false
    /// Accepts a reference without `type` whatever its destination (a
    /// snapshot's own lines: written so when the destination had no
    /// subclasses; the target's type is checked when links are set).
    package var bareReferences = false

    package init(schema: Schema) {
        self.schema = schema
    }

    /// Decodes one top-level envelope and everything inline in it, appending to `out`.
    package func decode(_ v: JSONValue, at location: RecordLocation?, into out: inout [DecodedObject]) throws(EnvelopeError) {
        _ = try decodeEnvelope(v, allowed: nil, location: location, path: "", into: &out)
    }

    private func fail(_ kind: EnvelopeError.Kind, _ location: RecordLocation?, _ path: String,
                      entity: String? = nil, property: String? = nil, _ message: String) -> EnvelopeError {
        EnvelopeError(kind, location: location, path: path, entity: entity, property: property, message)
    }

    /// Reads the type tag and checks it against `allowed` (a relationship's destination).
    private func entityFor(_ v: JSONValue, allowed: Entity?, location: RecordLocation?, path: String) throws(EnvelopeError) -> Entity {
        guard let tv = v["type"] else {
            if let a = allowed, a.closure.count == 1 { return a }
            throw fail(.notAnEnvelope, location, path, "the envelope has no \"type\"; expected a type tag such as \"\(allowed?.name ?? schema.entities[0].name)\"")
        }
        guard case .string(let tag) = tv else {
            throw fail(.wrongType, location, path, "\"type\" must be a string, found \(EnvelopeError.describe(tv))")
        }
        let candidates = allowed.map { $0.closure.map { schema.entities[$0].name } } ?? schema.entities.map(\.name)
        guard let e = schema.entity(named: tag), candidates.contains(tag) else {
            let known = schema.entity(named: tag) != nil
            let why = known ? "'\(tag)' is not a \(allowed!.name)" : "unknown type '\(tag)'"
            throw fail(.unknownType, location, path,
                       "\(why); expected one of \(candidates.joined(separator: ", "))" + NameSuggestion.hint(for: tag, in: candidates))
        }
        return e
    }

    private func decodeEnvelope(_ v: JSONValue, allowed: Entity?, location: RecordLocation?, path: String,
                                into out: inout [DecodedObject]) throws(EnvelopeError) -> ObjectReference {
        guard case .object(let members) = v else {
            throw fail(.notAnEnvelope, location, path, "expected an envelope object {\"type\", \"id\", \"data\"}, found \(EnvelopeError.describe(v))")
        }
        let entity = try entityFor(v, allowed: allowed, location: location, path: path)
        var id: String?
        var data: [JSONMember]?
        for m in members {
            switch m.key {
            case "type": break
            case "id":
                guard case .string(let s) = m.value, !s.isEmpty else {
                    throw fail(.wrongType, location, path, entity: entity.name, "\"id\" must be a non-empty string, found \(EnvelopeError.describe(m.value))")
                }
                if let problem = Identifier.problem(s) { throw fail(.wrongType, location, path, entity: entity.name, problem) }
                id = Identifier.normalized(s)
            case "data":
                guard case .object(let d) = m.value else {
                    throw fail(.wrongType, location, path, entity: entity.name, "\"data\" must be an object, found \(EnvelopeError.describe(m.value))")
                }
                data = d
            default:
                throw fail(.unknownProperty, location, path, entity: entity.name,
                           "unexpected envelope key '\(m.key)'; an envelope has \"type\", \"id\" and \"data\" (put properties inside \"data\")")
            }
        }
        guard let data else {
            throw fail(.notAnEnvelope, location, path, entity: entity.name, "the envelope has no \"data\" object")
        }
        let objectID = id ?? EnvelopeDecoder.newID()
        let index = out.count
        out.append(DecodedObject(entity: entity.id, id: objectID,
                                 values: entity.emptyValues,
                                 links: [], location: location, path: path))
        var seen = Array(repeating: false, count: entity.properties.count)
        let dataPath = path.isEmpty ? "data" : path + ".data"
        for m in data {
            guard let p = entity.property(named: m.key) else {
                throw fail(.unknownProperty, location, path, entity: entity.name, property: m.key,
                           "\(entity.name) has no property '\(m.key)'" + NameSuggestion.hint(for: m.key, in: entity.properties.map(\.name)))
            }
            seen[p.slot] = true
            switch p.kind {
            case .attribute(let a):
                do {
                    out[index].values[p.slot] = try ValueDecoding.decode(m.value, as: a.type, optional: a.isOptional)
                } catch {
                    throw fail(error.kind, location, path, entity: entity.name, property: p.name, error.message)
                }
            case .relationship(let r):
                let dest = schema.entities[r.destination]
                let relPath = dataPath + "." + p.name
                var targets: [ObjectReference] = []
                if r.isToMany {
                    guard case .array(let items) = m.value else {
                        if case .null = m.value { break }
                        throw fail(.wrongType, location, path, entity: entity.name, property: p.name,
                                   "expected an array of \(dest.name) envelopes or references, found \(EnvelopeError.describe(m.value))")
                    }
                    for (i, item) in items.enumerated() {
                        if case .null = item {
                            throw fail(.danglingReference, location, "\(relPath)[\(i)]", entity: entity.name, property: p.name,
                                       "null in place of a \(dest.name) reference (a reference to an object that does not exist)")
                        }
                        targets.append(try relatedObject(item, dest: dest, owner: entity, property: p.name,
                                                         location: location, path: "\(relPath)[\(i)]", into: &out))
                    }
                } else if case .null = m.value {
                } else {
                    targets.append(try relatedObject(m.value, dest: dest, owner: entity, property: p.name,
                                                     location: location, path: relPath, into: &out))
                }
                out[index].links.append(PendingLink(slot: p.slot, targets: targets))
            }
        }
        for p in entity.properties where !seen[p.slot] {
            if let a = p.attribute, !a.isOptional, !allowMissingAttributes {
                throw fail(.missingAttribute, location, path, entity: entity.name, property: p.name,
                           "required attribute is missing (expected \(ValueDecoding.expectation(a.type)))")
            }
        }
        return ObjectReference(type: entity.name, id: objectID, path: path)
    }

    private func relatedObject(_ v: JSONValue, dest: Entity, owner: Entity, property: String, location: RecordLocation?,
                               path: String, into out: inout [DecodedObject]) throws(EnvelopeError) -> ObjectReference {
        guard case .object(let members) = v else {
            throw fail(.wrongType, location, path, entity: owner.name, property: property,
                       "expected a \(dest.name) envelope or a reference {\"type\", \"id\"}, found \(EnvelopeError.describe(v))")
        }
        if v["data"] != nil {
            return try decodeEnvelope(v, allowed: dest, location: location, path: path, into: &out)
        }
        var type: String?
        var id: String?
        for m in members {
            switch (m.key, m.value) {
            case ("type", .string(let s)): type = s
            case ("id", .string(let s)):
                if let problem = Identifier.problem(s) {
                    throw fail(.wrongType, location, path, entity: owner.name, property: property, problem)
                }
                id = Identifier.normalized(s)
            default:
                throw fail(.wrongType, location, path, entity: owner.name, property: property,
                           "a reference has only \"type\" and \"id\" strings; found key '\(m.key)' (an inline object needs \"data\")")
            }
        }
        guard let id else {
            throw fail(.wrongType, location, path, entity: owner.name, property: property, "a reference needs an \"id\"")
        }
        if let type {
            let allowed = dest.closure.map { schema.entities[$0].name }
            guard allowed.contains(type) else {
                throw fail(.unknownType, location, path, entity: owner.name, property: property,
                           "reference type '\(type)' is not a \(dest.name); expected one of \(allowed.joined(separator: ", "))")
            }
        } else if dest.closure.count > 1 && !bareReferences {
            throw fail(.wrongType, location, path, entity: owner.name, property: property,
                       "a reference to a \(dest.name) needs a \"type\", since \(dest.name) has subclasses")
        }
        return ObjectReference(type: type, id: id, path: path)
    }

    /// A random UUID string, upper-case like Foundation's.
    package static func newID() -> String {
        var rng = SystemRandomNumberGenerator()
        let a = rng.next() as UInt64
        let b = rng.next() as UInt64
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i))) }
        for i in 0..<8 { bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i))) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789ABCDEF".utf8)
        var s: [UInt8] = []
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { s.append(UInt8(ascii: "-")) }
            s.append(hex[Int(byte >> 4)])
            s.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: s, as: UTF8.self)
    }
}
