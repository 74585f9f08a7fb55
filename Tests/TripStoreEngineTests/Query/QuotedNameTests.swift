import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON

/// Every name a schema may use can be said in a query: a keyword is quoted
/// with backticks (`` `count` == 3 ``), and printed queries quote it again.
@Suite struct QuotedNameTests {
    static let keywords = ["is", "exactly", "and", "or", "not", "in", "any", "all", "count", "nil", "true", "false"]

    static let schema: Schema = try! Schema([
        EntityDescription("is", attributes: keywords.map { AttributeDescription($0, .string, options: $0 == "count" ? [.indexed] : []) }),
    ])

    @Test func everyKeywordNamesAPropertyOnceQuoted() throws {
        let store = try Store.open(TestFolders.make("quoted-names"), schema: Self.schema, access: .write)
        let data = Self.keywords.map { #""\#($0)":"v-\#($0)""# }
        let input = Array(#"[{"type":"is","id":"o1","data":{\#(data.joined(separator: ","))}}]"#.utf8)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(input, schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        for k in Self.keywords {
            let q = try Query("is `is` && `\(k)` == \"v-\(k)\"")
            #expect(try store.run(q).rows.count == 1, "`\(k)`")
            #expect(try store.run(Query("`\(k)` == \"other\"", from: "is")).rows.isEmpty, "`\(k)`")
            #expect(Query.quoted(k) == "`\(k)`")
            // Unquoted, a keyword is still a keyword: the query does not parse as a comparison.
            #expect(throws: QueryError.self, "\(k) unquoted") { _ = try store.run(Query("\(k) == \"v-\(k)\"", from: "is")) }
        }
        #expect(Query.quoted("destination") == "destination" && Query.quoted("counted") == "counted")
        // The plan prints the names as a query would write them.
        let plan = try store.run(Query("is exactly `is` && `count` == \"v-count\"")).plan
        #expect(plan.description.contains("is exactly `is`"), "\(plan.description)")
        #expect(QueryPath(names: ["count", "in", "x"], columns: [1, 1, 1]).description == "`count`.`in`.x")
    }

    @Test func aQuotedNameMustBeClosedAndNotEmpty() {
        #expect(throws: QueryError.self) { _ = try Query("`count == 1") }
        #expect(throws: QueryError.self) { _ = try Query("`` == 1") }
    }
}
