import TripStoreEngine

/// A deterministic generator of trip envelopes, the benchmark's data set:
/// about 10% Trip, 50% BusinessTrip and 40% PersonalTrip, related objects
/// inline.
///
/// ```swift
/// var g = TripDataGenerator(seed: 1)
/// let bytes = g.jsonArray(trips: 1000)
/// ```
public struct TripDataGenerator {
    var random: SplitMix64
    var counter: UInt64 = 0

    /// A generator whose data depends only on `seed`.
    public init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    mutating func next() -> UInt64 { random.next() }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func int(_ a: Int, _ b: Int) -> Int { a + Int(unit() * Double(b - a + 1)) }
    mutating func pick<T>(_ xs: [T]) -> T { xs[Int(unit() * Double(xs.count))] }
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    mutating func id() -> String {
        counter += 1
        let a = next(), b = next()
        func hex(_ v: UInt64, _ n: Int) -> String {
            let s = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, n - s.count)) + s.suffix(n)
        }
        return "\(hex(a >> 32, 8))-\(hex((a >> 16) & 0xFFFF, 4))-4\(hex(a & 0xFFF, 3))-\(hex(8 | (b >> 62), 1))\(hex((b >> 48) & 0xFFF, 3))-\(hex(b & 0xFFFF_FFFF_FFFF, 12))"
    }

    static let cities: [(String, String, Int)] = [
        ("London", "United Kingdom", 30), ("Paris", "France", 28), ("New York", "USA", 28), ("Tokyo", "Japan", 22),
        ("Rome", "Italy", 20), ("Berlin", "Germany", 18), ("Barcelona", "Spain", 16), ("Madrid", "Spain", 15),
        ("Amsterdam", "Netherlands", 15), ("Singapore", "Singapore", 15), ("Zürich", "Switzerland", 12),
        ("Munich", "Germany", 12), ("Milan", "Italy", 12), ("Lisbon", "Portugal", 10), ("Vienna", "Austria", 10),
        ("Prague", "Czechia", 10), ("Málaga", "Spain", 6), ("Kraków", "Poland", 5), ("Montréal", "Canada", 5),
        ("Reykjavík", "Iceland", 4), ("Romeoville", "USA", 2), ("São Paulo", "Brazil", 8), ("Düsseldorf", "Germany", 2),
        ("Québec City", "Canada", 2), ("Cancún", "Mexico", 2), ("Tromsø", "Norway", 2), ("Łódź", "Poland", 2),
        ("Seattle", "USA", 10), ("Chicago", "USA", 12), ("Sydney", "Australia", 12), ("Dubai", "United Arab Emirates", 12),
        ("Hong Kong", "China", 12), ("Toronto", "Canada", 12), ("Seoul", "South Korea", 10), ("Boston", "USA", 10),
        ("Istanbul", "Türkiye", 8), ("Bangkok", "Thailand", 8), ("Dublin", "Ireland", 8), ("Oslo", "Norway", 4),
        ("Nîmes", "France", 2), ("Besançon", "France", 2), ("Göttingen", "Germany", 2), ("Cádiz", "Spain", 2),
    ]
    static let cityWeights: [Int] = {
        var acc = 0
        return cities.map { acc += $0.2; return acc }
    }()
    static let first = ["Emma", "Liam", "Olivia", "Noah", "Sofía", "Mateo", "Zoë", "Lukas", "Chloé", "Hugo", "Amélie",
                        "Jörg", "Søren", "Björn", "Åsa", "Łukasz", "Ana", "João", "María", "François", "Mei", "Hiroshi"]
    static let last = ["Smith", "Müller", "Rossi", "García", "Dubois", "Lefèvre", "Nowak", "Dvořák", "Yılmaz", "Tanaka",
                       "Nguyễn", "O'Brien", "Jørgensen", "Þórsson", "Kim", "Silva", "Schmidt", "Kowalski"]
    static let companies = ["Acme Corp", "Globex", "Initech", "Hooli", "Nordwind AG", "Zürcher Versicherung", "Café Ñandú S.A."]
    static let purposes = ["Client kickoff", "Quarterly business review", "Sales summit", "Partner workshop",
                           "Board meeting", "Trade show", "Conference", "Audit visit", "Training", "Product launch"]
    static let hotels = ["Hilton", "Marriott", "Hyatt", "Ibis", "Novotel", "Radisson Blu", "Mövenpick", "Hôtel du Parc"]
    static let streets = ["Main Street", "Via del Corso", "Rue de Rivoli", "Hauptstraße", "Calle Mayor", "Königsallee"]
    static let bucket = ["Try the local street food", "Visit the old town", "Take a cooking class", "See a concert",
                         "Hike to the viewpoint", "Visit the main museum", "Take a boat tour", "Rent a bike"]
    static let restaurants = ["Trattoria da Mario", "Le Petit Zinc", "Zum Löwen", "El Faro", "Sakura", "Chez Léon", "Ōmiya"]
    static let topics = ["The future of logistics", "Swift on Linux", "Data privacy in practice", "Edge computing"]
    static let reasons = ["family", "vacation", "reunion", "wellness", "unknown"]
    static let reasonWeights = [30, 65, 75, 90, 100]
    static let notes = ["Book tickets early.", "Bring the camera.", "Check visa requirements.", "Café near the station opens at 7."]
    static let passes = ["Museum Pass", "City Card", "Opera season ticket", "Ski pass", "Musée d'Orsay pass"]
    static let airlines = ["LH", "BA", "AF", "KL", "UA", "SQ", "IB", "AZ", "LX"]
    static let relationships = ["mother", "father", "sister", "brother", "cousin", "grandmother", "partner"]

    mutating func person() -> String { pick(Self.first) + " " + pick(Self.last) }

    mutating func city() -> (String, String) {
        let r = int(0, Self.cityWeights.last! - 1)
        var i = 0
        while Self.cityWeights[i] <= r { i += 1 }
        return (Self.cities[i].0, "\(Self.cities[i].0), \(Self.cities[i].1)")
    }

    static let day0 = ISODate.daysFromCivil(year: 2020, month: 1, day: 1)
    static let days = ISODate.daysFromCivil(year: 2027, month: 12, day: 31) - day0 + 1

    func date(_ day: Int, _ minute: Int) -> String {
        ISODate.format(Double((Self.day0 + day) * 86400 + minute * 60 - ISODate.referenceOffset))
    }

    /// One top-level trip envelope with its related objects inline, as compact JSON.
    package mutating func trip(into w: inout JSONWriter) {
        let u = unit()
        let type = u < 0.1 ? "Trip" : u < 0.6 ? "BusinessTrip" : "PersonalTrip"
        let duration = type == "Trip" ? int(1, 14) : type == "BusinessTrip" ? int(1, 7) : int(2, 21)
        let (short, destination) = city()
        let d0 = int(0, Self.days - 1 - duration)
        let d1 = d0 + duration
        w.beginObject()
        w.key("type"); w.string(type)
        w.key("id"); w.string(id())
        w.key("data"); w.beginObject()
        var name = type == "BusinessTrip" ? "Q\((d0 % 365) / 92 + 1) \(pick(Self.purposes)): \(short)"
            : type == "PersonalTrip" ? "Holiday in \(short)" : "Trip to \(short)"
        if chance(0.03) { name = "Draft: " + name }
        w.key("name"); w.string(name)
        w.key("destination"); w.string(destination)
        w.key("startDate"); w.string(date(d0, int(72, 252) * 5))
        w.key("endDate"); w.string(date(d1, int(72, 264) * 5))
        w.key("bucketList"); w.beginArray()
        for _ in 0..<int(0, 4) {
            envelope("BucketListItem", &w) { g, w in
                w.key("title"); w.string(g.pick(Self.bucket))
                w.key("details"); if g.chance(0.5) { w.string("With " + g.pick(Self.first)) } else { w.null() }
                w.key("isCompleted"); w.bool(g.chance(0.35))
            }
        }
        w.endArray()
        w.key("livingAccommodation")
        if chance(0.6) {
            envelope("LivingAccommodation", &w) { g, w in
                w.key("name"); w.string("\(g.pick(Self.hotels)) \(short) Centre")
                w.key("address"); w.string("\(g.int(1, 250)) \(g.pick(Self.streets)), \(destination)")
                w.key("checkIn"); if g.chance(0.9) { w.string(g.date(d0, 900)) } else { w.null() }
                w.key("checkOut"); if g.chance(0.9) { w.string(g.date(d1, 660)) } else { w.null() }
            }
        } else {
            w.null()
        }
        if type == "BusinessTrip" {
            let company = pick(Self.companies)
            w.key("purpose"); w.string("\(pick(Self.purposes)) with \(company)")
            w.key("expenseCode"); w.string("EX-\(int(1, 40))")
            w.key("perDiemRate"); w.double(Double(int(3500, 32000)) / 100)
            w.key("mileageRate"); w.double(Double(int(300, 700)) / 1000)
            w.key("itinerary")
            if chance(0.7) {
                w.beginObject()
                w.key("agenda"); w.beginArray(); for _ in 0..<int(1, 4) { w.string("Lunch with \(person())") }; w.endArray()
                w.key("location"); if chance(0.7) { w.string("\(company) office, \(destination)") } else { w.null() }
                w.endObject()
            } else {
                w.null()
            }
            w.key("milesDriven"); w.beginArray()
            for i in 0..<int(0, 5) {
                envelope("DailyMileageRecord", &w) { g, w in
                    w.key("date"); w.string(g.date(min(d0 + i, d1), g.int(68, 84) * 15))
                    w.key("miles"); w.double(Double(g.int(30, 4200)) / 10)
                }
            }
            w.endArray()
            w.key("businessMeals"); w.beginArray()
            for _ in 0..<int(0, 6) {
                envelope("BusinessMeal", &w) { g, w in
                    w.key("restaurant"); w.string(g.pick(Self.restaurants))
                    w.key("date"); w.string(g.date(g.int(d0, d1), g.int(72, 84) * 15))
                    w.key("cost"); w.double(Double(g.int(1200, 26000)) / 100)
                    w.key("attendees"); w.beginArray(); for _ in 0..<g.int(1, 5) { w.string(g.person()) }; w.endArray()
                }
            }
            w.endArray()
            w.key("sessionsAttended"); w.beginArray()
            for _ in 0..<int(0, 3) {
                envelope("ConferenceSession", &w) { g, w in
                    w.key("title"); w.string("Talk: " + g.pick(Self.topics))
                    w.key("speaker"); if g.chance(0.8) { w.string(g.person()) } else { w.null() }
                    w.key("date"); w.string(g.date(g.int(d0, d1), g.int(32, 72) * 15))
                }
            }
            w.endArray()
        } else if type == "PersonalTrip" {
            let r = int(0, 99)
            w.key("reason"); w.string(Self.reasons[Self.reasonWeights.firstIndex { r < $0 }!])
            w.key("notes"); if chance(0.5) { w.string(pick(Self.notes)) } else { w.null() }
            w.key("frequentFlyerCodes"); w.beginArray()
            for _ in 0..<int(0, 3) { w.string("\(pick(Self.airlines))-\(int(10_000_000, 99_999_999))") }
            w.endArray()
            w.key("venuePasses"); w.beginArray(); for _ in 0..<int(0, 3) { w.string(pick(Self.passes)) }; w.endArray()
            w.key("attractionsToVisit"); w.beginArray()
            for _ in 0..<int(0, 4) {
                envelope("Attraction", &w) { g, w in
                    w.key("name"); w.string("\(short) Old Town")
                    w.key("location"); if g.chance(0.7) { w.string(destination) } else { w.null() }
                }
            }
            w.endArray()
            w.key("familyMembers"); w.beginArray()
            for _ in 0..<int(0, 3) {
                envelope("FamilyMember", &w) { g, w in
                    w.key("name"); w.string(g.person())
                    w.key("relationship"); if g.chance(0.85) { w.string(g.pick(Self.relationships)) } else { w.null() }
                }
            }
            w.endArray()
        }
        w.endObject()
        w.endObject()
    }

    mutating func envelope(_ type: String, _ w: inout JSONWriter, _ body: (inout TripDataGenerator, inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("type"); w.string(type)
        w.key("id"); w.string(id())
        w.key("data"); w.beginObject()
        body(&self, &w)
        w.endObject()
        w.endObject()
    }

    /// `trips` envelopes as a JSON array with one top-level envelope per line.
    public mutating func jsonArray(trips: Int) -> [UInt8] {
        var out: [UInt8] = Array("[\n".utf8)
        for i in 0..<trips {
            var w = JSONWriter(capacity: 2048)
            trip(into: &w)
            out.append(contentsOf: w.bytes)
            out.append(contentsOf: i == trips - 1 ? [0x0A] : [0x2C, 0x0A])
        }
        out.append(contentsOf: Array("]\n".utf8))
        return out
    }

    /// `trips` envelopes as JSON Lines.
    public mutating func jsonLines(trips: Int) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<trips {
            var w = JSONWriter(capacity: 2048)
            trip(into: &w)
            out.append(contentsOf: w.bytes)
            out.append(0x0A)
        }
        return out
    }
}
