// The library is one import. Its public types are named here, one by one,
// instead of re-exporting the modules below (which would also hand a
// program every `package` member's module to reach into): what is listed is
// the API, and a type that is not listed is not part of it.
import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

// TripStoreCore: the store, its queries, history and errors.
public typealias BulkImporter = TripStoreCore.BulkImporter
public typealias BulkImportPlan = TripStoreCore.BulkImportPlan
public typealias BulkImportResult = TripStoreCore.BulkImportResult
public typealias DanglingReference = TripStoreCore.DanglingReference
public typealias EnvelopeImporter = TripStoreCore.EnvelopeImporter
public typealias FeedApplier = TripStoreCore.FeedApplier
public typealias FeedWriter = TripStoreCore.FeedWriter
public typealias FeedError = TripStoreCore.FeedError
public typealias HistoryFilter = TripStoreCore.HistoryFilter
public typealias HistoryFollower = TripStoreCore.HistoryFollower
public typealias HistoryTypeNames = TripStoreCore.HistoryTypeNames
public typealias ImageChecks = TripStoreCore.ImageChecks
public typealias ImageRecovery = TripStoreCore.ImageRecovery
public typealias ImportError = TripStoreCore.ImportError
public typealias ImportMode = TripStoreCore.ImportMode
public typealias ImportOutcome = TripStoreCore.ImportOutcome
public typealias ImportPhase = TripStoreCore.ImportPhase
public typealias LocklessCompaction = TripStoreCore.LocklessCompaction
public typealias Migrator = TripStoreCore.Migrator
public typealias MigrationResult = TripStoreCore.MigrationResult
public typealias AppliedFeedLine = TripStoreCore.AppliedFeedLine
public typealias FeedLine = TripStoreCore.FeedLine
public typealias PointInTime = TripStoreCore.PointInTime
public typealias Query = TripStoreCore.Query
public typealias QueryError = TripStoreCore.QueryError
public typealias QueryPlan = TripStoreCore.QueryPlan
public typealias QueryResult = TripStoreCore.QueryResult
public typealias Redactor = TripStoreCore.Redactor
public typealias SortKey = TripStoreCore.SortKey
public typealias SQLSchema = TripStoreCore.SQLSchema
public typealias SQLWriter = TripStoreCore.SQLWriter
public typealias SQLText = TripStoreCore.SQLText
public typealias Store = TripStoreCore.Store
public typealias StoreAccess = TripStoreCore.StoreAccess
public typealias StoreConflict = TripStoreCore.StoreConflict
public typealias StoreError = TripStoreCore.StoreError
public typealias StoreFormats = TripStoreCore.StoreFormats
public typealias StoreOptions = TripStoreCore.StoreOptions
public typealias StoreState = TripStoreCore.StoreState
public typealias StoreWarning = TripStoreCore.StoreWarning
public typealias StoreWrite = TripStoreCore.StoreWrite
public typealias TransactionBuilder = TripStoreCore.TransactionBuilder

// TripStoreFormat: schemas, envelopes, values and history records.
public typealias AttributeDescription = TripStoreFormat.AttributeDescription
public typealias AttributeOptions = TripStoreFormat.AttributeOptions
public typealias Change = TripStoreFormat.Change
public typealias DecodedObject = TripStoreFormat.DecodedObject
public typealias DeleteRule = TripStoreFormat.DeleteRule
public typealias EmbeddedDescription = TripStoreFormat.EmbeddedDescription
public typealias Entity = TripStoreFormat.Entity
public typealias EntityDescription = TripStoreFormat.EntityDescription
public typealias EnumDescription = TripStoreFormat.EnumDescription
public typealias EnvelopeError = TripStoreFormat.EnvelopeError
public typealias EnvelopeErrors = TripStoreFormat.EnvelopeErrors
public typealias EnvelopeInput = TripStoreFormat.EnvelopeInput
public typealias HistoryTransaction = TripStoreFormat.HistoryTransaction
public typealias Identifier = TripStoreFormat.Identifier
public typealias NameSuggestion = TripStoreFormat.NameSuggestion
public typealias Property = TripStoreFormat.Property
public typealias RecordLocation = TripStoreFormat.RecordLocation
public typealias RelationshipDescription = TripStoreFormat.RelationshipDescription
public typealias RowID = TripStoreFormat.RowID
public typealias Schema = TripStoreFormat.Schema
public typealias SchemaError = TripStoreFormat.SchemaError
public typealias SchemaFile = TripStoreFormat.SchemaFile
public typealias SchemaMigration = TripStoreFormat.SchemaMigration
public typealias MigrationRecord = TripStoreFormat.MigrationRecord
public typealias StoredObject = TripStoreFormat.StoredObject
public typealias Value = TripStoreFormat.Value
public typealias ValueChange = TripStoreFormat.ValueChange

// TripStoreJSON: JSON values, reading and writing, ISO 8601 dates.
public typealias ISODate = TripStoreJSON.ISODate
public typealias ISOTime = TripStoreJSON.ISOTime
public typealias JSONLines = TripStoreJSON.JSONLines
public typealias JSONMember = TripStoreJSON.JSONMember
public typealias JSONReader = TripStoreJSON.JSONReader
public typealias JSONSyntaxError = TripStoreJSON.JSONSyntaxError
public typealias JSONValue = TripStoreJSON.JSONValue
public typealias JSONWriter = TripStoreJSON.JSONWriter

// TripStoreSystem: file access and its errors.
public typealias FileIO = TripStoreSystem.FileIO
public typealias FileIdentity = TripStoreSystem.FileIdentity
public typealias IOError = TripStoreSystem.IOError
public typealias OutputFile = TripStoreSystem.OutputFile
