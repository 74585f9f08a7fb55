import Foundation
import TripStoreEngine

// A runnable example of the library with a hierarchy of its own:
// Vehicle → Car → ElectricCar, Vehicle → Bicycle, and Owner.
// Run it with `swift run tripstore-example [FOLDER]`.

class Vehicle: PersistentModel {
    @Attribute var name = ""
    @Attribute var built = Date(timeIntervalSince1970: 0)
    @Relationship var owner: Owner?

    required init() { super.init() }
    init(name: String, built: String) {
        self.name = name
        self.built = ISODate.parse(built).map { Date(timeIntervalSinceReferenceDate: $0) } ?? Date()
        super.init()
    }

    override class var properties: [ModelProperty] {
        [.attribute("name", \Vehicle.name, options: [.preserveOnDeletion, .indexed]),
         .attribute("built", \Vehicle.built, options: [.indexed]),
         .toOne("owner", \Vehicle.owner, inverse: "vehicles")]
    }
}

class Car: Vehicle {
    @Attribute var seats = 4
    override class var properties: [ModelProperty] { [.attribute("seats", \Car.seats)] }
}

final class ElectricCar: Car {
    @Attribute var rangeKilometres = 0.0
    override class var properties: [ModelProperty] { [.attribute("rangeKilometres", \ElectricCar.rangeKilometres)] }
}

final class Bicycle: Vehicle {
    @Attribute var gears = 1
    override class var properties: [ModelProperty] { [.attribute("gears", \Bicycle.gears)] }
}

/// Version 2.0.0 of Bicycle: `gears` is now `gearCount`, and every bicycle
/// has a `colour` (a new required attribute, so it needs a default).
final class BicycleV2: Vehicle {
    @Attribute var gearCount = 1
    @Attribute var colour = "black"
    override class var entityName: String { "Bicycle" }
    override class var properties: [ModelProperty] {
        [.attribute("gearCount", \BicycleV2.gearCount, originalName: "gears"),
         .attribute("colour", \BicycleV2.colour, defaultValue: "black")]
    }
}

final class Owner: PersistentModel {
    @Attribute var name = ""
    @Relationship var vehicles: [Vehicle] = []
    override class var properties: [ModelProperty] {
        [.attribute("name", \Owner.name), .toMany("vehicles", \Owner.vehicles, inverse: "owner", deleteRule: .cascade)]
    }
}

func run() throws {
    let given = CommandLine.arguments.dropFirst().first
    if let given, given.hasPrefix("-") {
        // An option is not a folder: say what the program takes instead of making a store named after it.
        print("usage: tripstore-example [FOLDER]   (a new folder for the example's store; default: a temporary one)")
        return
    }
    let folder = given ?? NSTemporaryDirectory() + "tripstore-example-\(UUID().uuidString)"
    let models = try ModelSchema([Vehicle.self, Car.self, ElectricCar.self, Bicycle.self, Owner.self], version: "1.0.0")
    let context = ModelContext(try ModelContainer(folder: folder, models: models))

    // Insert: related objects come along; one save is one transaction.
    let ada = Owner()
    ada.name = "Ada"
    let zoe = ElectricCar(name: "Zoë", built: "2021-04-01")
    zoe.rangeKilometres = 390
    let beetle = Car(name: "Beetle", built: "1967-08-15")
    let bike = Bicycle(name: "Brompton", built: "2019-02-20")
    bike.gears = 6
    ada.vehicles = [zoe, beetle, bike]
    context.insert(ada)
    try context.save(author: "example")
    print("saved \(try context.fetchCount(FetchDescriptor<Vehicle>())) vehicles to \(folder)")

    // Deep: every Car, ElectricCars included, each as its own class.
    let cars = try context.fetch(FetchDescriptor<Vehicle>(predicate: #Predicate { $0 is Car }, sortBy: [SortDescriptor(\Vehicle.built)]))
    print("is Car:", cars.map { "\($0.name) (\(type(of: $0)))" })
    // Shallow, in the query language.
    let plain = try context.fetch(FetchDescriptor<Vehicle>(query: "is exactly Car"))
    print("is exactly Car:", plain.map(\.name))
    // A subclass property through `as?`.
    let longRange = try context.fetch(FetchDescriptor<Vehicle>(predicate: #Predicate {
        if let e = $0 as? ElectricCar { e.rangeKilometres > 300 } else { false }
    }))
    print("range over 300 km:", longRange.map(\.name))
    print(try context.explain(FetchDescriptor<Vehicle>(predicate: #Predicate { $0 is Car && $0.name.contains("Z") })))

    // A relationship edit: the bike moves to a new owner, and both owners'
    // lists follow at once (SwiftData's inverse maintenance). The fetch sees
    // the unsaved owner (pending changes count, as in SwiftData); nothing is
    // deleted by leaving Ada's list.
    let grace = Owner()
    grace.name = "Grace"
    context.insert(grace)
    bike.owner = grace
    print("before saving: Ada has \(ada.vehicles.map(\.name)), Grace has \(grace.vehicles.map(\.name))")
    let owners = try context.fetch(FetchDescriptor<Owner>(sortBy: [SortDescriptor(\Owner.name)]))
    print("owners before saving:", owners.map(\.name))
    try context.save(author: "example")
    print("the bike belongs to \(bike.owner?.name ?? "nobody")")

    // A conflict, retried: another context renames the car first; this
    // context's rename of the same property is refused until it refreshes.
    let other = ModelContext(context.container)
    if let car = try other.fetch(FetchDescriptor<Vehicle>(query: "name == \"Zoë\"")).first {
        car.name = "Zoë E-Tech"
        try other.save(author: "other")
    }
    zoe.name = "Zoe"
    do {
        try context.save(author: "example")
    } catch StoreError.conflict(let conflicts) {
        print("conflict:", conflicts.map(\.description).joined(separator: "; "))
        context.refresh(zoe)  // takes in the other save; this context's change stays pending
        try context.save(author: "example")
        print("retried: the car is now \(zoe.name)")
    }

    // Delete, then read the tombstone: the preserved name survives.
    context.delete(beetle)
    try context.save(author: "example")
    for t in context.history(types: [Vehicle.self], kinds: [.delete]) {
        for c in t.changes {
            print("deleted \(c.type) \(c.id) at token \(t.token) by \(t.author); name was \(c.preservedValue("name") ?? .null)")
        }
    }

    // The next version of the app: opening the store with its models
    // migrates it in one transaction, keeping every object and its history.
    context.container.close()
    let v2 = try ModelSchema([Vehicle.self, Car.self, ElectricCar.self, BicycleV2.self, Owner.self], version: "2.0.0")
    let plan = MigrationPlan([.lightweight(from: models, to: v2)])
    let upgraded = ModelContext(try ModelContainer(folder: folder, models: v2, migrationPlan: plan))
    let bikes = try upgraded.fetch(FetchDescriptor<BicycleV2>())
    print("version 2.0.0:", bikes.map { "\($0.name) has \($0.gearCount) gears and is \($0.colour)" })
    if let t = upgraded.history().last, let m = t.changes.first?.migration {
        print("migrated at token \(t.token):", m.steps.joined(separator: "; "))
    }
    // Before the migration, the store answers as version 1.0.0 did.
    let before = try upgraded.container.withStore { store in
        let past = try store.past(at: .token(store.lastToken - 1))
        return (version: past.schema.version ?? "?", objects: past.objectCount)
    }
    print("before it, the schema was version \(before.version) with \(before.objects) objects")
}

do {
    try run()
} catch {
    FileHandle.standardError.write(Data("tripstore-example: \(error)\n".utf8))
    exit(1)
}
