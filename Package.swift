// swift-tools-version: 6.0
import PackageDescription

// Built as another package's dependency (a checkout), no target carries an
// unsafe flag: SwiftPM refuses them there. Built here, release code names
// the generic types it uses through direct metadata accessors, which a cold
// command does not pay the runtime to demangle (docs/decisions.md).
let asDependency = Context.packageDirectory.contains("/checkouts/")
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
] + (asDependency ? [] : [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
])

// The targets follow the data flow; each may import only those below it
// (`.ci/check-layers` fails the build of CI if one imports uphill):
//
//   TripStoreSystem   TripStoreJSON        system calls, checksums / bytes ↔ JSON values
//   (TripStorePrefetch: the C compiler's cache hint, for TripStoreCore's hot loops)
//   (TripStoreCRC32C: the processor's CRC-32C instruction, for TripStoreSystem's checksums)
//          \             /
//          TripStoreFormat                 schema, envelopes, journal and snapshot lines, history records
//                 |
//          TripStoreCore                   records, store, indexes, queries, history
//                 |
//          TripStoreEngine                 the SwiftData-style library: ModelContainer, ModelContext, …
//            /         \
//   TripStoreModels   TripStoreCLI         the trip domain / the commands
let package = Package(
    name: "tripstore",
    products: [
        .library(name: "TripStoreEngine", targets: ["TripStoreEngine"]),
        .library(name: "TripStoreModels", targets: ["TripStoreModels"]),
        .executable(name: "tripstore", targets: ["tripstore"]),
        .executable(name: "tripstore-bench", targets: ["tripstore-bench"]),
    ],
    targets: [
        // Crash points exist in debug builds (which the tests run) only; a
        // release build cannot reach them.
        // The processor's CRC-32C instruction, where it has one: Swift cannot name it.
        .target(name: "TripStoreCRC32C"),
        .target(name: "TripStoreSystem", dependencies: ["TripStoreCRC32C"], swiftSettings: strict + [
            .define("TRIPSTORE_TEST_HOOKS", .when(configuration: .debug)),
        ]),
        .target(name: "TripStoreJSON", swiftSettings: strict),
        // One inline C function: Swift has no prefetch of its own.
        .target(name: "TripStorePrefetch"),
        .target(name: "TripStoreFormat", dependencies: ["TripStoreJSON", "TripStoreSystem"], swiftSettings: strict),
        .target(name: "TripStoreCore", dependencies: ["TripStoreFormat", "TripStoreJSON", "TripStoreSystem", "TripStorePrefetch"], swiftSettings: strict),
        .target(name: "TripStoreEngine", dependencies: ["TripStoreCore", "TripStoreFormat", "TripStoreJSON", "TripStoreSystem"], swiftSettings: strict),
        // The trip domain: model classes and their schema.
        .target(name: "TripStoreModels", dependencies: ["TripStoreEngine"], swiftSettings: strict),
        // Commands, argument scanning, output formats, exit codes.
        .target(name: "TripStoreCLI", dependencies: ["TripStoreEngine", "TripStoreModels"], swiftSettings: strict),
        // Linked fully static on Linux in release: no dynamic loader, no
        // relocations to apply, so a cold command starts about as fast as a C
        // program (the CLI uses no name service, so static glibc is safe).
        .executableTarget(
            name: "tripstore", dependencies: ["TripStoreCLI", "TripStoreEngine"], swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-static-executable"], .when(platforms: [.linux], configuration: .release))]),
        // The library with a hierarchy of its own: `swift run tripstore-example`.
        .executableTarget(name: "tripstore-example", dependencies: ["TripStoreEngine"], swiftSettings: strict),
        // Measures import, open, queries, commits and memory; compares with SQLite.
        .executableTarget(name: "tripstore-bench", dependencies: ["TripStoreEngine", "TripStoreModels"], swiftSettings: strict),
        .testTarget(
            name: "TripStoreEngineTests",
            dependencies: ["TripStoreEngine", "TripStoreModels", "TripStoreCore", "TripStoreFormat", "TripStoreJSON", "TripStoreSystem"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "TripStoreCLITests",
            dependencies: ["TripStoreCLI", "TripStoreModels", "TripStoreEngine", "TripStoreFormat", "TripStoreSystem"],
            swiftSettings: strict),
    ]
)
