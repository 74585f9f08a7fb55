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
        case let e as StoreError: return CLIError(e.description, exitCode: e.exitCode)
        case let e as EnvelopeError: return CLIError(e.description)
        case let e as EnvelopeErrors: return CLIError(e.description)
        case let e as IOError: return CLIError(e.description, exitCode: 3)
        case let e as JSONSyntaxError: return CLIError("invalid JSON: \(e)")
        default: return CLIError("internal error: \(error)", exitCode: 3)
        }
    }
}
