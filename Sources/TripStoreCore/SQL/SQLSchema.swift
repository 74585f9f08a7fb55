import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// The PostgreSQL tables a store streams into (docs/postgres.md), in one schema
/// (`tripstore` unless named otherwise):
///
/// - `objects(id, type, types, data, token)`: one row per live object; `types`
///   is its type and its ancestors (`types @> ARRAY['Trip']` is `is Trip`),
///   `data` its envelope's data, `token` the transaction that last wrote it;
/// - `history(token, "timestamp", author, changes)`: one row per transaction,
///   `changes` as `history --format jsonl` prints them;
/// - `cursor(token)`: one row, the last token applied (0 in a new database);
/// - `expect(previous, next)`: raises unless the cursor is `previous`, so a
///   gap or a repeat stops `psql -v ON_ERROR_STOP=1` naming both tokens;
/// - `fold(text)`: the query language's text folding as PostgreSQL can give it.
public struct SQLSchema: Sendable {
    /// The PostgreSQL schema's name.
    public let name: String
    /// `"name"`, quoted.
    public var qualified: String { SQLText.name(name) }
    public var objects: String { qualified + ".objects" }
    public var history: String { qualified + ".history" }
    public var cursor: String { qualified + ".cursor" }

    /// The statement that opens each transaction of the feed: raises unless
    /// the database is at `previous` (it prints nothing on success).
    public func expect(_ previous: Int64, _ next: Int64) -> String {
        "DO $tripstore$ BEGIN PERFORM \(qualified).expect(\(previous), \(next)); END $tripstore$;\n"
    }

    /// The tables in schema `name` (default `tripstore`).
    public init(name: String = "tripstore") {
        self.name = name
    }

    /// The DDL for a store of `schema`, in force from token `indexesFrom`
    /// (see `indexCreations`); running it twice is harmless.
    public func ddl(for schema: Schema, indexesFrom: Int64 = 0) -> String {
        let s = """
        -- tripstore: the tables \(name) that 'tripstore history --format sql' streams into (docs/postgres.md).
        SET client_min_messages = warning;
        BEGIN;
        CREATE SCHEMA IF NOT EXISTS \(qualified);
        CREATE TABLE IF NOT EXISTS \(objects) (
            id text PRIMARY KEY,
            type text NOT NULL,
            types text[] NOT NULL,
            data jsonb NOT NULL,
            token bigint NOT NULL
        );
        CREATE TABLE IF NOT EXISTS \(history) (
            token bigint PRIMARY KEY,
            "timestamp" timestamptz NOT NULL,
            author text,
            changes jsonb NOT NULL
        );
        CREATE TABLE IF NOT EXISTS \(cursor) (token bigint NOT NULL);
        LOCK TABLE \(cursor) IN EXCLUSIVE MODE;
        INSERT INTO \(cursor) (token) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM \(cursor));
        -- A bulk import's history row is one value of tens of megabytes:
        -- LZ4 compresses it several times faster than the default, where the
        -- server was built with it (elsewhere nothing changes). Only when
        -- not set yet, and after the cursor's lock, which a feed takes before
        -- it writes history: an ALTER locks the table whole.
        DO $tripstore$ BEGIN
            IF (SELECT attcompression FROM pg_attribute WHERE attrelid = \(SQLText.literal(history))::regclass AND attname = 'changes')
                IS DISTINCT FROM 'l' THEN
                EXECUTE \(SQLText.literal("ALTER TABLE \(history) ALTER COLUMN changes SET COMPRESSION lz4"));
            END IF;
        EXCEPTION WHEN OTHERS THEN NULL;
        END $tripstore$;
        CREATE INDEX IF NOT EXISTS objects_types ON \(objects) USING gin (types);

        -- Raises unless the cursor is `previous`: each transaction of the feed checks it first.
        CREATE OR REPLACE FUNCTION \(qualified).expect(previous bigint, next bigint) RETURNS void
        LANGUAGE plpgsql AS $tripstore$
        DECLARE at bigint;
        BEGIN
            SELECT token INTO at FROM \(cursor) FOR UPDATE;
            IF at IS DISTINCT FROM previous THEN
                RAISE EXCEPTION 'tripstore: token % follows token %, but this database is at token %', next, previous, at
                    USING HINT = 'resume with: tripstore history --format sql --since ' || at;
            END IF;
        END $tripstore$;

        -- A stored date (ISO 8601, always with its offset, so the session's
        -- time zone does not change it: immutable in fact) as seconds since
        -- 1970, exactly: the fraction is read as written, not rounded to
        -- timestamptz's microseconds.
        CREATE OR REPLACE FUNCTION \(qualified).instant(t text) RETURNS numeric
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $tripstore$
            SELECT extract(epoch FROM regexp_replace(t, '[.][0-9]+', '')::timestamptz)
                   + ('0' || coalesce(substring(t FROM '[.][0-9]+'), ''))::numeric
        $tripstore$;

        -- the query language's folding for ~ and ^=: canonical decomposition, combining marks
        -- dropped, lower case (PostgreSQL's lower(), not full case folding),
        -- and Greek final sigma as sigma, as case folding has it.
        CREATE OR REPLACE FUNCTION \(qualified).fold(t text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $tripstore$
            SELECT translate(lower(regexp_replace(normalize(t, NFD),
                E'[\\\\u0300-\\\\u036f\\\\u0483-\\\\u0489\\\\u0591-\\\\u05bd\\\\u0610-\\\\u061a\\\\u064b-\\\\u065f\\\\u0e31\\\\u0e34-\\\\u0e3a\\\\u1ab0-\\\\u1aff\\\\u1dc0-\\\\u1dff\\\\u20d0-\\\\u20ff\\\\u3099\\\\u309a\\\\ufe20-\\\\ufe2f]', '', 'g')), 'ς', 'σ')
        $tripstore$;

        """
        return s + indexDrops(for: schema) + indexCreations(for: schema, from: indexesFrom) + "COMMIT;\n"
    }

    /// One declared index as PostgreSQL holds it: an expression over
    /// `data`, on the rows of the entity that declares the property and
    /// its subclasses.
    public struct ExpressionIndex: Equatable, Sendable {
        /// The index's name, which says what it indexes: the entity, the
        /// property and the kind of value (`tripstore:Trip.name:text`; names
        /// hold no `.` or `:`, so no two indexes share one), so that an
        /// index over another property or kind of value never hides behind
        /// `IF NOT EXISTS` under the same name.
        public let name: String
        /// `CREATE INDEX IF NOT EXISTS …`.
        public let statement: String
    }

    /// The prefix of every expression index tripstore makes: the DDL and a
    /// migration drop only those (and those 0.9.0 made), never a user's own.
    static let indexPrefix = "tripstore:"

    /// The expression indexes `schema` declares (booleans, arrays and
    /// embedded values have none).
    public func indexes(for schema: Schema) -> [ExpressionIndex] {
        var out: [ExpressionIndex] = []
        for e in schema.entities {
            for p in e.properties where p.declaringEntity == e.id {
                guard let a = p.attribute, a.isIndexed else { continue }
                let value = "data->>\(SQLText.literal(p.name))"
                let (kind, expression): (String, String)
                switch a.type {
                case .string, .enumeration: (kind, expression) = ("text", "(\(value)) COLLATE \"C\"")
                case .int, .double: (kind, expression) = ("num", "((\(value))::numeric)")
                case .date: (kind, expression) = ("date", "(\(qualified).instant(\(value)))")
                case .bool, .array, .embedded: continue
                }
                let name = Self.indexName(Self.indexPrefix + "\(e.name).\(p.name):\(kind)")
                out.append(ExpressionIndex(name: name, statement: "CREATE INDEX IF NOT EXISTS \(SQLText.name(name)) ON \(objects) (\(expression)) "
                                           + "WHERE types @> \(SQLText.textArray([e.name]));\n"))
            }
        }
        return out
    }

    /// PostgreSQL keeps 63 bytes of a name: a longer one is cut and given
    /// a checksum of the whole, so two long names never become one (names
    /// are ASCII, so a cut never splits a character).
    static func indexName(_ full: String) -> String {
        let bytes = Array(full.utf8)
        guard bytes.count > 63 else { return full }
        return String(decoding: bytes.prefix(54), as: UTF8.self) + "~" + CRC32C.hex(bytes.withUnsafeBytes { CRC32C.checksum($0) })
    }

    /// The drops that bring the indexes of `objects` to those `schema`
    /// declares: each expression index tripstore made that the schema does
    /// not declare (its property renamed, re-typed, re-added or no longer
    /// indexed), and each that 0.9.0 made (named `objects_<Entity>_<property>`
    /// for exactly the entity and property its definition names, cut to
    /// PostgreSQL's 63 bytes as it cut it). A
    /// migration runs them before it writes the objects again (an index of
    /// an earlier schema may refuse their new values), the DDL always.
    public func indexDrops(for schema: Schema) -> String {
        let keep = SQLText.textArray(indexes(for: schema).map(\.name))
        return """
        DO $tripstore$ DECLARE i record; BEGIN
            FOR i IN SELECT indexname FROM pg_indexes
                WHERE schemaname = \(SQLText.literal(name)) AND tablename = 'objects' AND (
                    (starts_with(indexname, \(SQLText.literal(Self.indexPrefix))) AND indexname <> ALL (\(keep)::text[]))
                    OR indexname = left('objects_' || substring(indexdef FROM 'WHERE \\(types @> ARRAY\\[''([A-Za-z0-9_]+)''')
                                        || '_' || substring(indexdef FROM 'data ->> ''([A-Za-z0-9_]+)'''), 63)) LOOP
                EXECUTE format('DROP INDEX %I.%I', \(SQLText.literal(name)), i.indexname);
            END LOOP;
        END $tripstore$;

        """
    }

    /// The creations of the indexes `schema` declares. `from`: the token
    /// from which the schema is in force (its migration's, 0 for the
    /// first): a database whose cursor is before it gets them from that
    /// migration's transaction, since an index of a later schema may refuse
    /// the values of the transactions before it.
    public func indexCreations(for schema: Schema, from token: Int64 = 0) -> String {
        let statements = indexes(for: schema).map(\.statement)
        guard token > 0, !statements.isEmpty else { return statements.joined() }
        var s = "DO $tripstore$ BEGIN\n    IF (SELECT token FROM \(cursor)) >= \(token) THEN\n"
        for statement in statements { s += "        EXECUTE \(SQLText.literal(String(statement.dropLast(2))));\n" }
        return s + "    END IF;\nEND $tripstore$;\n"
    }

    /// An entity's type and its ancestors, nearest first (the `types` column).
    public static func types(of entity: Entity, in schema: Schema) -> [String] {
        var out: [String] = []
        var e: Int? = entity.id
        while let current = e {
            out.append(schema.entities[current].name)
            e = schema.entities[current].parent
        }
        return out
    }
}
