import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

@Suite struct EnvelopeDecoderTests {
    let schema = TripSchema.schema

    func decode(_ text: String) throws -> [DecodedObject] {
        try EnvelopeInput.decode(Array(text.utf8), schema: schema)
    }

    func error(_ text: String) -> EnvelopeError? {
        do {
            _ = try decode(text)
        } catch let list as EnvelopeErrors {
            let es = list.errors
            return es.first
        } catch {}
        return nil
    }

    static let trip = #"{"name":"T","destination":"Rome","startDate":"2026-03-02","endDate":"2026-03-03T10:00:00Z"}"#

    @Test func decodesInlineObjectsAndReferences() throws {
        let text = #"""
        [{"type":"PersonalTrip","id":"p1","data":{"name":"T","destination":"Róme","startDate":"2026-03-02","endDate":"2026-03-03",
          "reason":"family","frequentFlyerCodes":["AZ1"],"venuePasses":[],
          "bucketList":[{"type":"BucketListItem","id":"b1","data":{"title":"x","isCompleted":false}}],
          "familyMembers":[{"id":"f1"}]}}]
        """#
        let objects = try decode(text)
        #expect(objects.map(\.id) == ["p1", "b1"])
        #expect(objects[1].path == "data.bucketList[0]")
        let p = schema.entity(named: "PersonalTrip")!
        #expect(objects[0].values[p.property(named: "startDate")!.slot] == .date(ISODate.parse("2026-03-02")!))
        #expect(objects[0].values[p.property(named: "notes")!.slot] == .null)
        #expect(objects[0].links.map(\.slot) == [p.property(named: "bucketList")!.slot, p.property(named: "familyMembers")!.slot])
        #expect(objects[0].links[1].targets == [ObjectReference(type: nil, id: "f1", path: "data.familyMembers[0]")])
    }

    @Test func generatesMissingIDs() throws {
        let objects = try decode(#"{"type":"Trip","data":\#(Self.trip)}"#)
        #expect(objects[0].id.count == 36)
    }

    @Test(arguments: [
        (#"[{"type":"Trp","id":"a","data":{}}]"#, EnvelopeError.Kind.unknownType,
         "record 1: unknown type 'Trp'; expected one of Trip, BusinessTrip, PersonalTrip, LivingAccommodation, BucketListItem, BusinessMeal, DailyMileageRecord, ConferenceSession, Attraction, FamilyMember (did you mean 'Trip'?)"),
        (#"[{"type":"Trip","id":"a","data":{"name":"T","destination":"R","startDate":"2026-03-02","endDate":"2026-03-02","colour":1}}]"#,
         .unknownProperty, "record 1: property 'colour' of Trip: Trip has no property 'colour'"),
        (#"[{"type":"Trip","id":"a","data":{"name":"T","destination":"R","startDate":"2026-03-02"}}]"#,
         .missingAttribute, #"record 1: property 'endDate' of Trip: required attribute is missing (expected an ISO 8601 date such as "2026-03-02" or "2026-03-02T09:30:00Z")"#),
        (#"[{"type":"Trip","id":"a","data":{"name":5,"destination":"R","startDate":"2026-03-02","endDate":"2026-03-02"}}]"#,
         .wrongType, "record 1: property 'name' of Trip: expected a string, found 5"),
        (#"[{"type":"Trip","id":"a","data":{"name":"T","destination":"R","startDate":"tomorrow","endDate":"2026-03-02"}}]"#,
         .badDate, #"record 1: property 'startDate' of Trip: expected an ISO 8601 date such as "2026-03-02" or "2026-03-02T09:30:00Z", found "tomorrow""#),
        (#"[{"type":"PersonalTrip","id":"a","data":{"name":"T","destination":"R","startDate":"2026-03-02","endDate":"2026-03-02","reason":"fun","frequentFlyerCodes":[],"venuePasses":[]}}]"#,
         .badEnumCase, #"record 1: property 'reason' of PersonalTrip: expected one of "family", "reunion", "vacation", "wellness", "unknown", found "fun""#),
        (#"[{"type":"Trip","id":"a","data":{"name":"T","destination":"R","startDate":"2026-03-02","endDate":"2026-03-02","bucketList":[{"type":"BucketListItem","id":"b","data":{"title":"x"}}]}}]"#,
         .missingAttribute, "record 1 at data.bucketList[0]: property 'isCompleted' of BucketListItem: required attribute is missing (expected true or false)"),
        (#"[{"type":"Trip","id":"a","data":{"name":"T","destination":"R","startDate":"2026-03-02","endDate":"2026-03-02","livingAccommodation":{"type":"Trip","id":"x"}}}]"#,
         .unknownType, "record 1 at data.livingAccommodation: property 'livingAccommodation' of Trip: reference type 'Trip' is not a LivingAccommodation; expected one of LivingAccommodation"),
        (#"[{"type":"Trip","id":"a","data":{"name":"T","destination":"R","startDate":"9999-12-31T23:00:00-05:00","endDate":"2026-03-02"}}]"#,
         .badDate, #"record 1: property 'startDate' of Trip: expected a date from 0001-01-01 to 9999-12-31 in UTC, found "9999-12-31T23:00:00-05:00""#),
        (#"[1]"#, .notAnEnvelope, #"record 1: expected an envelope object {"type", "id", "data"}, found 1"#),
        ("{\"type\":\"Trip\",\"id\":\"a\",\"data\":\(trip)}\n{\"type\":\"Trip\",\"id\":\"b\",\"data\":{}}\n", .missingAttribute,
         "line 2: property 'name' of Trip: required attribute is missing (expected a string)"),
    ])
    func reportsRecordPropertyAndExpectation(_ text: String, _ kind: EnvelopeError.Kind, _ message: String) throws {
        let e = try #require(error(text))
        #expect(e.kind == kind)
        #expect(e.description == message)
    }

    /// An `Int` past its range is named as such, not quoted as the Double
    /// it became (found by a hostile review: "found inf", "found 9.223372036854776e+18").
    @Test(arguments: [("1e400", "large"), ("9223372036854775808", "large"), ("-9.3e18", "small")])
    func anIntegerPastTheRangeSaysSo(_ number: String, _ side: String) throws {
        let text = #"[{"type":"ShortFilm","id":"s","data":{"title":"t","screens":\#(number)}}]"#
        do {
            _ = try EnvelopeInput.decode(Array(text.utf8), schema: FilmSchema.schema)
            Issue.record("no error for \(number)")
        } catch let list as EnvelopeErrors {
            #expect(list.errors.first?.description == "record 1: property 'screens' of ShortFilm: expected an integer within the range of an Int "
                    + "(-9223372036854775808 to 9223372036854775807), found a number too \(side)")
        }
    }

    @Test func danglingAndDuplicateIDsNameTheRecord() throws {
        let store = Store.empty(schema: schema)
        func stageError(_ text: String) throws -> String {
            var tx = store.transaction()
            do {
                try store.stage(try decode(text), mode: .insert, into: &tx)
            } catch {
                return "\(error)"
            }
            return ""
        }
        #expect(try stageError(#"[{"type":"BucketListItem","id":"b","data":{"title":"x","isCompleted":true,"trip":{"type":"Trip","id":"nope"}}}]"#)
                == "record 1 at data.trip: property 'trip' of BucketListItem: reference to id 'nope', which is neither in the input nor in the store")
        #expect(try stageError("[{\"type\":\"Trip\",\"id\":\"a\",\"data\":\(Self.trip)},{\"type\":\"Trip\",\"id\":\"a\",\"data\":\(Self.trip)}]")
                == "record 2: Trip: id 'a' appears twice in the input (first at record 1)")
    }

    @Test func linksBothSidesOfInlineAndForwardReferences() throws {
        let store = Store.empty(schema: schema)
        var tx = store.transaction()
        let text = """
        [{"type":"BucketListItem","id":"b","data":{"title":"x","isCompleted":true,"trip":{"type":"Trip","id":"t"}}},
         {"type":"Trip","id":"t","data":\(Self.trip.dropLast()),"livingAccommodation":{"type":"LivingAccommodation","id":"h","data":{"name":"H","address":"A"}}}}]
        """
        try store.stage(try decode(text), mode: .insert, into: &tx)
        let trip = schema.entity(named: "Trip")!
        let t = try #require(tx.object(at: tx.row(for: "t")!))
        #expect(t.values[trip.property(named: "bucketList")!.slot] == .toMany([tx.row(for: "b")!]))
        #expect(t.values[trip.property(named: "livingAccommodation")!.slot] == .toOne(tx.row(for: "h")!))
        let h = try #require(tx.object(at: tx.row(for: "h")!))
        #expect(h.values[schema.entity(named: "LivingAccommodation")!.property(named: "trip")!.slot] == .toOne(tx.row(for: "t")!))
    }
}
