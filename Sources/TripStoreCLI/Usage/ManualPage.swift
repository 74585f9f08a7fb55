import TripStoreEngine

/// `tripstore.1`, made from the command table that `--help` prints, so the
/// two never disagree (`tripstore help --man`; `docs/tripstore.1` is this
/// text, and CI checks that it still is).
enum ManualPage {
    /// The environment variables the command line reads.
    static let environment: [(String, String)] = [
        ("TRIPSTORE_DIR", "The store folder when --store is not given (default ./tripstore)."),
        ("USER, LOGNAME", "The author recorded in history when --author is not given."),
        ("TRIPSTORE_SNAPSHOT_BYTES", "A writer writes a snapshot once its journal holds this many bytes (default 8 MiB)."),
        ("TRIPSTORE_SNAPSHOT_TRANSACTIONS", "A writer writes a snapshot once its journal holds this many transactions (default 2500 for a command that commits once, 10000 for apply)."),
        ("TRIPSTORE_SNAPSHOT_LINE_BYTES", "A writer writes a snapshot while its journal holds a line of this many bytes (default 1 MiB)."),
        ("TRIPSTORE_SNAPSHOT_COMMIT_CHANGES", "A transaction of this many changes or more commits by writing a snapshot."),
        ("TRIPSTORE_FOLLOW_POLL", "When set, history --follow polls the folder instead of using inotify."),
        ("TRIPSTORE_TRACE", "When set, each phase of a command prints its time and memory on standard error."),
    ]

    static let exitCodes: [(String, String)] = [
        ("0", "Success."),
        ("1", "A usage or input error; nothing changed."),
        ("2", "The store is damaged, or locked by another writer beyond --wait."),
        ("3", "An internal or I/O error (permission denied, disk full, a failed write)."),
    ]

    static var text: String {
        var s = """
        .TH TRIPSTORE 1 "" "tripstore \(escaped(StoreFormats.programVersion))" "User Commands"
        .SH NAME
        tripstore \\- a document store for Swift model class hierarchies, kept as plain JSON files
        .SH SYNOPSIS
        .B tripstore
        [\\fB\\-\\-store\\fR \\fIDIR\\fR] [\\fB\\-\\-wait\\fR \\fISECONDS\\fR] [\\fB\\-\\-schema\\fR \\fIFILE\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]
        .br
        .B tripstore \\-\\-version
        .br
        .B tripstore help
        [\\fICOMMAND\\fR]
        .SH DESCRIPTION
        A store is a folder of JSON Lines files that a person can read, diff and audit:
        objects of a class hierarchy as polymorphic envelopes with a type tag, an
        append-only journal and snapshots, indexes for deep, shallow and property
        queries, and a history of every change whose tombstones keep what an auditor needs.
        .SH GLOBAL OPTIONS
        .TP
        \\fB\\-\\-store\\fR \\fIDIR\\fR
        The store folder (default \\fB$TRIPSTORE_DIR\\fR, else \\fB./tripstore\\fR).
        .TP
        \\fB\\-\\-wait\\fR \\fISECONDS\\fR
        How long a writer waits for another writer's lock (default 5).
        .TP
        \\fB\\-\\-schema\\fR \\fIFILE\\fR
        The schema for a new store, or for a store that records none.
        .TP
        \\fB\\-\\-version\\fR
        The version, and the store formats it reads and writes.
        .TP
        \\fB\\-h\\fR, \\fB\\-\\-help\\fR
        The commands, or one command's options and examples.
        .SH COMMANDS

        """
        for (spec, _) in Commands.all {
            s += ".SS \(escaped(spec.name))\n\(escaped(spec.summary)).\n.PP\n.B \(escaped(spec.usage))\n"
            let options = spec.valueOptions.map { ("\\fB\(escaped("--" + $0.key))\\fR \\fIVALUE\\fR", $0.value) }
                + spec.flagOptions.map { ("\\fB\(escaped("--" + $0.key))\\fR", $0.value) }
            for (name, what) in options.sorted(by: { $0.0 < $1.0 }) {
                s += ".TP\n\(name)\n\(escaped(what))\n"
            }
            if !spec.examples.isEmpty {
                s += ".PP\nExamples:\n.RS\n.nf\n" + spec.examples.map(escaped).joined(separator: "\n") + "\n.fi\n.RE\n"
            }
        }
        s += ".SH EXIT STATUS\n"
        for (code, what) in exitCodes { s += ".TP\n.B \(code)\n\(escaped(what))\n" }
        s += ".SH ENVIRONMENT\n"
        for (name, what) in environment { s += ".TP\n.B \(escaped(name))\n\(escaped(what))\n" }
        s += """
        .SH EXAMPLES
        .nf
        tripstore \\-\\-store /tmp/trips import SampleData/trips.json
        tripstore \\-\\-store /tmp/trips query 'is BusinessTrip && destination ~ "Rome"'
        tripstore \\-\\-store /tmp/trips history \\-\\-deletes
        .fi
        .SH SEE ALSO
        The README and docs/ of the tripstore sources: the query language, the file format and the decisions.

        """
        return s
    }

    /// Text for roff: a backslash written as `\e`, a hyphen as `\-` (an
    /// option's dashes must stay dashes), a character past ASCII as its code
    /// point (`\[u2026]`), and a line that would start with a control
    /// character guarded.
    static func escaped(_ text: String) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !out.isEmpty { out += "\n" }
            var l = line.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            if l.hasPrefix(".") || l.hasPrefix("'") { l = "\\&" + l }
            // roff reads ASCII: any other character is named by its code point.
            for c in l.unicodeScalars {
                if c.isASCII { out.unicodeScalars.append(c) } else { out += "\\[u" + hex(c.value) + "]" }
            }
        }
        return out
    }

    /// Four or more upper-case hex digits, as roff names a code point.
    private static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
