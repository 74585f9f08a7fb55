// The README's other model classes, beside `Vehicle`.
import TripStoreEngine

final class ElectricCar: Vehicle {
    @Attribute var rangeKilometres = 0.0
    override class var properties: [ModelProperty] { [.attribute("rangeKilometres", \ElectricCar.rangeKilometres)] }
}
final class Owner: PersistentModel {
    @Attribute var name = ""
    @Relationship var vehicles: [Vehicle] = []
    override class var properties: [ModelProperty] {
        [.attribute("name", \Owner.name), .toMany("vehicles", \Owner.vehicles, inverse: "owner", deleteRule: .cascade)]
    }
}
