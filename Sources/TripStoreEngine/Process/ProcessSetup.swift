import TripStoreSystem

/// Process-wide settings for a program built on the engine, made once, first
/// thing, before any other thread runs.
///
/// ```swift
/// ProcessSetup.forCommandLine(onMappedInputFault: "error: the input changed while it was read\n", exitCode: 1)
/// ```
public enum ProcessSetup {
    /// Suits a short-lived process that imports large inputs: freed memory is
    /// kept for reuse instead of being returned to the system at once, and
    /// input files that are in the page cache are mapped rather than copied.
    /// A mapped file that shrinks while it is read (another process truncated
    /// it) makes the process write `message` to standard error and exit with
    /// `exitCode`; an import has written nothing while it decodes.
    public static func forCommandLine(onMappedInputFault message: StaticString, exitCode: Int32) {
        MemoryTuning.keepFreedMemory()
        MappedInput.allowMapping(onFault: message, exitCode: exitCode)
    }

    /// Marks the end of a phase in the timings printed on standard error when
    /// the environment sets `TRIPSTORE_TRACE` (for profiling; nothing otherwise).
    public static func trace(_ phase: @autoclosure () -> String) {
        Trace.mark(phase())
    }
}
