/// A JSON syntax error with its position, computed only when thrown.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was expected or found, e.g. "expected ',' or '}' after object member".
    public var message: String
    /// Byte offset of the error in the parsed buffer.
    public var offset: Int
    /// 1-based line of the error.
    public var line: Int
    /// 1-based column (in bytes) of the error.
    public var column: Int

    /// The message with its line and column.
    public var description: String { "\(message) at line \(line), column \(column)" }

    init(_ message: String, offset: Int, in buffer: UnsafeBufferPointer<UInt8>) {
        self.message = message
        self.offset = offset
        var line = 1
        var lineStart = 0
        var i = 0
        let end = min(offset, buffer.count)
        while i < end {
            if buffer[i] == UInt8(ascii: "\n") {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        self.line = line
        self.column = offset - lineStart + 1
    }
}
