import Foundation
import TripStoreEngine

// The trip domain of SPEC §1 as model classes with real inheritance.

/// A trip: the base class of `BusinessTrip` and `PersonalTrip`.
public class Trip: PersistentModel {
    public var name = ""
    public var destination = ""
    public var startDate = Date(timeIntervalSince1970: 0)
    public var endDate = Date(timeIntervalSince1970: 0)
    public var bucketList: [BucketListItem] = []
    public var livingAccommodation: LivingAccommodation?

    public required init() { super.init() }

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
    public var agenda: [String]
    public var location: String?

    public init(agenda: [String], location: String? = nil) {
        self.agenda = agenda
        self.location = location
    }

    public static var embeddedDescription: EmbeddedDescription { TripSchema.meetingItinerary }

    public init?(fields: [Value]) {
        guard fields.count == 2, let agenda = [String](storedValue: fields[0]),
              let location = String?(storedValue: fields[1]) else { return nil }
        self.init(agenda: agenda, location: location)
    }

    public var fields: [Value] { [agenda.storedValue, location.storedValue] }
}

public final class BusinessTrip: Trip {
    public var purpose = ""
    public var expenseCode = ""
    public var perDiemRate = 0.0
    public var mileageRate = 0.0
    public var itinerary: MeetingItinerary?
    public var milesDriven: [DailyMileageRecord] = []
    public var businessMeals: [BusinessMeal] = []
    public var sessionsAttended: [ConferenceSession] = []

    public required init() { super.init() }

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

public final class PersonalTrip: Trip {
    public enum Reason: String, CaseIterable, Codable, ModelEnum, Sendable {
        case family, reunion, vacation, wellness, unknown
    }

    public var reason = Reason.unknown
    public var notes: String?
    public var frequentFlyerCodes: [String] = []
    public var venuePasses: [String] = []
    public var attractionsToVisit: [Attraction] = []
    public var familyMembers: [FamilyMember] = []

    public required init() { super.init() }

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

public final class LivingAccommodation: PersistentModel {
    public var name = ""
    public var address = ""
    public var checkIn: Date?
    public var checkOut: Date?
    public var trip: Trip?

    public required init() { super.init() }

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

public final class BucketListItem: PersistentModel {
    public var title = ""
    public var details: String?
    public var isCompleted = false
    public var trip: Trip?

    public required init() { super.init() }

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

public final class BusinessMeal: PersistentModel {
    public var restaurant = ""
    public var date = Date(timeIntervalSince1970: 0)
    public var cost = 0.0
    public var attendees: [String] = []
    public var trip: BusinessTrip?

    public required init() { super.init() }

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

public final class DailyMileageRecord: PersistentModel {
    public var date = Date(timeIntervalSince1970: 0)
    public var miles = 0.0
    public var trip: BusinessTrip?

    public required init() { super.init() }

    override public class var properties: [ModelProperty] {
        [
            .attribute("date", \DailyMileageRecord.date),
            .attribute("miles", \DailyMileageRecord.miles),
            .toOne("trip", \DailyMileageRecord.trip, inverse: "milesDriven"),
        ]
    }
}

public final class ConferenceSession: PersistentModel {
    public var title = ""
    public var speaker: String?
    public var date = Date(timeIntervalSince1970: 0)
    public var trip: BusinessTrip?

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

public final class Attraction: PersistentModel {
    public var name = ""
    public var location: String?
    public var trip: PersonalTrip?

    public required init() { super.init() }

    override public class var properties: [ModelProperty] {
        [
            .attribute("name", \Attraction.name),
            .attribute("location", \Attraction.location),
            .toOne("trip", \Attraction.trip, inverse: "attractionsToVisit"),
        ]
    }
}

public final class FamilyMember: PersistentModel {
    public var name = ""
    public var relationship: String?
    public var trips: [PersonalTrip] = []

    public required init() { super.init() }

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
