// The README's root model class.
import TripStoreEngine

class Vehicle: PersistentModel {
    @Attribute var name = ""
    @Relationship var owner: Owner?
    override class var properties: [ModelProperty] {
        [.attribute("name", \Vehicle.name, options: [.preserveOnDeletion, .indexed]),
         .toOne("owner", \Vehicle.owner, inverse: "vehicles")]
    }
}
