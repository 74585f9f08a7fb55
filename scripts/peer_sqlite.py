#!/usr/bin/env python3
"""tripstore's SQLite peer: the benchmark's trip file loaded into SQLite and
measured the way tripstore-bench measures tripstore.

Run it alone:

    python3 scripts/peer_sqlite.py FILE [--budget S] [--writes K]

FILE is a trip file as `tripstore-bench` writes it (a JSON array with one
top-level envelope per line) or JSON Lines; any other layout is parsed
whole. `tripstore-bench --compare-sqlite` runs this script on its own file
and sets `--budget` to its own. Nothing beyond python3 (its standard
library: the `sqlite3` module) and the `sqlite3` command-line tool is needed;
`/usr/bin/time` gives the bulk update's peak memory when it is installed.
`--help` lists the other options (`--db`, `--keep-db`, `--import-only`,
`--children`, ...).

Each figure is one line on standard output,

    peer=sqlite n=TRIPS figure=NAME value=V unit=U

(`peer=sqlite-childtable` with `--children table`); progress and each
query's plan go to standard error.

The database, as docs/benchmarks.md describes SQLite's side:
  * page size 16 KB, WAL, every write with `synchronous=FULL`;
  * single-table inheritance: one row per trip in `trip`, whatever its class,
    with its type, real columns for the attributes the queries and the
    store's declared indexes use (name, destination, startDate, endDate,
    expenseCode, reason, perDiemRate, and `destination_fold` for `~`), and
    `data`, the envelope's JSON text; related objects stay inline in it
    (`--children inline`, the default), or with `--children table` are one
    row each in `related`, the trip keeping `{"type","id"}` references;
  * indexes on id (unique), type, and each declared index: name,
    destination, destination_fold, start_date, end_date, expense_code and
    reason (the last two partial: only the classes that have them);
  * `audit(token INTEGER PRIMARY KEY, id, kind, old, new)`, indexed on `id`
    and on `(kind, token)`, filled by an AFTER UPDATE trigger (the data
    attributes that changed, old and new, as JSON objects, as tripstore's
    history keeps them; `--audit rows`: both envelopes whole) and an AFTER
    DELETE trigger (the whole deleted envelope);
  * the import: one transaction (table, rows, indexes, triggers, ANALYZE),
    timed from the first read of FILE to the return of COMMIT.

`~` (contains, ignoring case and diacritics) is LIKE on `destination_fold`:
NFKD, combining marks dropped, casefolded, and the literal folded alike.
Writes that change `name` or `destination` change the column and `data`
(json_set) in the same statement.

Figures (in the order they are measured):
  file_bytes, objects, import_s, import_trips_per_s, import_objects_per_s,
  import_mb_per_s, import_peak_rss_bytes, import_peak_rss_bytes_per_object,
  db_bytes
      the import, in this process (MB are 10^6 bytes);
  open_first_query_ms, open_process_ms
      a new python3 process opening the database and counting (a): inside
      it, and the whole process (median of 5);
  query_X_median_ms, query_X_p99_ms, query_X_rows, for X in a..e;
  query_X_noindex_median_ms, query_X_noindex_p99_ms (NOT INDEXED)
      in process, for --budget seconds each:
        (a) is BusinessTrip (count)
        (b) is BusinessTrip && destination ~ "Rome" (count)
        (c) is PersonalTrip && reason == "family" && startDate >= 2026-06-01 (count)
        (d) perDiemRate > 100, by startDate descending, first 20 ids
        (e) one object by id;
  cli_query_X_ms
      the same five, each a fresh `sqlite3 -readonly` process: one warm-up,
      then the median of 5;
  commit_full_per_s, commit_full_median_ms, commit_full_p99_ms
      single-row INSERTs, each its own transaction, synchronous=FULL, for
      5 x --budget seconds or --commit-seconds (at most 5,000; the rows are
      deleted afterwards);
  cli_write_stream_mean_ms, cli_write_stream_p99_ms,
  cli_write_stream_max_ms, cli_write_stream_writes
      --writes K one-object writes, each a fresh `sqlite3` process running
      `PRAGMA synchronous=FULL; UPDATE trip SET name=... WHERE id=...` on a
      trip drawn at random (--seed), timed from outside;
  bulk_update_s, bulk_update_peak_rss_bytes, bulk_update_rows
      every trip's destination set in one transaction (the audit trigger
      firing for each), a `sqlite3` process: its time from outside and its
      peak resident size (`/usr/bin/time -v`, else the child's own rusage);
  bulk_delete_s, bulk_delete_rows
      the trips whose name starts with "Q1" deleted in one transaction, a
      `sqlite3` process (so that the audit holds deletes to read);
  cli_audit_by_id_ms, cli_audit_by_id_rows
      `SELECT ... FROM audit WHERE id = ? ORDER BY token` for the trip the
      stream wrote most, a fresh `sqlite3` process: one warm-up, median of 5;
  cli_audit_deletes_20_ms, cli_audit_deletes_20_rows
      `... WHERE kind = 'delete' ORDER BY token DESC LIMIT 20`, alike;
  audit_rows
      the audit table's rows at the end.
"""
import argparse
import collections
import functools
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
import sqlite3

MB = 1e6
PAGE_SIZE = 16384
# Connection settings for every read (in process and in `sqlite3` processes).
READ_PRAGMAS = ["PRAGMA cache_size=-262144", "PRAGMA mmap_size=2147418112",
                "PRAGMA temp_store=MEMORY"]

# The trip hierarchy: `is T` matches T and the classes below it.
CLASSES = {"Trip": ("Trip", "BusinessTrip", "PersonalTrip"),
           "BusinessTrip": ("BusinessTrip",), "PersonalTrip": ("PersonalTrip",)}

TRIP_TABLE = """CREATE TABLE trip(
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  name TEXT,
  destination TEXT,
  destination_fold TEXT,
  start_date TEXT,
  end_date TEXT,
  expense_code TEXT,
  reason TEXT,
  per_diem_rate REAL,
  data TEXT NOT NULL)"""
TRIP_INDEXES = [
    "CREATE UNIQUE INDEX trip_by_id ON trip(id)",
    "CREATE INDEX trip_by_type ON trip(type)",
    "CREATE INDEX trip_by_name ON trip(name)",
    "CREATE INDEX trip_by_destination ON trip(destination)",
    "CREATE INDEX trip_by_destination_fold ON trip(destination_fold)",
    "CREATE INDEX trip_by_start_date ON trip(start_date)",
    "CREATE INDEX trip_by_end_date ON trip(end_date)",
    "CREATE INDEX trip_by_expense_code ON trip(expense_code) WHERE expense_code IS NOT NULL",
    "CREATE INDEX trip_by_reason ON trip(reason) WHERE reason IS NOT NULL",
]
RELATED_TABLE = """CREATE TABLE related(
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  relationship TEXT NOT NULL,
  data TEXT NOT NULL)"""
RELATED_INDEXES = [
    "CREATE UNIQUE INDEX related_by_id ON related(id)",
    "CREATE INDEX related_by_owner ON related(owner_id)",
]
AUDIT_TABLE = """CREATE TABLE audit(
  token INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  kind TEXT NOT NULL,
  old TEXT,
  new TEXT)"""
AUDIT_INDEXES = [
    "CREATE INDEX audit_by_id ON audit(id)",
    "CREATE INDEX audit_by_kind_token ON audit(kind, token)",
]


def audit_triggers(table, audit):
    """An update records, with `audit="changes"`, the attributes of `data`
    that changed, old and new values as two JSON objects (each attribute of
    the new envelope compared with the old one's as JSON text), as
    tripstore's history does; with `audit="rows"` the old and the new
    envelope whole (less work per update, more bytes). A delete records the
    deleted envelope."""
    if audit == "changes":
        update = """INSERT INTO audit(id, kind, old, new)
  SELECT new.id, 'update', json_group_object(key, json(o)), json_group_object(key, json(n)) FROM (
    SELECT attribute.key AS key, old.data -> attribute.fullkey AS o, new.data -> attribute.fullkey AS n
    FROM json_each(new.data, '$.data') AS attribute)
  WHERE o IS NOT n"""
    else:
        update = "INSERT INTO audit(id, kind, old, new) VALUES (new.id, 'update', old.data, new.data)"
    return [
        """CREATE TRIGGER {t}_audit_update AFTER UPDATE ON {t} WHEN old.data IS NOT new.data
BEGIN
  {u};
END""".format(t=table, u=update),
        """CREATE TRIGGER {t}_audit_delete AFTER DELETE ON {t}
BEGIN
  INSERT INTO audit(id, kind, old, new) VALUES (old.id, 'delete', old.data, NULL);
END""".format(t=table),
    ]


# Related rows go with their trip (the store's cascade rule for them).
CASCADE_TRIGGER = """CREATE TRIGGER trip_cascade AFTER DELETE ON trip
BEGIN
  DELETE FROM related WHERE owner_id = old.id;
END"""


@functools.lru_cache(maxsize=65536)
def fold(text):
    """Case and diacritics folded as tripstore's `~` compares them."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def sql_text(value):
    """A string as an SQL literal."""
    return "'" + value.replace("'", "''") + "'"


def in_class(name):
    return "type IN (%s)" % ", ".join(sql_text(c) for c in CLASSES[name])


# name, the query as tripstore writes it, SQL ("{table}" takes NOT INDEXED), shape
QUERIES = [
    ("a", 'is BusinessTrip',
     "SELECT count(*) FROM trip{table} WHERE " + in_class("BusinessTrip"), "count"),
    ("b", 'is BusinessTrip && destination ~ "Rome"',
     "SELECT count(*) FROM trip{table} WHERE " + in_class("BusinessTrip")
     + " AND destination_fold LIKE " + sql_text("%" + fold("Rome") + "%"), "count"),
    ("c", 'is PersonalTrip && reason == "family" && startDate >= 2026-06-01',
     "SELECT count(*) FROM trip{table} WHERE " + in_class("PersonalTrip")
     + " AND reason = 'family' AND start_date >= '2026-06-01T00:00:00Z'", "count"),
    ("d", 'perDiemRate > 100 --sort -startDate --limit 20',
     "SELECT id FROM trip{table} WHERE per_diem_rate > 100 ORDER BY start_date DESC LIMIT 20", "list"),
    ("e", 'get ID',
     "SELECT type, id, data FROM trip{table} WHERE id = ?", "get"),
]


def say(*parts):
    print("peer_sqlite:", *parts, file=sys.stderr, flush=True)


class Report:
    """Prints figures as `peer=... n=... figure=... value=... unit=...`."""

    def __init__(self, peer):
        self.peer = peer
        self.trips = 0

    def __call__(self, figure, value, unit):
        if isinstance(value, int):
            text = str(value)
        elif value != value:
            text = "nan"
        elif abs(value) >= 100:
            text = "%.0f" % value
        elif abs(value) >= 1:
            text = "%.3f" % value
        else:
            text = "%.4g" % value
        print("peer=%s n=%d figure=%s value=%s unit=%s" % (self.peer, self.trips, figure, text, unit),
              flush=True)


def median(values):
    return statistics.median(values) if values else float("nan")


def percentile(values, p):
    """The nearest-rank percentile (as tripstore-bench computes its own)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = -(-len(ordered) * p // 100)  # ceiling
    return ordered[max(0, min(len(ordered) - 1, int(rank) - 1))]


def remove_database(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def settle():
    """Lets the disk finish what was written before a write figure starts."""
    os.sync()
    time.sleep(1)


# ---------------------------------------------------------------- reading

def top_level_envelopes(path):
    """Yields (JSON text, parsed envelope) for each top-level envelope.

    The usual layout (one envelope per line, in an array or as JSON Lines) is
    read a line at a time; any other layout falls back to parsing the file
    whole and writing each envelope back as compact JSON."""
    yielded = 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.strip()
            if line in (b"", b"[", b"]"):
                continue
            if line.endswith(b","):
                line = line[:-1]
            text = line.decode("utf-8")
            try:
                envelope = json.loads(text) if line.startswith(b"{") else None
            except ValueError:
                envelope = None
            if not isinstance(envelope, dict):
                if yielded:
                    raise SystemExit("peer_sqlite: %s: a line is not one envelope: %.60s" % (path, text))
                break
            yielded += 1
            yield text, envelope
        else:
            return
    with open(path, "rb") as f:
        document = json.load(f)
    for envelope in document if isinstance(document, list) else [document]:
        yield compact(envelope), envelope


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def is_envelope(value):
    return isinstance(value, dict) and "type" in value and isinstance(value.get("data"), dict)


def count_objects(data):
    """The envelopes inside a `data` object, at any depth."""
    count = 0
    for value in data.values():
        for item in value if isinstance(value, list) else [value]:
            if is_envelope(item):
                count += 1 + count_objects(item["data"])
    return count


def full_date(value):
    """A date column's text, so that text order is time order: a date-only
    value means midnight UTC."""
    if isinstance(value, str) and len(value) == 10:
        return value + "T00:00:00Z"
    return value


def trip_row(envelope, text):
    data = envelope["data"]
    destination = data.get("destination")
    return (envelope["id"], envelope["type"], data.get("name"), destination,
            fold(destination) if isinstance(destination, str) else None,
            full_date(data.get("startDate")), full_date(data.get("endDate")),
            data.get("expenseCode"), data.get("reason"), data.get("perDiemRate"), text)


def split_related(envelope, sink):
    """The trip's JSON with each related envelope replaced by a reference;
    the related envelopes go to `sink` as rows of `related`."""
    owner = envelope["id"]

    def reference(key, related):
        sink.append((related["id"], related["type"], owner, key, compact(related)))
        return {"type": related["type"], "id": related["id"]}

    data = {}
    for key, value in envelope["data"].items():
        if is_envelope(value):
            data[key] = reference(key, value)
        elif isinstance(value, list) and value and all(is_envelope(v) for v in value):
            data[key] = [reference(key, v) for v in value]
        else:
            data[key] = value
    return compact({"type": envelope["type"], "id": owner, "data": data})


# ---------------------------------------------------------------- import

def import_file(path, database, children, audit):
    """Loads `path` in one durable transaction; returns (seconds, trips, peak RSS bytes)."""
    remove_database(database)
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA page_size=%d" % PAGE_SIZE)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    for pragma in READ_PRAGMAS:
        connection.execute(pragma)
    insert_trip = "INSERT INTO trip VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    insert_related = "INSERT INTO related VALUES (?,?,?,?,?)"
    trips = 0
    related = []

    started = time.perf_counter()
    connection.execute("BEGIN")
    connection.execute(TRIP_TABLE)
    connection.execute(AUDIT_TABLE)
    if children == "inline":
        def rows():
            nonlocal trips
            for text, envelope in top_level_envelopes(path):
                trips += 1
                yield trip_row(envelope, text)
        connection.executemany(insert_trip, rows())
    else:
        connection.execute(RELATED_TABLE)
        batch = []
        for text, envelope in top_level_envelopes(path):
            trips += 1
            batch.append(trip_row(envelope, split_related(envelope, related)))
            if len(batch) == 2000:
                connection.executemany(insert_trip, batch)
                connection.executemany(insert_related, related)
                batch.clear()
                related.clear()
        connection.executemany(insert_trip, batch)
        connection.executemany(insert_related, related)
    loaded = time.perf_counter()
    for statement in TRIP_INDEXES + AUDIT_INDEXES + audit_triggers("trip", audit):
        connection.execute(statement)
    if children == "table":
        for statement in RELATED_INDEXES + audit_triggers("related", audit) + [CASCADE_TRIGGER]:
            connection.execute(statement)
    indexed = time.perf_counter()
    connection.execute("ANALYZE")
    connection.execute("COMMIT")
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # untimed: the WAL back into the file
    connection.close()
    say("import: rows %.2f s, indexes and triggers %.2f s, ANALYZE and COMMIT %.2f s"
        % (loaded - started, indexed - loaded, started + seconds - indexed))
    return seconds, trips, peak


# ---------------------------------------------------------------- reads

def connect(database, read_only):
    if read_only:
        connection = sqlite3.connect("file:%s?mode=ro" % database, uri=True, isolation_level=None)
    else:
        connection = sqlite3.connect(database, isolation_level=None)
    for pragma in READ_PRAGMAS:
        connection.execute(pragma)
    return connection


def time_query(connection, sql, shape, ids, budget, min_runs, max_runs):
    """Runs one query for `budget` seconds (between min_runs and max_runs
    times, after two untimed runs); returns (seconds of each run, rows)."""
    def once(k):
        result = connection.execute(sql, (ids[k % len(ids)],) if shape == "get" else ()).fetchall()
        return result[0][0] if shape == "count" else len(result)
    once(0)
    once(1)
    times = []
    rows = None
    deadline = time.perf_counter() + budget
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() < deadline):
        t = time.perf_counter()
        rows = once(len(times))
        times.append(time.perf_counter() - t)
    return times, rows


OPEN_AND_COUNT = """
import sqlite3, sys, time
t = time.perf_counter()
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, isolation_level=None)
for pragma in sys.argv[3:]:
    c.execute(pragma)
c.execute(sys.argv[2]).fetchall()
print(time.perf_counter() - t)
"""


def time_open(database, runs=5):
    """A new python3 process opens the database and counts (a): (inside, whole) seconds."""
    sql = QUERIES[0][2].format(table="")
    inside, whole = [], []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", OPEN_AND_COUNT, database, sql] + READ_PRAGMAS,
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        whole.append(time.perf_counter() - t)
        inside.append(float(out))
    return median(inside), median(whole)


class Shell:
    """The `sqlite3` command-line tool, a fresh process per call."""

    def __init__(self, database):
        self.exe = shutil.which("sqlite3")
        self.database = database

    def argv(self, sql, read_only):
        if read_only:
            # The pragmas' own output (mmap_size prints its value) is dropped.
            command = [self.exe, "-readonly", "-cmd", ".output /dev/null"]
            for pragma in READ_PRAGMAS:
                command += ["-cmd", pragma]
            return command + ["-cmd", ".output stdout", self.database, sql]
        return [self.exe, self.database, sql]

    def run(self, sql, read_only=True):
        """Seconds from start to exit, and the output."""
        t = time.perf_counter()
        done = subprocess.run(self.argv(sql, read_only), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - t
        if done.returncode != 0 or done.stderr.strip():
            raise SystemExit("peer_sqlite: sqlite3 failed on %.80s: %s" % (sql, done.stderr.strip()))
        return seconds, done.stdout

    def cold(self, sql, runs=5):
        """One warm-up, then the median of `runs` processes; and the output."""
        _, out = self.run(sql)
        times = []
        for _ in range(runs):
            t, out = self.run(sql)
            times.append(t)
        return median(times), out

    def measured(self, sql):
        """Runs a write to its end: (seconds, peak resident bytes), the peak
        as /usr/bin/time reports it, else from wait4's resource usage."""
        command = self.argv(sql, read_only=False)
        if os.access("/usr/bin/time", os.X_OK):
            with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
                t = time.perf_counter()
                done = subprocess.run(["/usr/bin/time", "-v", "-o", report.name] + command,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                seconds = time.perf_counter() - t
                if done.returncode != 0:
                    raise SystemExit("peer_sqlite: sqlite3 failed: %s" % done.stderr.strip())
                peak_kb = next(int(line.rsplit(":", 1)[1]) for line in report
                               if "Maximum resident set size" in line)
            return seconds, peak_kb * 1024
        with tempfile.TemporaryFile() as errors:
            t = time.perf_counter()
            child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.perf_counter() - t
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                errors.seek(0)
                raise SystemExit("peer_sqlite: sqlite3 failed: %s" % errors.read().decode().strip())
        return seconds, usage.ru_maxrss * 1024


# ---------------------------------------------------------------- writes

def time_commits(database, seconds, most=5000):
    """Single-row INSERTs of copies of existing trips under new ids, each its
    own durable transaction: (rate, median, p99, commits)."""
    connection = connect(database, read_only=False)
    connection.execute("PRAGMA synchronous=FULL")
    sources = connection.execute("SELECT * FROM trip LIMIT 512").fetchall()
    rows = []
    for k in range(most):
        source = list(sources[k % len(sources)])
        envelope = json.loads(source[10])
        envelope["id"] = source[0] = "commit-%d-%s" % (k, envelope["id"])
        source[10] = compact(envelope)
        rows.append(tuple(source))
    insert = "INSERT INTO trip VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    times = []
    started = time.perf_counter()
    deadline = started + seconds
    for row in rows:
        t = time.perf_counter()
        connection.execute(insert, row)  # autocommit: one transaction
        times.append(time.perf_counter() - t)
        if len(times) >= 20 and time.perf_counter() > deadline:
            break
    total = time.perf_counter() - started
    connection.execute("DELETE FROM trip WHERE id GLOB 'commit-*'")
    connection.close()
    return len(times) / total, median(times), percentile(times, 99), len(times)


def time_write_stream(shell, ids, writes, seed):
    """`writes` one-object UPDATEs, each a `sqlite3` process: (seconds of each, ids written)."""
    chooser = random.Random(seed)
    times, written = [], []
    for k in range(writes):
        trip = chooser.choice(ids)
        name = sql_text("Stream %d" % k)
        sql = ("PRAGMA synchronous=FULL; UPDATE trip SET name = %s, data = json_set(data, '$.data.name', %s)"
               " WHERE id = %s;" % (name, name, sql_text(trip)))
        times.append(shell.run(sql, read_only=False)[0])
        written.append(trip)
    return times, written


BULK_DESTINATION = "Bulk City, Nowhere"


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(
        description="tripstore's SQLite peer: loads a trip file into SQLite and prints its figures.")
    parser.add_argument("file", help="trip file (tripstore-bench's JSON array, or JSON Lines)")
    parser.add_argument("--budget", type=float, default=2.0,
                        help="seconds per in-process query figure (default 2); commits run 5x as long")
    parser.add_argument("--writes", type=int, default=300,
                        help="one-object writes in the stream of sqlite3 processes (default 300)")
    parser.add_argument("--seed", type=int, default=1, help="chooses the stream's trips (default 1)")
    parser.add_argument("--db", help="database path (default: FILE without .json, plus .peer.sqlite)")
    parser.add_argument("--keep-db", action="store_true", help="leave the database in place afterwards")
    parser.add_argument("--children", choices=["inline", "table"], default="inline",
                        help="related objects inside the trip's JSON (default) or a row each in `related`")
    parser.add_argument("--audit", choices=["changes", "rows"], default="changes",
                        help="what the update trigger records: the changed attributes (default) or both envelopes")
    parser.add_argument("--min-runs", type=int, default=10, help="runs per in-process query at least (default 10)")
    parser.add_argument("--max-runs", type=int, default=2000, help="runs per in-process query at most (default 2000)")
    parser.add_argument("--commit-seconds", type=float, help="time for the commits (default 5 x --budget)")
    parser.add_argument("--skip-noindex", action="store_true", help="no NOT INDEXED query figures")
    parser.add_argument("--import-only", action="store_true", help="the import's figures and nothing else")
    options = parser.parse_args()
    if not os.path.isfile(options.file):
        parser.error("no such file: %s" % options.file)
    if not shutil.which("sqlite3"):
        parser.error("the sqlite3 command-line tool is needed (Debian: apt-get install sqlite3)")
    database = options.db or os.path.splitext(options.file)[0] + ".peer.sqlite"
    emit = Report("sqlite" if options.children == "inline" else "sqlite-childtable")
    say("SQLite %s (python3 %s), sqlite3 CLI %s, database %s" % (
        sqlite3.sqlite_version, sys.version.split()[0],
        subprocess.run(["sqlite3", "--version"], stdout=subprocess.PIPE, text=True).stdout.split()[0], database))
    failures = 0

    # Import, then count the objects (untimed: inline objects are not rows).
    file_bytes = os.path.getsize(options.file)
    seconds, trips, peak = import_file(options.file, database, options.children, options.audit)
    objects = sum(1 + count_objects(e["data"]) for _, e in top_level_envelopes(options.file))
    emit.trips = trips
    emit("file_bytes", file_bytes, "B")
    emit("objects", objects, "count")
    emit("import_s", seconds, "s")
    emit("import_trips_per_s", trips / seconds, "trips/s")
    emit("import_objects_per_s", objects / seconds, "objects/s")
    emit("import_mb_per_s", file_bytes / MB / seconds, "MB/s")
    emit("import_peak_rss_bytes", peak, "B")
    emit("import_peak_rss_bytes_per_object", peak / max(objects, 1), "B/object")
    emit("db_bytes", os.path.getsize(database), "B")
    if options.import_only:
        if not options.keep_db:
            remove_database(database)
        return

    inside, whole = time_open(database)
    emit("open_first_query_ms", inside * 1000, "ms")
    emit("open_process_ms", whole * 1000, "ms")

    # Queries in process.
    reader = connect(database, read_only=True)
    all_ids = [r[0] for r in reader.execute("SELECT id FROM trip ORDER BY rowid")]
    sample = all_ids[::max(1, len(all_ids) // 2000)]
    counts = {}
    for name, predicate, template, shape in QUERIES:
        sql = template.format(table="")
        plan = "; ".join(r[3] for r in reader.execute(
            "EXPLAIN QUERY PLAN " + sql, (sample[0],) if shape == "get" else ()))
        times, rows = time_query(reader, sql, shape, sample, options.budget, options.min_runs, options.max_runs)
        counts[name] = rows
        say("(%s) %s: %d runs, %s rows; plan: %s" % (name, predicate, len(times), rows, plan))
        emit("query_%s_median_ms" % name, median(times) * 1000, "ms")
        emit("query_%s_p99_ms" % name, percentile(times, 99) * 1000, "ms")
        emit("query_%s_rows" % name, rows, "rows")
    if not options.skip_noindex:
        for name, predicate, template, shape in QUERIES:
            sql = template.format(table=" NOT INDEXED")
            times, rows = time_query(reader, sql, shape, sample, options.budget,
                                     min(options.min_runs, 5), options.max_runs)
            if rows != counts[name]:
                say("(%s) NOT INDEXED gives %s rows, with indexes %s" % (name, rows, counts[name]))
                failures += 1
            emit("query_%s_noindex_median_ms" % name, median(times) * 1000, "ms")
            emit("query_%s_noindex_p99_ms" % name, percentile(times, 99) * 1000, "ms")
    reader.close()

    # The same queries as fresh sqlite3 processes.
    shell = Shell(database)
    middle = all_ids[len(all_ids) // 2]
    for name, predicate, template, shape in QUERIES:
        sql = template.format(table="").replace("?", sql_text(middle))
        t, out = shell.cold(sql)
        printed = out.strip().splitlines()
        got = int(printed[0]) if shape == "count" else len(printed)
        want = counts[name] if shape != "get" else 1
        if got != want:
            say("(%s) the sqlite3 CLI printed %s rows, in process %s" % (name, got, want))
            failures += 1
        emit("cli_query_%s_ms" % name, t * 1000, "ms")

    # Single durable commits, in this process.
    settle()
    rate, middle_commit, p99, commits = time_commits(
        database, options.commit_seconds if options.commit_seconds is not None else 5 * options.budget)
    say("commits: %d single-row INSERTs" % commits)
    emit("commit_full_per_s", rate, "commits/s")
    emit("commit_full_median_ms", middle_commit * 1000, "ms")
    emit("commit_full_p99_ms", p99 * 1000, "ms")

    # A stream of one-object writes from the command line.
    if options.writes > 0:
        settle()
        times, written = time_write_stream(shell, all_ids, options.writes, options.seed)
        emit("cli_write_stream_mean_ms", sum(times) / len(times) * 1000, "ms")
        emit("cli_write_stream_p99_ms", percentile(times, 99) * 1000, "ms")
        emit("cli_write_stream_max_ms", max(times) * 1000, "ms")
        emit("cli_write_stream_writes", len(times), "writes")
        audited = collections.Counter(written).most_common(1)[0][0]
    else:
        audited = middle

    # Every trip's destination in one transaction, the audit trigger firing for each.
    settle()
    sql = ("PRAGMA synchronous=FULL; BEGIN; UPDATE trip SET destination = %s, destination_fold = %s,"
           " data = json_set(data, '$.data.destination', %s); COMMIT;"
           % (sql_text(BULK_DESTINATION), sql_text(fold(BULK_DESTINATION)), sql_text(BULK_DESTINATION)))
    before = shell.run("SELECT count(*) FROM audit;")[1]
    seconds, peak = shell.measured(sql)
    updated = int(shell.run("SELECT count(*) FROM audit;")[1]) - int(before)
    if updated != trips:
        say("the bulk update audited %d updates for %d trips" % (updated, trips))
        failures += 1
    emit("bulk_update_s", seconds, "s")
    emit("bulk_update_peak_rss_bytes", peak, "B")
    emit("bulk_update_rows", updated, "rows")

    # Deletes for the audit to hold: every trip whose name starts with "Q1".
    deleting = int(shell.run("SELECT count(*) FROM trip WHERE name GLOB 'Q1*';")[1])
    seconds, _ = shell.measured("PRAGMA synchronous=FULL; DELETE FROM trip WHERE name GLOB 'Q1*';")
    emit("bulk_delete_s", seconds, "s")
    emit("bulk_delete_rows", deleting, "rows")

    # The audit read back, as fresh sqlite3 processes.
    audit_reads = [
        ("by_id", "SELECT token, kind, old, new FROM audit WHERE id = %s ORDER BY token;" % sql_text(audited)),
        ("deletes_20", "SELECT token, id, old FROM audit WHERE kind = 'delete' ORDER BY token DESC LIMIT 20;"),
    ]
    check = sqlite3.connect("file:%s?mode=ro" % database, uri=True)
    for name, sql in audit_reads:
        plan = "; ".join(r[3] for r in check.execute("EXPLAIN QUERY PLAN " + sql))
        rows = len(check.execute(sql).fetchall())
        t, out = shell.cold(sql)
        say("audit %s: %d rows; plan: %s" % (name, rows, plan))
        emit("cli_audit_%s_ms" % name, t * 1000, "ms")
        emit("cli_audit_%s_rows" % name, rows, "rows")
    emit("audit_rows", check.execute("SELECT count(*) FROM audit").fetchone()[0], "rows")
    check.close()

    if not options.keep_db:
        remove_database(database)
    if failures:
        raise SystemExit("peer_sqlite: %d result(s) disagree (above)" % failures)


if __name__ == "__main__":
    main()
