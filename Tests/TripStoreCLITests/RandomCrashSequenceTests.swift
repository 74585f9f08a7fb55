import Foundation
import Testing
import TripStoreEngine
import TripStoreModels
#if canImport(Glibc)
import Glibc
#endif

/// Random sequences of real `tripstore` processes (one-object and bulk
/// updates and deletes, redactions, prunes, compactions), a third of them killed with SIGKILL at
/// a random moment, while compactions run in the background every few
/// commits. After each step every trip's name is what a model of the
/// commands says, each killed command counted all or nothing; and the
/// store read with its caches answers as a copy of its JSON files alone.
@Suite(.serialized) struct RandomCrashSequenceTests {
    /// Each live trip's name, as the store says.
    func names(_ store: String) -> [String: String]? {
        let r = CLIRunner.run(["query", "is Trip", "--fields", "name", "--format", "jsonl"], store: store)
        guard r.code == 0 else { return nil }
        var out: [String: String] = [:]
        for line in r.out.split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let id = o["id"] as? String,
                  let data = o["data"] as? [String: Any], let name = data["name"] as? String else { return nil }
            out[id] = name
        }
        return out
    }

    /// One command and what it does to the names when it commits.
    struct Step {
        var args: [String]
        var effect: ([String: String]) -> [String: String]
    }

    func randomStep(_ k: Int, _ names: [String: String], _ random: inout SplitMix64) -> Step {
        let ids = names.keys.sorted()
        let id = ids[Int(random.next() % UInt64(ids.count))]
        switch random.next() % 8 {
        case 0, 1:
            return Step(args: ["update", id, "--set", "name=N\(k)"]) { var n = $0; n[id] = "N\(k)"; return n }
        case 2:
            // Every trip a one-object update named with a 1 first: a bulk update of many or none.
            return Step(args: ["update", "--where", "is Trip && name ^= \"N1\"", "--set", "name=W\(k)"]) { names in
                names.mapValues { $0.hasPrefix("N1") ? "W\(k)" : $0 }
            }
        case 3:
            return Step(args: ["delete", id]) { var n = $0; n[id] = nil; return n }
        case 4:
            return Step(args: ["delete", "--where", "is Trip && name ^= \"W\"", "--dry-run"]) { $0 }
        case 5:
            // Forgets the object's past values, live or deleted; its values now stay.
            return Step(args: ["history", "redact", "--id", id]) { $0 }
        case 6:
            // Fewer tokens than steps commit: a prune of what an earlier one pruned drops nothing.
            return Step(args: ["history", "prune", "--before", "\(k / 3 + 1)"]) { $0 }
        default:
            return Step(args: ["compact"]) { $0 }
        }
    }

    /// The store's answers that caches (the image, the history index) serve.
    func answers(_ store: String, ids: [String], token: Int64) -> [String] {
        var out: [String] = []
        for args in [["export"], ["history", "--format", "jsonl"], ["history", "--deletes", "--limit", "3", "--format", "jsonl"],
                     ["query", "is Trip", "--count", "--as-of", "\(token)"]] + ids.map({ ["history", "--id", $0, "--format", "jsonl"] }) {
            let r = CLIRunner.run(args, store: store)
            // (Warnings name the folder: the copy's is another.)
            out.append("\(args.joined(separator: " ")): \(r.code) \(r.out) \(r.err.replacingOccurrences(of: store, with: "STORE"))")
        }
        return out
    }

    /// The store's JSON files alone, copied to a folder of their own.
    func jsonAlone(_ store: String) throws -> String {
        let copy = CLIRunner.scratch() + "/json-alone"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for f in try FileManager.default.contentsOfDirectory(atPath: store) where f.hasSuffix(".jsonl") || f == "schema.json" {
            try FileManager.default.copyItem(atPath: store + "/" + f, toPath: copy + "/" + f)
        }
        return copy
    }

    static let crashPoints = ["journal-mid-write", "journal-before-fsync", "journal-after-fsync", "snapshot-mid-write", "image-mid-write",
                              "lockless-compaction-written", "snapshot-journal-carried", "snapshot-before-rename", "snapshot-after-rename"]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func killedCommandsAndCompactionsLoseNothingAndCachesChangeNoAnswer(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var g = TripDataGenerator(seed: seed)
        let data = CLIRunner.scratch() + "/trips.json"
        try Data(g.jsonArray(trips: 200)).write(to: URL(fileURLWithPath: data))
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", data], store: store).code == 0)
        guard var model = names(store) else { Issue.record("the imported store does not read"); return }
        // A compaction is due every third commit; it runs in a process of its own.
        let env = ["TRIPSTORE_SNAPSHOT_TRANSACTIONS": "3"]
        var killed = 0
        // How long a command ran last, so that a kill lands anywhere in one.
        var lasted: useconds_t = 50_000
        for k in 0..<36 {
            let step = randomStep(k, model, &random)
            let after = step.effect(model)
            let started = Date()
            // A third of the commands die: killed at a random moment, or
            // where they (or the compaction they start) reach a crash point.
            let dies = random.next() % 3 == 0
            var stepEnv = env
            let byPoint = dies && random.next() % 2 == 0
            if byPoint { stepEnv["TRIPSTORE_CRASH_AT"] = Self.crashPoints[Int(random.next() % UInt64(Self.crashPoints.count))] }
            let p = try CLIRunner.start(["--store", store, "--wait", "30"] + step.args, env: stepEnv)
            if dies && !byPoint {
                usleep(useconds_t(random.next() % UInt64(lasted)))
                kill(p.processIdentifier, SIGKILL)
            }
            p.waitUntilExit()
            if p.terminationReason == .uncaughtSignal {
                killed += 1
            } else {
                if !dies { lasted = useconds_t(max(1_000, Date().timeIntervalSince(started) * 1_000_000)) }
                #expect(p.terminationStatus == 0, "step \(k): \(step.args)")
            }
            guard let now = names(store) else { Issue.record("step \(k): the store does not read after \(step.args)"); return }
            if now == after {
                model = after
            } else if now != model || p.terminationReason != .uncaughtSignal {
                Issue.record("step \(k): \(step.args) left neither the state before it nor the one after it")
                return
            }
            guard k % 6 == 5 else { continue }
            CLIRunner.waitForCompactions(store)
            let v = CLIRunner.run(["verify"], store: store)
            // A command killed in this very step may have left a torn tail, which no writer has cut yet.
            let tornNow = p.terminationReason == .uncaughtSignal && v.err.contains("incomplete transaction")
            #expect(v.code == 0 || tornNow, "step \(k): \(v.out) \(v.err)")
            let ids = Array(model.keys.sorted().prefix(3)) + [step.args.count > 1 ? step.args[1] : ""].filter { !$0.hasPrefix("-") && !$0.isEmpty }
            let last = Int64(CLIRunner.run(["history", "--format", "jsonl"], store: store).out.split(separator: "\n").count)
            let alone = try jsonAlone(store)
            for (a, b) in zip(answers(store, ids: ids, token: last / 2), answers(alone, ids: ids, token: last / 2)) where a != b {
                Issue.record("step \(k): with caches \(a.prefix(300)), from the JSON alone \(b.prefix(300))")
            }
            try FileManager.default.removeItem(atPath: alone)
        }
        #expect(killed > 0)
        CLIRunner.waitForCompactions(store)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
        #expect(names(store) == model)
        let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "what killed processes left was removed: \(left)")
    }
}
