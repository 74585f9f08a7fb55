// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "tripstore",
    products: [
        .library(name: "TripStoreEngine", targets: ["TripStoreEngine"]),
        .library(name: "TripStoreModels", targets: ["TripStoreModels"]),
        .executable(name: "tripstore", targets: ["tripstore"]),
        .executable(name: "tripstore-bench", targets: ["tripstore-bench"]),
    ],
    targets: [
        // JSON bytes → envelope → store → indexes → queries; knows no trips.
        // Release builds skip the run-time exclusivity checks: the engine's hot
        // loops read class-held arrays, and the checks cost 5–10% of a load.
        .target(name: "TripStoreEngine", swiftSettings: strict + [
            .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
        ]),
        // The trip domain: model classes and their schema.
        .target(name: "TripStoreModels", dependencies: ["TripStoreEngine"], swiftSettings: strict),
        // Commands, argument scanning, output formats, exit codes.
        .target(name: "TripStoreCLI", dependencies: ["TripStoreEngine", "TripStoreModels"], swiftSettings: strict),
        .executableTarget(name: "tripstore", dependencies: ["TripStoreCLI"], swiftSettings: strict),
        // The library with a hierarchy of its own: `swift run tripstore-example`.
        .executableTarget(name: "tripstore-example", dependencies: ["TripStoreEngine"], swiftSettings: strict),
        // Measures import, open, queries, commits and memory; compares with SQLite.
        .executableTarget(name: "tripstore-bench", dependencies: ["TripStoreEngine", "TripStoreModels"], swiftSettings: strict),
        .testTarget(
            name: "TripStoreEngineTests", dependencies: ["TripStoreEngine", "TripStoreModels"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "TripStoreCLITests", dependencies: ["TripStoreCLI", "TripStoreModels", "TripStoreEngine"],
            swiftSettings: strict),
    ]
)
