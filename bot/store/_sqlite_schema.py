"""The SQLite store's tables (schema version 2), and the step up from version 1.

`entries` holds values, `windows` the sliding windows' events (a JSON list per key); both
carry `expires` and `touched` (the use stamp eviction goes by) and one index besides the key,
`(ns, touched, expires)`, for eviction, counting and the sweep. `meta` has the schema
version: a file from a newer version is refused rather than misread. Version 1 kept row
counts with triggers and a WITHOUT ROWID `entries`; opening such a file brings it up to 2.
"""

import sqlite3

SCHEMA_VERSION = 2

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY, ns TEXT NOT NULL, value BLOB NOT NULL,
    expires REAL NOT NULL, touched INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS windows (
    key TEXT PRIMARY KEY, ns TEXT NOT NULL, events TEXT NOT NULL,
    expires REAL NOT NULL, touched INTEGER NOT NULL
) WITHOUT ROWID;
"""

# version 1's objects; also what a version-1 bot creates in a newer file before it sees the
# version and refuses it, so they are dropped on every open (a no-op when absent)
_VERSION_1 = (
    *(f"DROP TRIGGER IF EXISTS {t}_{d}" for t in ("entries", "windows") for d in ("in", "out")),
    "DROP TABLE IF EXISTS sizes",
    *(f"DROP INDEX IF EXISTS {t}_{i}" for t in ("entries", "windows") for i in ("expiry", "lru")),
)

_INDEXES = tuple(
    f"CREATE INDEX IF NOT EXISTS {t}_order ON {t} (ns, touched, expires)"
    for t in ("entries", "windows")
)


def _rebuild_entries(conn: sqlite3.Connection) -> None:
    """Version 1's `entries` (WITHOUT ROWID) copied into a rowid table, inside the caller's
    transaction: every value kept (the rows are bounded by the size bound, so this is short)."""
    conn.execute("DROP TABLE IF EXISTS entries_v2")
    conn.execute(
        "CREATE TABLE entries_v2 (key TEXT PRIMARY KEY, ns TEXT NOT NULL, value BLOB NOT NULL,"
        " expires REAL NOT NULL, touched INTEGER NOT NULL)"
    )
    conn.execute(
        "INSERT INTO entries_v2 (key, ns, value, expires, touched)"
        " SELECT key, ns, value, expires, touched FROM entries"
    )
    conn.execute("DROP TABLE entries")  # its indexes and triggers go with it
    conn.execute("ALTER TABLE entries_v2 RENAME TO entries")


class NewerSchema(Exception):
    """The file was written by a newer version of the bot."""


def prepare(conn: sqlite3.Connection) -> None:
    """Create the tables, or bring a version-1 file up to this version, in one transaction
    that holds the write lock (two processes opening one file do it one after the other).
    NewerSchema, with nothing changed, for a file of a later version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}')")
        (found,) = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        if found not in ("1", str(SCHEMA_VERSION)):
            raise NewerSchema(f"schema {found}")
        if found == "1":
            _rebuild_entries(conn)
        for statement in (*_VERSION_1, *_INDEXES):
            conn.execute(statement)
        if found != str(SCHEMA_VERSION):
            conn.execute(f"UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE name = 'schema'")
        conn.execute("COMMIT")
    except BaseException:
        conn.rollback()
        raise
