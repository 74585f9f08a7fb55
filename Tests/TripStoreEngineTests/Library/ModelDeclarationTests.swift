import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreModels

// Model classes with the mistakes a developer without macros can make.

final class Forgetful: PersistentModel {
    @Attribute var title = ""
    var notes = ""  // stored, not declared: would silently not be saved
    override class var properties: [ModelProperty] { [.attribute("title", \Forgetful.title)] }
}

/// Declared, but a plain `var`: the context could not see it change.
final class Untracked: PersistentModel {
    @Attribute var title = ""
    var pages = 0
    override class var properties: [ModelProperty] { [.attribute("title", \Untracked.title), .attribute("pages", \Untracked.pages)] }
}

final class Cached: PersistentModel {
    @Attribute var title = ""
    var scratch = 0
    override class var transientProperties: [String] { ["scratch"] }
    override class var properties: [ModelProperty] { [.attribute("title", \Cached.title)] }
}

final class Crossed: PersistentModel {
    @Attribute var title = ""
    @Attribute var subtitle = ""
    override class var properties: [ModelProperty] {
        [.attribute("title", \Crossed.subtitle), .attribute("subtitle", \Crossed.title)]
    }
}

final class Borrowed: PersistentModel {
    var title = ""
    override class var properties: [ModelProperty] { [.attribute("title", \Cached.title)] }
}

class Note: PersistentModel {
    @Attribute var text = ""
    override class var properties: [ModelProperty] { [.attribute("text", \Note.text)] }
}

/// A subclass that adds nothing: no `properties` override.
final class Sticky: Note {}

struct Dimensions: Codable, Equatable {
    var width: Double
    var height: Double
}

enum Shipping: Codable, Equatable {
    case pickup
    case courier(company: String, days: Int)
}

struct Delivery: Codable, Equatable {
    var promised: Date
    var attempts: [Date]
}

final class Courier: PersistentModel {
    @Attribute var delivery = Delivery(promised: Date(timeIntervalSinceReferenceDate: 0), attempts: [])
    override class var properties: [ModelProperty] { [.attribute("delivery", \Courier.delivery)] }
}

final class Parcel: PersistentModel {
    @Attribute var tracking = UUID()
    @Attribute var label: URL?
    @Attribute var photo = Data()
    @Attribute var price = Decimal(0)
    @Attribute var size = Dimensions(width: 0, height: 0)
    @Attribute var shipping: Shipping?
    override class var properties: [ModelProperty] {
        [.attribute("tracking", \Parcel.tracking, options: [.indexed]), .attribute("label", \Parcel.label),
         .attribute("photo", \Parcel.photo), .attribute("price", \Parcel.price),
         .attribute("size", \Parcel.size), .attribute("shipping", \Parcel.shipping)]
    }
}

@Suite struct ModelDeclarationTests {
    func error(_ types: [PersistentModel.Type]) -> String? {
        do {
            _ = try ModelSchema(types)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func anUndeclaredStoredPropertyIsNamed() {
        #expect(error([Forgetful.self]) == "class Forgetful: stored property 'notes' is not declared in 'properties', so it would not be saved; "
                + "declare it, make it computed, or list it in 'transientProperties'")
        #expect(error([Cached.self]) == nil)
    }

    @Test func aDeclaredPlainVarIsRefusedWithTheWayToDeclareIt() {
        #expect(error([Untracked.self]) == "class Untracked: property 'pages' is a plain stored property; declare it "
                + "'@Attribute var pages' so that its changes are saved and it can load lazily")
    }

    @Test func aNameThatIsNotItsKeyPathsPropertyIsNamed() {
        #expect(error([Crossed.self]) == "class Crossed: property 'title' is declared with the key path of stored property 'subtitle'")
    }

    @Test func aKeyPathOfAnotherClassIsRefusedNotTrapped() {
        #expect(error([Borrowed.self]) == #"class Borrowed: property 'title' is declared with a key path rooted at Cached; use \Borrowed.title"#)
    }

    @Test func aSubclassThatAddsNothingNeedsNoDeclaration() throws {
        let models = try ModelSchema([Note.self, Sticky.self])
        #expect(models.schema.entity(named: "Sticky")?.properties.map(\.name) == ["text"])
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("sticky"), models: models))
        let s = Sticky()
        s.text = "buy milk"
        context.insert(s)
        try context.save(author: "me")
        let notes = try context.fetch(FetchDescriptor<Note>(query: "is exactly Sticky"))
        #expect(notes.count == 1 && notes[0] is Sticky && notes[0].text == "buy milk")
    }

    @Test func foundationTypesAndCodableValuesAreAttributes() throws {
        let folder = TestFolders.make("parcels")
        let models = try ModelSchema([Parcel.self])
        let tracking = UUID()
        do {
            let context = ModelContext(try ModelContainer(folder: folder, models: models))
            let p = Parcel()
            p.tracking = tracking
            p.label = URL(string: "https://example.com/labels/1?x=a%20b")
            p.photo = Data([0, 1, 2, 250, 255])
            p.price = Decimal(string: "19.99")!
            p.size = Dimensions(width: 30.5, height: 12)
            p.shipping = .courier(company: "Swift Post", days: 2)
            context.insert(p)
            try context.save(author: "me")
        }
        let context = ModelContext(try ModelContainer(folder: folder, models: models))
        let found = try context.fetch(FetchDescriptor<Parcel>(query: "tracking == \"\(tracking.uuidString)\""))
        let p = try #require(found.first)
        #expect(p.tracking == tracking)
        #expect(p.label == URL(string: "https://example.com/labels/1?x=a%20b"))
        #expect(p.photo == Data([0, 1, 2, 250, 255]))
        #expect(p.price == Decimal(string: "19.99")! && "\(p.price)" == "19.99")
        #expect(p.size == Dimensions(width: 30.5, height: 12))
        #expect(p.shipping == .courier(company: "Swift Post", days: 2))
        // The envelope keeps each as readable text.
        let o = try #require(context.container.store.object(id: p.persistentModelID))
        #expect(o.values[4] == .string(#"{"height":12,"width":30.5}"#))
        #expect(o.values[3] == .string("19.99"))
    }

    /// A date inside a `Codable` attribute round-trips exactly, as a
    /// top-level `Date` attribute does (`.iso8601` kept whole seconds).
    @Test func datesNestedInACodableAttributeKeepEveryDigit() throws {
        let folder = TestFolders.make("courier")
        let models = try ModelSchema([Courier.self])
        let now = Date()
        let delivery = Delivery(promised: now, attempts: [Date(timeIntervalSinceReferenceDate: 0.001),
                                                          Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7),
                                                          Date(timeIntervalSince1970: -0.5)])
        do {
            let context = ModelContext(try ModelContainer(folder: folder, models: models))
            let c = Courier()
            c.delivery = delivery
            context.insert(c)
            try context.save(author: "me")
        }
        let context = ModelContext(try ModelContainer(folder: folder, models: models))
        let read = try #require(try context.fetch(FetchDescriptor<Courier>()).first)
        #expect(read.delivery == delivery)
        #expect(read.delivery.promised.timeIntervalSinceReferenceDate == now.timeIntervalSinceReferenceDate)
    }
}
