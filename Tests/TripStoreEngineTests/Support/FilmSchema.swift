import TripStoreEngine

/// A second, deeper hierarchy, to prove the engine knows nothing of trips:
/// Production → TheatricalRelease → FeatureFilm / ShortFilm, Production → TVSpecial.
enum FilmSchema {
    static let genre = EnumDescription("Genre", cases: ["drama", "comedy", "documentary", "animation"])

    static let entities: [EntityDescription] = [
        EntityDescription("Production", attributes: [
            AttributeDescription("title", .string, options: [.preserveOnDeletion, .indexed]),
            AttributeDescription("budget", .double, optional: true),
            AttributeDescription("released", .date, optional: true, options: [.indexed]),
        ], relationships: [
            RelationshipDescription("credits", to: "Credit", toMany: true, inverse: "production", deleteRule: .cascade),
            RelationshipDescription("studio", to: "Studio", inverse: "productions", deleteRule: .nullify),
        ]),
        EntityDescription("TheatricalRelease", parent: "Production", attributes: [
            AttributeDescription("screens", .int, options: [.indexed]),
        ]),
        EntityDescription("FeatureFilm", parent: "TheatricalRelease", attributes: [
            AttributeDescription("runtimeMinutes", .int),
            AttributeDescription("genre", .enumeration(genre), options: [.preserveOnDeletion, .indexed]),
        ]),
        EntityDescription("ShortFilm", parent: "TheatricalRelease", attributes: [
            AttributeDescription("festival", .string, optional: true),
        ]),
        EntityDescription("TVSpecial", parent: "Production", attributes: [
            AttributeDescription("network", .string),
            AttributeDescription("tags", .array(.string)),
        ]),
        EntityDescription("Credit", attributes: [
            AttributeDescription("person", .string),
            AttributeDescription("role", .string),
        ], relationships: [
            RelationshipDescription("production", to: "Production", inverse: "credits", deleteRule: .nullify),
        ]),
        EntityDescription("Studio", attributes: [
            AttributeDescription("name", .string, options: [.indexed]),
        ], relationships: [
            RelationshipDescription("productions", to: "Production", toMany: true, inverse: "studio", deleteRule: .deny),
        ]),
    ]

    static let schema: Schema = try! Schema(entities)
}
