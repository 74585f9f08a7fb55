// Three versions of a `Person`, nested as SwiftData's `VersionedSchema`s are.
import TripStoreEngine

enum PeopleV1 {
    final class Person: PersistentModel {
        @Attribute var name = ""
        override class var properties: [ModelProperty] { [.attribute("name", \Person.name)] }
    }
    static let models: ModelSchema = declared()
}
enum PeopleV2 {
    final class Person: PersistentModel {
        @Attribute var name = ""
        @Attribute var first: String?
        @Attribute var last: String?
        override class var properties: [ModelProperty] {
            [.attribute("name", \Person.name), .attribute("first", \Person.first), .attribute("last", \Person.last)]
        }
    }
    static let models: ModelSchema = declared()
}
enum PeopleV3 {
    final class Person: PersistentModel {
        @Attribute var first: String?
        @Attribute var last: String?
        override class var properties: [ModelProperty] { [.attribute("first", \Person.first), .attribute("last", \Person.last)] }
    }
    static let models: ModelSchema = declared()
}
