import Foundation
import TripStoreEngine

// The trip domain as model classes with real inheritance.

/// A trip: the base class of `BusinessTrip` and `PersonalTrip`.
public class Trip: PersistentModel {
    /// The name (preserved on deletion for trips).
    @Attribute public var name = ""
    /// Where the trip goes.
    @Attribute public var destination = ""
    /// When it starts (preserved on deletion).
    @Attribute public var startDate = Date(timeIntervalSince1970: 0)
    /// When it ends (preserved on deletion).
    @Attribute public var endDate = Date(timeIntervalSince1970: 0)
    /// Things to do on the trip; deleted with it (cascade).
    @Relationship public var bucketList: [BucketListItem] = []
    /// Where the travellers stay; deleted with the trip (cascade).
    @Relationship public var livingAccommodation: LivingAccommodation?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(name: String, destination: String, startDate: Date, endDate: Date) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        super.init()
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("name", \Trip.name, options: [.preserveOnDeletion, .indexed]),
            .attribute("destination", \Trip.destination, options: [.indexed]),
            .attribute("startDate", \Trip.startDate, options: [.preserveOnDeletion, .indexed]),
            .attribute("endDate", \Trip.endDate, options: [.preserveOnDeletion, .indexed]),
            .toMany("bucketList", \Trip.bucketList, inverse: "trip", deleteRule: .cascade),
            .toOne("livingAccommodation", \Trip.livingAccommodation, inverse: "trip", deleteRule: .cascade),
        ]
    }
}

/// A meeting schedule kept inside its business trip.
public struct MeetingItinerary: ModelEmbedded, Equatable, Sendable {
    /// The meeting's agenda items.
    public var agenda: [String]
    /// Where it is, if known.
    public var location: String?

    /// A new object with these values (not yet inserted in a context).
    public init(agenda: [String], location: String? = nil) {
        self.agenda = agenda
        self.location = location
    }

    /// Its stored fields: agenda and location.
    public static var embeddedDescription: EmbeddedDescription { TripSchema.meetingItinerary }

    /// The itinerary from its stored fields.
    public init?(fields: [Value]) {
        guard fields.count == 2, let agenda = [String](storedValue: fields[0]),
              let location = String?(storedValue: fields[1]) else { return nil }
        self.init(agenda: agenda, location: location)
    }

    /// Its stored fields, in order.
    public var fields: [Value] { [agenda.storedValue, location.storedValue] }
}

/// A business trip: purpose, expenses and what happened on it.
public final class BusinessTrip: Trip {
    /// Why the trip is made.
    @Attribute public var purpose = ""
    /// The code expenses are booked on.
    @Attribute public var expenseCode = ""
    /// The daily allowance.
    @Attribute public var perDiemRate = 0.0
    /// The allowance per mile.
    @Attribute public var mileageRate = 0.0
    /// The meeting itinerary, stored inside the trip.
    @Attribute public var itinerary: MeetingItinerary?
    /// Daily mileage records (cascade).
    @Relationship public var milesDriven: [DailyMileageRecord] = []
    /// Meals expensed on the trip (cascade).
    @Relationship public var businessMeals: [BusinessMeal] = []
    /// Conference sessions attended (cascade).
    @Relationship public var sessionsAttended: [ConferenceSession] = []

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(name: String, destination: String, startDate: Date, endDate: Date,
                purpose: String, expenseCode: String, perDiemRate: Double, mileageRate: Double = 0) {
        self.purpose = purpose
        self.expenseCode = expenseCode
        self.perDiemRate = perDiemRate
        self.mileageRate = mileageRate
        super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("purpose", \BusinessTrip.purpose),
            .attribute("expenseCode", \BusinessTrip.expenseCode, options: [.indexed]),
            .attribute("perDiemRate", \BusinessTrip.perDiemRate),
            .attribute("mileageRate", \BusinessTrip.mileageRate),
            .attribute("itinerary", \BusinessTrip.itinerary),
            .toMany("milesDriven", \BusinessTrip.milesDriven, inverse: "trip", deleteRule: .cascade),
            .toMany("businessMeals", \BusinessTrip.businessMeals, inverse: "trip", deleteRule: .cascade),
            .toMany("sessionsAttended", \BusinessTrip.sessionsAttended, inverse: "trip", deleteRule: .cascade),
        ]
    }
}

/// A personal trip: why, and who came along.
public final class PersonalTrip: Trip {
    /// Why a personal trip is made.
    public enum Reason: String, CaseIterable, Codable, ModelEnum, Sendable {
        case family, reunion, vacation, wellness, unknown
    }

    /// Why the trip is made.
    @Attribute public var reason = Reason.unknown
    /// Free notes.
    @Attribute public var notes: String?
    /// Frequent-flyer codes used.
    @Attribute public var frequentFlyerCodes: [String] = []
    /// Passes for venues.
    @Attribute public var venuePasses: [String] = []
    /// Attractions to visit (cascade).
    @Relationship public var attractionsToVisit: [Attraction] = []
    /// Family members on the trip (nullify).
    @Relationship public var familyMembers: [FamilyMember] = []

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(name: String, destination: String, startDate: Date, endDate: Date, reason: Reason, notes: String? = nil) {
        self.reason = reason
        self.notes = notes
        super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("reason", \PersonalTrip.reason, options: [.indexed]),
            .attribute("notes", \PersonalTrip.notes),
            .attribute("frequentFlyerCodes", \PersonalTrip.frequentFlyerCodes),
            .attribute("venuePasses", \PersonalTrip.venuePasses),
            .toMany("attractionsToVisit", \PersonalTrip.attractionsToVisit, inverse: "trip", deleteRule: .cascade),
            .toMany("familyMembers", \PersonalTrip.familyMembers, inverse: "trips", deleteRule: .nullify),
        ]
    }
}

/// Where travellers stay on a trip.
public final class LivingAccommodation: PersistentModel {
    /// The name (preserved on deletion for trips).
    @Attribute public var name = ""
    /// The postal address.
    @Attribute public var address = ""
    /// Check-in time, if known.
    @Attribute public var checkIn: Date?
    /// Check-out time, if known.
    @Attribute public var checkOut: Date?
    /// The trip it belongs to (the inverse side).
    @Relationship public var trip: Trip?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(name: String, address: String, checkIn: Date? = nil, checkOut: Date? = nil) {
        self.name = name
        self.address = address
        self.checkIn = checkIn
        self.checkOut = checkOut
        super.init()
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("name", \LivingAccommodation.name),
            .attribute("address", \LivingAccommodation.address),
            .attribute("checkIn", \LivingAccommodation.checkIn),
            .attribute("checkOut", \LivingAccommodation.checkOut),
            .toOne("trip", \LivingAccommodation.trip, inverse: "livingAccommodation"),
        ]
    }
}

/// Something to do on a trip.
public final class BucketListItem: PersistentModel {
    /// The title.
    @Attribute public var title = ""
    /// More about it.
    @Attribute public var details: String?
    /// Whether it is done.
    @Attribute public var isCompleted = false
    /// The trip it belongs to (the inverse side).
    @Relationship public var trip: Trip?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(title: String, details: String? = nil, isCompleted: Bool = false) {
        self.title = title
        self.details = details
        self.isCompleted = isCompleted
        super.init()
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("title", \BucketListItem.title),
            .attribute("details", \BucketListItem.details),
            .attribute("isCompleted", \BucketListItem.isCompleted),
            .toOne("trip", \BucketListItem.trip, inverse: "bucketList"),
        ]
    }
}

/// A meal on a business trip.
public final class BusinessMeal: PersistentModel {
    /// Where the meal was.
    @Attribute public var restaurant = ""
    /// When.
    @Attribute public var date = Date(timeIntervalSince1970: 0)
    /// What it cost.
    @Attribute public var cost = 0.0
    /// Who attended.
    @Attribute public var attendees: [String] = []
    /// The trip it belongs to (the inverse side).
    @Relationship public var trip: BusinessTrip?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(restaurant: String, date: Date, cost: Double, attendees: [String] = []) {
        self.restaurant = restaurant
        self.date = date
        self.cost = cost
        self.attendees = attendees
        super.init()
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("restaurant", \BusinessMeal.restaurant),
            .attribute("date", \BusinessMeal.date),
            .attribute("cost", \BusinessMeal.cost),
            .attribute("attendees", \BusinessMeal.attendees),
            .toOne("trip", \BusinessMeal.trip, inverse: "businessMeals"),
        ]
    }
}

/// The miles driven on one day of a business trip.
public final class DailyMileageRecord: PersistentModel {
    /// When.
    @Attribute public var date = Date(timeIntervalSince1970: 0)
    /// Miles driven that day.
    @Attribute public var miles = 0.0
    /// The trip it belongs to (the inverse side).
    @Relationship public var trip: BusinessTrip?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    override public class var properties: [ModelProperty] {
        [
            .attribute("date", \DailyMileageRecord.date),
            .attribute("miles", \DailyMileageRecord.miles),
            .toOne("trip", \DailyMileageRecord.trip, inverse: "milesDriven"),
        ]
    }
}

/// A conference session attended on a business trip.
public final class ConferenceSession: PersistentModel {
    /// The title.
    @Attribute public var title = ""
    /// Who spoke, if known.
    @Attribute public var speaker: String?
    /// When.
    @Attribute public var date = Date(timeIntervalSince1970: 0)
    /// The trip it belongs to (the inverse side).
    @Relationship public var trip: BusinessTrip?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    override public class var properties: [ModelProperty] {
        [
            .attribute("title", \ConferenceSession.title),
            .attribute("speaker", \ConferenceSession.speaker),
            .attribute("date", \ConferenceSession.date),
            .toOne("trip", \ConferenceSession.trip, inverse: "sessionsAttended"),
        ]
    }
}

/// A sight to see on a personal trip.
public final class Attraction: PersistentModel {
    /// The name (preserved on deletion for trips).
    @Attribute public var name = ""
    /// Where it is, if known.
    @Attribute public var location: String?
    /// The trip it belongs to (the inverse side).
    @Relationship public var trip: PersonalTrip?

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    override public class var properties: [ModelProperty] {
        [
            .attribute("name", \Attraction.name),
            .attribute("location", \Attraction.location),
            .toOne("trip", \Attraction.trip, inverse: "attractionsToVisit"),
        ]
    }
}

/// A relative who comes along on personal trips.
public final class FamilyMember: PersistentModel {
    /// The name (preserved on deletion for trips).
    @Attribute public var name = ""
    /// How they are related to the traveller.
    @Attribute public var relationship: String?
    /// The personal trips they are on (deny: a member still on a trip cannot be deleted).
    @Relationship public var trips: [PersonalTrip] = []

    /// An empty object, as the store materialises one before filling it.
    public required init() { super.init() }

    /// A new object with these values (not yet inserted in a context).
    public init(name: String, relationship: String? = nil) {
        self.name = name
        self.relationship = relationship
        super.init()
    }

    override public class var properties: [ModelProperty] {
        [
            .attribute("name", \FamilyMember.name),
            .attribute("relationship", \FamilyMember.relationship),
            .toMany("trips", \FamilyMember.trips, inverse: "familyMembers", deleteRule: .deny),
        ]
    }
}
