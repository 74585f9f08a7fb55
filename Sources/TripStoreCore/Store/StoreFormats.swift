import TripStoreFormat

/// This program's version, and the versions of the store's files it reads
/// and writes (what `tripstore --version` prints).
///
/// ```swift
/// print("tripstore \(StoreFormats.programVersion), snapshot format \(StoreFormats.snapshot)")
/// ```
public enum StoreFormats {
    /// The version of tripstore, kept here and nowhere else.
    public static let programVersion = "0.10.0"
    /// The newest snapshot and journal format, written once history was
    /// pruned (the one before it otherwise); every older one is read.
    public static var snapshot: Int { SnapshotFormat.version }
    /// The snapshot image's format: an image of another is ignored and written again.
    public static var image: Int { SnapshotImage.version }
    /// The format of `schema.json`.
    public static var schemaRecord: Int { Int(SchemaRecordFormat.version) }
}
