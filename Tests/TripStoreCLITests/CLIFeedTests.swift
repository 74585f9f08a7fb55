import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// The audit trail live and in the past: history filters, the feed and
/// `apply`, `--follow` as a real process, `--as-of`, and `history redact`.
@Suite(.serialized) struct CLIFeedTests {
    let sample = CLIRunner.projectRoot + "/SampleData/trips.json"

    func tokens(_ jsonl: String) -> [Int64] {
        jsonl.split(separator: "\n").compactMap { line in
            guard case .int(let t)? = (try? JSONReader.parse(Array(line.utf8)))?["token"] else { return nil }
            return t
        }
    }

    /// A primary with inserts, updates, a cascade delete, a moved child and a compaction.
    func primary() -> String {
        let s = CLIRunner.scratch() + "/primary"
        #expect(CLIRunner.run(["import", sample], store: s).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=Milan", "--set", "perDiemRate=180"], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        #expect(CLIRunner.run(["delete", "malaga-family"], store: s).code == 0)
        #expect(CLIRunner.run(["import", "-"], store: s, stdin: #"{"type":"BusinessMeal","id":"late-lunch","data":{"restaurant":"Da Enzo","date":"2026-03-05T13:00:00Z","cost":31.5,"attendees":[],"trip":{"type":"BusinessTrip","id":"rome-summit"}}}"#).code == 0)
        #expect(CLIRunner.run(["update", "--where", "name == \"Q3 summit\"", "--set", "expenseCode=EX-9"], store: s).code == 0)
        return s
    }

    @Test func historyFiltersByObjectTimeAndCount() throws {
        let s = primary()
        let all = CLIRunner.run(["history", "--format", "jsonl"], store: s).out
        #expect(tokens(all) == [1, 2, 3, 4, 5])
        let byID = CLIRunner.run(["history", "--id", "rome-summit", "--format", "jsonl"], store: s).out
        #expect(tokens(byID) == [1, 2, 4, 5])
        // The insert carries the object as it was right after it, before the later update.
        let first = try JSONReader.parse(Array(byID.split(separator: "\n")[0].utf8))
        guard case .array(let changes)? = first["changes"] else { Issue.record("no changes"); return }
        #expect(changes.first?["envelope"]?["data"]?["destination"] == .string("Rome, Italy"))
        // Only the object's own changes (another object's may name it as a reference).
        for line in byID.split(separator: "\n") {
            guard case .array(let cs)? = try JSONReader.parse(Array(line.utf8))["changes"] else { continue }
            #expect(cs.allSatisfy { $0["id"] == .string("rome-summit") }, "\(line)")
        }
        #expect(tokens(CLIRunner.run(["history", "--limit", "2"], store: s).out) == [4, 5])
        #expect(tokens(CLIRunner.run(["history", "--limit", "2", "--reverse"], store: s).out) == [5, 4])
        #expect(tokens(CLIRunner.run(["history", "--id", "no-such-id"], store: s).out) == [])
        // --after / --before by commit time (strictly after / before).
        guard case .string(let t2)? = try JSONReader.parse(Array(all.split(separator: "\n")[1].utf8))["timestamp"] else {
            Issue.record("no timestamp"); return
        }
        #expect(tokens(CLIRunner.run(["history", "--after", t2], store: s).out) == [3, 4, 5])
        #expect(tokens(CLIRunner.run(["history", "--before", t2], store: s).out) == [1])
        #expect(tokens(CLIRunner.run(["history", "--before", "2000-01-01"], store: s).out) == [])
        let bare = CLIRunner.run(["history", "--after", "3"], store: s)
        #expect(bare.code == 1 && bare.err.contains("for tokens use --since"), "\(bare.err)")
        // get --history is the same timeline.
        #expect(tokens(CLIRunner.run(["get", "rome-summit", "--history"], store: s).out) == [1, 2, 4, 5])
        #expect(CLIRunner.run(["get", "no-such-id", "--history"], store: s).code == 1)
        // The feed takes whole transactions only.
        for extra in [["--type", "Trip"], ["--id", "rome-summit"], ["--deletes"], ["--kind", "insert"], ["--author", "x"]] {
            let r = CLIRunner.run(["history", "--format", "feed"] + extra, store: s)
            #expect(r.code == 1 && r.err.contains("whole transactions"), "\(extra): \(r.err)")
        }
        #expect(CLIRunner.run(["history", "--follow", "--format", "json"], store: s).code == 1)
        #expect(CLIRunner.run(["history", "--follow", "--before", "2030-01-01"], store: s).code == 1)
    }

    @Test func asOfAnswersAsTheStoreWasAndNamesTheReachableRange() throws {
        let s = primary()
        #expect(CLIRunner.run(["query", "--count", "--as-of", "0"], store: s).out == "0\n")
        let now = CLIRunner.run(["query", "--count"], store: s).out
        #expect(CLIRunner.run(["query", "--count", "--as-of", "5"], store: s).out == now)
        #expect(CLIRunner.run(["query", "--count", "--as-of", "2"], store: s).out == "61\n")
        #expect(CLIRunner.run(["query", "--count", "--as-of", "3"], store: s).out == "60\n")
        #expect(CLIRunner.run(["get", "rome-summit", "--as-of", "1"], store: s).out.contains("\"destination\": \"Rome, Italy\""))
        #expect(CLIRunner.run(["get", "malaga-family", "--as-of", "2"], store: s).code == 0)
        #expect(CLIRunner.run(["get", "malaga-family", "--as-of", "3"], store: s).code == 1)
        let far = CLIRunner.run(["query", "--as-of", "6"], store: s)
        #expect(far.code == 1 && far.err.contains("--as-of reaches tokens 0 to 5"), "\(far.err)")
        let early = CLIRunner.run(["export", "--as-of", "1999-01-01"], store: s)
        #expect(early.code == 1 && early.err.contains("before the oldest reachable state"), "\(early.err)")
        #expect(CLIRunner.run(["query", "--count", "--as-of", "2099-01-01"], store: s).out == now)
        // Exports as of each token import into an empty store and export the same again.
        let past = CLIRunner.run(["export", "--as-of", "3"], store: s).out
        let copy = CLIRunner.scratch() + "/copy"
        #expect(CLIRunner.run(["import", "-"], store: copy, stdin: past).code == 0)
        #expect(CLIRunner.run(["export"], store: copy).out == past)
        // After pruning, the range starts just before the oldest retained token.
        #expect(CLIRunner.run(["history", "prune", "--before", "3"], store: s).code == 0)
        let pruned = CLIRunner.run(["query", "--as-of", "1"], store: s)
        #expect(pruned.code == 1 && pruned.err.contains("--as-of reaches tokens 2 to 5 (the oldest retained history is token 3)"), "\(pruned.err)")
    }

    @Test func aStandbyFedByApplyEqualsItsPrimary() throws {
        let s = primary()
        let feed = CLIRunner.run(["history", "--format", "feed"], store: s).out
        #expect(feed.split(separator: "\n").count == 5)
        let standby = CLIRunner.scratch() + "/standby"
        // In two parts, as a follower would deliver them.
        let lines = feed.split(separator: "\n").map(String.init)
        #expect(CLIRunner.run(["apply", "-"], store: standby, stdin: lines[0..<2].joined(separator: "\n") + "\n").code == 0)
        #expect(CLIRunner.run(["apply", "-"], store: standby, stdin: lines[2...].joined(separator: "\n") + "\n").code == 0)
        #expect(CLIRunner.run(["export"], store: standby).out == CLIRunner.run(["export"], store: s).out)
        #expect(CLIRunner.run(["history", "--format", "jsonl"], store: standby).out == CLIRunner.run(["history", "--format", "jsonl"], store: s).out)
        let exported = CLIRunner.run(["export"], store: standby).out
        // A token already applied, and a gap: refused, nothing changed.
        let again = CLIRunner.run(["apply", "-"], store: standby, stdin: lines[4] + "\n")
        #expect(again.code == 1 && again.err.contains("already applied"), "\(again.err)")
        let other = CLIRunner.scratch() + "/other"
        let gap = CLIRunner.run(["apply", "-"], store: other, stdin: lines[0] + "\n" + lines[2] + "\n")
        #expect(gap.code == 1 && gap.err.contains("line 2: token 3 does not follow token 1"), "\(gap.err)")
        let file = CLIRunner.scratch() + "/gap.jsonl"
        try (lines[0] + "\n" + lines[2] + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        let fresh = CLIRunner.scratch() + "/fresh"
        #expect(CLIRunner.run(["apply", file], store: fresh).code == 1)
        #expect(CLIRunner.run(["stats"], store: fresh).code == 1, "a file with a gap changes nothing, not even its first line")
        #expect(!FileManager.default.fileExists(atPath: fresh), "a refused feed leaves no folder behind")
        // Divergence: the standby was changed on its own; the next line's old value differs.
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=LOCAL"], store: standby).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-10"], store: s).code == 0)
        let next = CLIRunner.run(["history", "--format", "feed", "--since", "5"], store: s).out
        let diverged = CLIRunner.run(["apply", "-"], store: standby, stdin: next.replacingOccurrences(of: "\"token\":6", with: "\"token\":7"))
        #expect(diverged.code == 1 && diverged.err.contains("diverged"), "\(diverged.err)")
        #expect(CLIRunner.run(["export"], store: standby).out != exported)  // only its own change
        // Commit times never go backwards, not even in a feed.
        let early = lines[1].replacingOccurrences(of: #""timestamp":"20"#, with: #""timestamp":"19"#)
        let back = CLIRunner.run(["apply", "-"], store: CLIRunner.scratch() + "/back", stdin: lines[0] + "\n" + early + "\n")
        #expect(back.code == 1 && back.err.contains("commit times never decrease"), "\(back.err)")
    }

    /// `apply` writes its automatic snapshots in the background; one that
    /// cannot be written is said as the lines go on, once per threshold's
    /// worth of lines, and every line is kept.
    @Test func applyWarnsOfAnAutomaticSnapshotThatCannotBeWritten() throws {
        let s = CLIRunner.scratch() + "/primary"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        for k in 0..<24 { #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-\(k)"], store: s).code == 0) }
        let feed = CLIRunner.run(["history", "--format", "feed"], store: s).out
        let standby = CLIRunner.scratch() + "/standby"
        // A folder where each snapshot's temporary file would go.
        for token in 1...30 { try FileManager.default.createDirectory(atPath: standby + "/snapshot-\(token).jsonl.tmp", withIntermediateDirectories: true) }
        let r = CLIRunner.run(["apply", "-"], store: standby, stdin: feed, env: ["TRIPSTORE_SNAPSHOT_TRANSACTIONS": "10"])
        #expect(r.code == 0)
        let warnings = r.err.split(separator: "\n").filter { $0.hasPrefix("warning: the automatic snapshot failed") }
        #expect(warnings.count == 2, "\(r.err)")
        #expect(r.err.contains("the journal keeps every transaction"), "\(r.err)")
        #expect(CLIRunner.run(["history", "--format", "feed"], store: standby).out == feed)
    }

    /// A bulk import's feed line, written from its records, replays into an
    /// empty standby from a file, from standard input with CR LF line ends
    /// and no last newline, and through a real pipe.
    @Test func aBulkImportsFeedReplaysFromAFileAndAPipe() throws {
        let primary = CLIRunner.scratch() + "/primary", input = CLIRunner.scratch() + "/trips.json"
        var g = TripDataGenerator(seed: 5)
        try Data(g.jsonArray(trips: 20)).write(to: URL(fileURLWithPath: input))
        let env = ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "100"]
        #expect(CLIRunner.run(["import", input], store: primary, env: env).code == 0)
        let id = try #require(CLIRunner.run(["query", "is BusinessTrip", "--format", "ids", "--limit", "1"], store: primary).out.split(separator: "\n").first)
        #expect(CLIRunner.run(["update", String(id), "--set", "name=later"], store: primary).code == 0)
        let feed = CLIRunner.run(["history", "--format", "feed"], store: primary).out
        #expect(feed.split(separator: "\n").count == 2 && feed.utf8.count > 50_000)
        let file = CLIRunner.scratch() + "/feed.jsonl"
        try feed.write(toFile: file, atomically: false, encoding: .utf8)
        // "\r\n" is one Character: dropping one drops the last line end.
        let crlf = String(feed.replacingOccurrences(of: "\n", with: "\r\n").dropLast(1))
        let piped = CLIRunner.scratch() + "/piped"
        let shell = "cat '\(file)' | '\(CLIRunner.binary)' --store '\(piped)' apply -"
        let run = try CLIRunner.runProcess(["sh", "-c", shell], env: env, executable: "/bin/sh")
        #expect(run.status == 0)
        for (name, standby, result) in [("file", CLIRunner.scratch() + "/fromFile", { CLIRunner.run(["apply", file], store: $0, env: env) }),
                                        ("crlf", CLIRunner.scratch() + "/crlf", { CLIRunner.run(["apply", "-"], store: $0, stdin: crlf, env: env) }),
                                        ("pipe", piped, { _ in CLIRunner.Result(code: 0, out: "", err: "") })] as [(String, String, (String) -> CLIRunner.Result)] {
            let r = result(standby)
            #expect(r.code == 0, "\(name): \(r.err)")
            #expect(CLIRunner.run(["history", "--format", "feed"], store: standby).out == feed, "\(name)")
            #expect(CLIRunner.run(["export"], store: standby).out == CLIRunner.run(["export"], store: primary).out, "\(name)")
        }
    }

    /// A feed line refused for an id or a token says which, and where.
    @Test func aFeedLineWithABadIdOrTokenSaysWhich() throws {
        let head = #"{"token":1,"timestamp":"2026-01-01T00:00:00Z","author":"a","changes":"#
        let badID = head + #"[{"kind":"insert","type":"Trip","id":"fine","envelope":{}},{"kind":"insert","type":"Trip","id":"a\u0001b","envelope":{}}]}"#
        let r = CLIRunner.run(["apply", "-"], store: CLIRunner.scratch() + "/badid", stdin: badID + "\n")
        #expect(r.code == 1 && r.err.contains("line 1: change 2: ") && !r.err.contains("not a feed transaction"), "\(r.err)")
        let negative = head.replacingOccurrences(of: #""token":1"#, with: #""token":-1"#) + "[]}"
        let n = CLIRunner.run(["apply", "-"], store: CLIRunner.scratch() + "/negative", stdin: negative + "\n")
        #expect(n.code == 1 && n.err.contains("token -1 is no token of a feed (tokens start at 1)"), "\(n.err)")
    }

    /// A feed line whose insert refers to nothing names its line once, then where in it.
    @Test func aDanglingReferenceInAFeedNamesItsLineOnce() throws {
        let first = String(CLIRunner.run(["history", "--format", "feed"], store: primary()).out.split(separator: "\n")[0])
        // The first reference from a trip's bucket list, pointed at nothing.
        let marker = #""bucketList":[{"type":"BucketListItem","id":""#
        let at = try #require(first.range(of: marker))
        let end = try #require(first[at.upperBound...].firstIndex(of: "\""))
        let doctored = first.replacingCharacters(in: at.upperBound..<end, with: "nowhere")
        let r = CLIRunner.run(["apply", "-"], store: CLIRunner.scratch() + "/dangling", stdin: doctored + "\n")
        #expect(r.code == 1 && r.err.hasPrefix("error: line 1: at data.") && r.err.contains("'nowhere'") && !r.err.contains("line 1: line 1"), "\(r.err)")
    }

    /// Redacted history cannot be replayed: a standby starts from a copy then.
    @Test func aRedactedFeedIsRefusedWithAdvice() throws {
        let s = primary()
        #expect(CLIRunner.run(["history", "redact", "--id", "rome-summit"], store: s).code == 0)
        let feed = CLIRunner.run(["history", "--format", "feed"], store: s).out
        #expect(feed.contains(#""redacted":true"#))
        let r = CLIRunner.run(["apply", "-"], store: CLIRunner.scratch() + "/sb", stdin: feed)
        #expect(r.code == 1 && r.err.contains("line 1: token 1 cannot be replayed") && r.err.contains("copy of the primary's folder"), "\(r.err)")
        // A copy of the primary's folder follows on from its last token.
        let copy = CLIRunner.scratch() + "/copy"
        try FileManager.default.copyItem(atPath: s, toPath: copy)
        #expect(CLIRunner.run(["update", "zurich-reunion", "--set", "notes=after"], store: s).code == 0)
        let next = CLIRunner.run(["history", "--format", "feed", "--since", "6"], store: s).out
        #expect(CLIRunner.run(["apply", "-"], store: copy, stdin: next).code == 0)
        #expect(CLIRunner.run(["export"], store: copy).out == CLIRunner.run(["export"], store: s).out)
    }

    @Test func redactLeavesNoRemovedValueInAnyFile() throws {
        let s = CLIRunner.scratch() + "/redact"
        #expect(CLIRunner.run(["import", sample], store: s).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=Secret Harbour 17"], store: s).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=Quiet Cove 42"], store: s).code == 0)
        #expect(CLIRunner.run(["delete", "rome-summit"], store: s).code == 0)
        func filesHold(_ text: String) throws -> Bool {
            for name in try FileManager.default.contentsOfDirectory(atPath: s) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: s + "/" + name))
                if bytes.range(of: Data(text.utf8)) != nil { return true }
            }
            return false
        }
        #expect(try filesHold("Secret Harbour 17") && filesHold("Quiet Cove 42"))
        let r = CLIRunner.run(["history", "redact", "--id", "rome-summit"], store: s)
        #expect(r.code == 0, "\(r.err)")
        #expect(try !filesHold("Secret Harbour 17") && !filesHold("Quiet Cove 42") && !filesHold("Sales summit with Globex"))
        // The redact is itself history (who, which id), and the tombstone stays.
        let redacts = CLIRunner.run(["history", "--kind", "redact", "--format", "jsonl"], store: s).out
        #expect(redacts.contains(#""kind":"redact","type":"BusinessTrip","id":"rome-summit""#) && redacts.contains(#""author":"tester""#))
        #expect(CLIRunner.run(["history", "--deletes", "--format", "jsonl"], store: s).out.contains(#""name":"Q3 summit""#))
        // As of before the delete: preserved values only.
        let past = CLIRunner.run(["get", "rome-summit", "--as-of", "2"], store: s)
        #expect(past.code == 0 && past.out.contains("\"name\": \"Q3 summit\"") && past.out.contains("\"destination\": null"), "\(past.out)\(past.err)")
        // --where reaches deleted objects by their last known state.
        #expect(CLIRunner.run(["delete", "malaga-family"], store: s).code == 0)
        let w = CLIRunner.run(["history", "redact", "--where", "is PersonalTrip && destination ~ \"Malaga\""], store: s)
        #expect(w.code == 0 && w.out.contains("1 object"), "\(w.out)\(w.err)")
        #expect(CLIRunner.run(["history", "redact", "--id", "never-was"], store: s).code == 1)
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
    }

    /// Waits until `path` holds `count` lines (or 20 seconds pass).
    func waitForLines(_ path: String, _ count: Int) -> String {
        for _ in 0..<400 {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if text.split(separator: "\n").count >= count { return text }
            usleep(50_000)
        }
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    func follower(_ store: String, _ extra: [String], out: String, env: [String: String] = [:]) throws -> Process {
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        p.arguments = ["--store", store, "history", "--follow", "--format", "jsonl"] + extra
        var e = ProcessInfo.processInfo.environment
        for (k, v) in env { e[k] = v }
        p.environment = e
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Followers started before and after a compaction, with inotify and by
    /// polling, see every token exactly once, and stop with exit 0.
    @Test(arguments: [false, true]) func followersSeeEveryTokenOnceAcrossCompactions(_ polling: Bool) throws {
        let s = CLIRunner.scratch() + "/follow"
        #expect(CLIRunner.run(["import", sample], store: s).code == 0)
        let env = polling ? ["TRIPSTORE_FOLLOW_POLL": "1"] : [:]
        let early = CLIRunner.scratch() + "/early.jsonl", late = CLIRunner.scratch() + "/late.jsonl"
        let a = try follower(s, ["--since", "0"], out: early, env: env)
        var b: Process?
        for k in 0..<24 {
            // Small automatic snapshots: the journal rotates every few commits.
            _ = try CLIRunner.runProcess(["--store", s, "update", "rome-summit", "--set", "perDiemRate=\(100 + k)"],
                                         env: ["TRIPSTORE_SNAPSHOT_BYTES": "600"])
            if k == 8 { #expect(CLIRunner.run(["compact"], store: s).code == 0) }
            if k == 10 { b = try follower(s, ["--since", "3"], out: late, env: env) }
        }
        let seenEarly = tokens(waitForLines(early, 25))
        let seenLate = tokens(waitForLines(late, 22))
        for p in [a, b].compactMap({ $0 }) {
            p.terminate()  // SIGTERM
            p.waitUntilExit()
            #expect(p.terminationStatus == 0 && p.terminationReason == .exit)
        }
        #expect(seenEarly == Array(1...25))
        #expect(seenLate == Array(4...25))
    }

    @Test func aFollowerStopsWhenItsReaderGoesAway() throws {
        let s = CLIRunner.scratch() + "/pipe"
        #expect(CLIRunner.run(["import", sample], store: s).code == 0)
        let pipe = Pipe()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        p.arguments = ["--store", s, "history", "--follow"]
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        usleep(300_000)
        try pipe.fileHandleForReading.close()
        // Nothing is committed: the follower notices its reader went away while it waits.
        for _ in 0..<200 where p.isRunning { usleep(50_000) }
        #expect(!p.isRunning)
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let gone = CLIRunner.run(["history", "--follow", "--since", "0"], store: CLIRunner.scratch() + "/none")
        #expect(gone.code == 1 && gone.err.contains("no store"), "\(gone.err)")
        let old = CLIRunner.scratch() + "/old"
        #expect(CLIRunner.run(["import", sample], store: old).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "perDiemRate=1"], store: old).code == 0)
        #expect(CLIRunner.run(["history", "prune", "--before", "2"], store: old).code == 0)
        let pruned = CLIRunner.run(["history", "--follow", "--since", "0"], store: old)
        #expect(pruned.code == 1 && pruned.err.contains("oldest retained transaction is token 2"), "\(pruned.err)")
        // Everything pruned: nothing after the cursor is retained, which is an error too.
        #expect(CLIRunner.run(["history", "prune", "--before", "3"], store: old).code == 0)
        let none = CLIRunner.run(["history", "--follow", "--since", "1"], store: old)
        #expect(none.code == 1 && none.err.contains("no transaction is retained"), "\(none.err)")
    }
}
