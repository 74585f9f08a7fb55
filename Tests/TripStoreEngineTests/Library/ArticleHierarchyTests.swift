import Foundation
import Testing
@testable import TripStoreEngine

// SwiftData's documented inheritance example: Article → Tutorial / News, and
// a Magazine whose `articles` hold both kinds, with no inverse.

class Article: PersistentModel {
    @Attribute var title = ""
    required init() { super.init() }
    init(title: String) {
        self.title = title
        super.init()
    }
    override class var properties: [ModelProperty] { [.attribute("title", \Article.title, options: [.indexed])] }
}

final class Tutorial: Article {
    @Attribute var difficulty = 0
    override class var properties: [ModelProperty] { [.attribute("difficulty", \Tutorial.difficulty)] }
}

final class News: Article {
    @Attribute var topic = ""
    override class var properties: [ModelProperty] { [.attribute("topic", \News.topic, options: [.indexed])] }
}

final class Magazine: PersistentModel {
    @Attribute var name = ""
    @Relationship var articles: [Article] = []
    override class var properties: [ModelProperty] {
        [.attribute("name", \Magazine.name), .toMany("articles", \Magazine.articles)]
    }
}

@Suite struct ArticleHierarchyTests {
    static let models = try! ModelSchema([Article.self, Tutorial.self, News.self, Magazine.self])

    func context() throws -> (ModelContext, Magazine) {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("articles"), models: Self.models))
        let easy = Tutorial(title: "Easy")
        easy.difficulty = 1
        let hard = Tutorial(title: "Hard")
        hard.difficulty = 5
        let general = News(title: "Headlines")
        general.topic = "General"
        let sport = News(title: "Scores")
        sport.topic = "Sport"
        let magazine = Magazine()
        magazine.name = "Monthly"
        magazine.articles = [easy, general, hard, sport, Article(title: "Plain")]
        context.insert(magazine)
        try context.save(author: "editor")
        return (context, magazine)
    }

    @Test func aToManyOfMixedSubclassesKeepsEachClassAndOrder() throws {
        let (_, magazine) = try context()
        #expect(magazine.articles.map { "\(type(of: $0))" } == ["Tutorial", "News", "Tutorial", "News", "Article"])
    }

    @Test func theElseIfLetChainIsOneIndexedQuery() throws {
        let (context, _) = try context()
        let general = "General"
        let descriptor = FetchDescriptor<Article>(predicate: #Predicate { article in
            if let tutorial = article as? Tutorial {
                tutorial.difficulty < 3
            } else if let news = article as? News {
                news.topic == general
            } else {
                false
            }
        }, sortBy: [SortDescriptor(\Article.title)])
        #expect(try context.fetch(descriptor).map(\.title) == ["Easy", "Headlines"])
        let plan = try context.explain(descriptor)
        #expect(plan.query == #"((is Tutorial && difficulty < 3) || (!is Tutorial && (is News && topic == "General")))"#)
        #expect(!plan.evaluatedCandidates)
        // `else { true }` keeps everything that is not a hard tutorial.
        let notHard = FetchDescriptor<Article>(predicate: #Predicate { article in
            if let tutorial = article as? Tutorial { tutorial.difficulty < 3 } else { true }
        }, sortBy: [SortDescriptor(\Article.title)])
        #expect(try context.fetch(notHard).map(\.title) == ["Easy", "Headlines", "Plain", "Scores"])
    }

    @Test func deletingAnArticleRemovesItFromTheMagazineWithoutAnInverse() throws {
        let (context, magazine) = try context()
        let sport = try #require(magazine.articles.first { $0.title == "Scores" })
        context.delete(sport)
        try context.save(author: "editor")
        #expect(magazine.articles.map(\.title) == ["Easy", "Headlines", "Hard", "Plain"])
        // Removing an article from the magazine keeps the article.
        magazine.articles.removeFirst()
        try context.save(author: "editor")
        #expect(try context.fetchCount(FetchDescriptor<Article>()) == 4)
        #expect(try context.fetchCount(FetchDescriptor<Tutorial>()) == 2)
    }
}
