import TripStoreEngine

/// An error the CLI reports: one sentence on stderr and an exit code.
public struct CLIError: Error {
    public var message: String
    public var exitCode: Int32
    /// Printed after the message for usage errors: the command's usage line.
    public var usage: String?

    public init(_ message: String, exitCode: Int32 = 1, usage: String? = nil) {
        self.message = message
        self.exitCode = exitCode
        self.usage = usage
    }

    /// The one place that turns any error into a message and an exit code.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let e as CLIError: return e
        case let e as StoreError: return CLIError(sentence(e) + advice(e), exitCode: exitCode(e))
        case let e as EnvelopeError: return CLIError(e.description)
        case let e as EnvelopeErrors: return CLIError(e.description)
        case let e as IOError: return CLIError(e.description, exitCode: 3)
        case let e as FeedError: return CLIError(e.description)
        case let e as QueryError: return CLIError(e.description + (e.caretDisplay.isEmpty ? "" : "\n" + e.caretDisplay))
        case let e as JSONSyntaxError: return CLIError("invalid JSON: \(e)")
        default: return CLIError("internal error: \(error)", exitCode: 3)
        }
    }

    /// 1 for input, usage, conflict and schema-mismatch errors (nothing
    /// changed), 2 for a damaged, locked or newer store, 3 for I/O failures.
    static func exitCode(_ e: StoreError) -> Int32 {
        switch e {
        case .noStore, .notAFolder, .invalid, .invalidMany, .notFound, .denied, .conflict, .inconsistent, .schemaMismatch, .schemaNotRecorded,
             .notWritable, .foreignTransaction, .unknownType, .unknownProperty, .notAnAttribute, .notARelationship, .idInUse,
             .tokenOutOfReach, .timeOutOfReach, .deletedValuesNotKept, .historyNotRetained, .salvageNotEnabled,
             .undeclaredProperty, .unsortable, .modelNotInSchema, .modelOfAnotherContext, .pastModel, .containerClosed, .migrationRefused: return 1
        case .damaged, .danglingReferences, .locked, .newerFormat, .imageDamaged, .newerSchema: return 2
        case .io: return 3
        }
    }

    /// A store error in the command line's words: where the store speaks of
    /// retained history, the command line names the option that reaches it.
    static func sentence(_ e: StoreError) -> String {
        switch e {
        case .tokenOutOfReach(let t, let r, let oldest):
            return "token \(t) is out of reach: --as-of reaches tokens \(r.lowerBound) to \(r.upperBound)"
                + (t < r.lowerBound ? (oldest.map { " (the oldest retained history is token \($0))" } ?? " (no history is retained)") : "")
        case .deletedValuesNotKept(let t, let id, let at, let r):
            return "token \(t) is out of reach: the delete of '\(id)' at token \(at) was recorded before history kept deleted values; "
                + "--as-of reaches tokens \(r.lowerBound) to \(r.upperBound)"
        case .migrationRefused(let problems):
            return "cannot migrate; nothing was changed. What the store cannot do:\n" + problems.map { "  " + $0 }.joined(separator: "\n")
        case .notAnAttribute(let entity, let name):
            return "'\(name)' is a relationship of \(entity); update changes attributes (a relationship changes by replacing its owner)"
        default:
            return e.description
        }
    }

    /// A store's warning as the command line prints it, with its prefix.
    static func sentence(_ w: StoreWarning) -> String {
        (w.isNote ? "note: " : "warning: ") + w.description
    }

    /// Said after the warning about a torn journal tail that a reader ignored.
    static let tornTailAdvice = ", or 'tripstore verify --repair' does now"

    /// What a person can do about it, in the command line's words.
    static func advice(_ e: StoreError) -> String {
        switch e {
        case .noStore: return "; import a file to create one"
        case .damaged(_, _, _, true): return "; run 'tripstore verify --repair' to cut the torn tail"
        case .danglingReferences: return "; run 'tripstore verify' to list dangling references, 'tripstore verify --repair' to remove them"
        case .locked: return "; try again, or pass --wait SECONDS"
        case .newerFormat: return "; upgrade tripstore"
        case .schemaNotRecorded: return ", or pass its schema with --schema FILE"
        case .schemaMismatch: return "; to move the store to this schema, run 'tripstore migrate --schema FILE'"
        case .invalid(let envelope) where envelope.kind == .existingID: return " (use --mode upsert or --mode skip-existing)"
        default: return ""
        }
    }
}
