import TripStoreEngine
import TripStoreModels

/// Which schema a command works with: `--schema FILE` when given (the
/// program's schema, checked against the store's as a library program's is),
/// else the schema the store records, else (a new store) the trip schema.
enum SchemaResolution {
    static func resolve(_ args: ParsedArguments, storePath: String) throws -> Schema {
        if let file = args.value("schema") { return try read(file) }
        return try Store.recordedSchema(in: storePath) ?? TripSchema.schema
    }

    /// Reads a schema file as `tripstore schema --format json` prints it.
    static func read(_ path: String) throws -> Schema {
        let bytes: [UInt8]
        do {
            if let size = FileIO.fileSize(path), size > 16 << 20 {
                throw CLIError("schema file \(path) holds \(size) bytes; a schema file is at most 16 MB")
            }
            bytes = try FileIO.readFile(path)
        } catch let e as IOError {
            throw CLIError("cannot read schema file \(path): \(e.description.split(separator: ":").last.map { String($0).trimmed } ?? "\(e)")")
        }
        do {
            return try SchemaFile.read(bytes)
        } catch {
            throw CLIError("schema file \(path): \(error)")
        }
    }
}
