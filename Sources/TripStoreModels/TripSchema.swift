import TripStoreEngine

/// The trip domain of SPEC §1 as entity descriptions: `Trip` with its
/// subclasses `BusinessTrip` and `PersonalTrip`, and their related models.
public enum TripSchema {
    public static let reason = EnumDescription("Reason", cases: ["family", "reunion", "vacation", "wellness", "unknown"])

    public static let meetingItinerary = EmbeddedDescription("MeetingItinerary", fields: [
        AttributeDescription("agenda", .array(.string)),
        AttributeDescription("location", .string, optional: true),
    ])

    public static let entities: [EntityDescription] = [
        EntityDescription("Trip", attributes: [
            AttributeDescription("name", .string, options: [.preserveOnDeletion, .indexed]),
            AttributeDescription("destination", .string, options: [.indexed]),
            AttributeDescription("startDate", .date, options: [.preserveOnDeletion, .indexed]),
            AttributeDescription("endDate", .date, options: [.preserveOnDeletion, .indexed]),
        ], relationships: [
            RelationshipDescription("bucketList", to: "BucketListItem", toMany: true, inverse: "trip", deleteRule: .cascade),
            RelationshipDescription("livingAccommodation", to: "LivingAccommodation", inverse: "trip", deleteRule: .cascade),
        ]),
        EntityDescription("BusinessTrip", parent: "Trip", attributes: [
            AttributeDescription("purpose", .string),
            AttributeDescription("expenseCode", .string, options: [.indexed]),
            AttributeDescription("perDiemRate", .double),
            AttributeDescription("mileageRate", .double),
            AttributeDescription("itinerary", .embedded(meetingItinerary), optional: true),
        ], relationships: [
            RelationshipDescription("milesDriven", to: "DailyMileageRecord", toMany: true, inverse: "trip", deleteRule: .cascade),
            RelationshipDescription("businessMeals", to: "BusinessMeal", toMany: true, inverse: "trip", deleteRule: .cascade),
            RelationshipDescription("sessionsAttended", to: "ConferenceSession", toMany: true, inverse: "trip", deleteRule: .cascade),
        ]),
        EntityDescription("PersonalTrip", parent: "Trip", attributes: [
            AttributeDescription("reason", .enumeration(reason), options: [.indexed]),
            AttributeDescription("notes", .string, optional: true),
            AttributeDescription("frequentFlyerCodes", .array(.string)),
            AttributeDescription("venuePasses", .array(.string)),
        ], relationships: [
            RelationshipDescription("attractionsToVisit", to: "Attraction", toMany: true, inverse: "trip", deleteRule: .cascade),
            RelationshipDescription("familyMembers", to: "FamilyMember", toMany: true, inverse: "trips", deleteRule: .nullify),
        ]),
        EntityDescription("LivingAccommodation", attributes: [
            AttributeDescription("name", .string),
            AttributeDescription("address", .string),
            AttributeDescription("checkIn", .date, optional: true),
            AttributeDescription("checkOut", .date, optional: true),
        ], relationships: [
            RelationshipDescription("trip", to: "Trip", inverse: "livingAccommodation", deleteRule: .nullify),
        ]),
        EntityDescription("BucketListItem", attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("details", .string, optional: true),
            AttributeDescription("isCompleted", .bool),
        ], relationships: [
            RelationshipDescription("trip", to: "Trip", inverse: "bucketList", deleteRule: .nullify),
        ]),
        EntityDescription("BusinessMeal", attributes: [
            AttributeDescription("restaurant", .string),
            AttributeDescription("date", .date),
            AttributeDescription("cost", .double),
            AttributeDescription("attendees", .array(.string)),
        ], relationships: [
            RelationshipDescription("trip", to: "BusinessTrip", inverse: "businessMeals", deleteRule: .nullify),
        ]),
        EntityDescription("DailyMileageRecord", attributes: [
            AttributeDescription("date", .date),
            AttributeDescription("miles", .double),
        ], relationships: [
            RelationshipDescription("trip", to: "BusinessTrip", inverse: "milesDriven", deleteRule: .nullify),
        ]),
        EntityDescription("ConferenceSession", attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("speaker", .string, optional: true),
            AttributeDescription("date", .date),
        ], relationships: [
            RelationshipDescription("trip", to: "BusinessTrip", inverse: "sessionsAttended", deleteRule: .nullify),
        ]),
        EntityDescription("Attraction", attributes: [
            AttributeDescription("name", .string),
            AttributeDescription("location", .string, optional: true),
        ], relationships: [
            RelationshipDescription("trip", to: "PersonalTrip", inverse: "attractionsToVisit", deleteRule: .nullify),
        ]),
        EntityDescription("FamilyMember", attributes: [
            AttributeDescription("name", .string),
            AttributeDescription("relationship", .string, optional: true),
        ], relationships: [
            RelationshipDescription("trips", to: "PersonalTrip", toMany: true, inverse: "familyMembers", deleteRule: .deny),
        ]),
    ]

    /// The validated trip schema.
    public static let schema: Schema = {
        do {
            return try Schema(entities)
        } catch {
            // The table above is fixed at compile time; tests prove it valid.
            preconditionFailure("the built-in trip schema is invalid: \(error)")
        }
    }()
}
