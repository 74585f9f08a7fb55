import TripStoreEngine

/// The trip domain: `Trip` with its subclasses `BusinessTrip` and
/// `PersonalTrip`, and their related models, declared once as model classes.
public enum TripSchema {
    /// `BusinessTrip.itinerary`'s stored fields.
    public static let meetingItinerary = EmbeddedDescription("MeetingItinerary", fields: [
        AttributeDescription("agenda", .array(.string)),
        AttributeDescription("location", .string, optional: true),
    ])

    /// The model classes; the schema is made from their declarations.
    public static let modelTypes: [PersistentModel.Type] = [
        Trip.self, BusinessTrip.self, PersonalTrip.self, LivingAccommodation.self, BucketListItem.self,
        BusinessMeal.self, DailyMileageRecord.self, ConferenceSession.self, Attraction.self, FamilyMember.self,
    ]

    /// The model classes as a model schema, for `ModelContainer`.
    public static let models: ModelSchema = {
        do {
            return try ModelSchema(modelTypes)
        } catch {
            // The classes are fixed at compile time; the tests prove the schema valid.
            preconditionFailure("the built-in trip models are invalid: \(error)")
        }
    }()

    /// The validated trip schema.
    public static var schema: Schema { models.schema }
}
