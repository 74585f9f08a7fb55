import Foundation
import Testing
@testable import TripStoreCLI

@Suite struct CLIEmptyFromTests {
    /// An empty `--from` is named as such, without a caret under an empty line.
    @Test func anEmptyFromTypeHasNoCaretUnderNothing() {
        let store = CLIRunner.scratch() + "/from"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let r = CLIRunner.run(["query", "--from", "", "--count"], store: store)
        #expect(r.code == 1)
        #expect(r.err.contains("unknown type '' to query from") && !r.err.contains("^"), "\(r.err)")
    }
}

/// `--sort` by a to-one path, against a sort of the export done apart.
@Suite struct CLIToOneSortTests {
    @Test(arguments: ["livingAccommodation.name", "-livingAccommodation.name"])
    func aToOnePathSortsAsAReferenceSortDoes(_ key: String) throws {
        let store = CLIRunner.scratch() + "/sort"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let got = CLIRunner.run(["query", "is Trip", "--sort", key, "--format", "ids"], store: store).out
            .split(separator: "\n").map(String.init)
        var names: [String: String] = [:]
        var trips: [(id: String, accommodation: String?)] = []
        for line in CLIRunner.run(["export", "--format", "jsonl"], store: store).out.split(separator: "\n") {
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let type = o["type"] as? String, id = try #require(o["id"] as? String), data = o["data"] as? [String: Any] ?? [:]
            if type == "LivingAccommodation" { names[id] = data["name"] as? String }
            if ["Trip", "BusinessTrip", "PersonalTrip"].contains(type) {
                trips.append((id, (data["livingAccommodation"] as? [String: Any])?["id"] as? String))
            }
        }
        let descending = key.hasPrefix("-")
        func less(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }
        let expected = trips.map { (id: $0.id, name: $0.accommodation.flatMap { names[$0] }) }.sorted { a, b in
            switch (a.name, b.name) {
            case (nil, nil): return less(a.id, b.id)
            case (nil, _): return !descending
            case (_, nil): return descending
            case (let x?, let y?): return x == y ? less(a.id, b.id) : (descending ? less(y, x) : less(x, y))
            }
        }.map(\.id)
        #expect(trips.contains { $0.accommodation == nil } && trips.contains { $0.accommodation != nil })
        #expect(got == expected)
    }
}
