// The library is one import: the store, its schema, queries, history and
// errors come with the model classes and contexts.
@_exported import TripStoreCore
@_exported import TripStoreFormat
@_exported import TripStoreJSON
@_exported import TripStoreSystem
