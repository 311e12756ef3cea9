"""The SQLite store's tables (schema version 1).

`entries` holds values, `windows` the sliding windows' events (a JSON list per key). Both
carry `expires` (seconds since the epoch) and `touched` (a per-namespace use counter, for
eviction). `sizes` counts rows per table and namespace; triggers keep it exact, so checking
the size bound costs one lookup. `meta` has the schema version: a file from a newer version
is refused rather than misread.
"""

SCHEMA_VERSION = 1

SCHEMA = f"""
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}');
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY, ns TEXT NOT NULL, value BLOB NOT NULL,
    expires REAL NOT NULL, touched INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_lru ON entries (ns, touched);
CREATE INDEX IF NOT EXISTS entries_expiry ON entries (expires);
CREATE TABLE IF NOT EXISTS windows (
    key TEXT PRIMARY KEY, ns TEXT NOT NULL, events TEXT NOT NULL,
    expires REAL NOT NULL, touched INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS windows_lru ON windows (ns, touched);
CREATE INDEX IF NOT EXISTS windows_expiry ON windows (expires);
CREATE TABLE IF NOT EXISTS sizes (
    tbl TEXT NOT NULL, ns TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tbl, ns)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS entries_in AFTER INSERT ON entries BEGIN
    INSERT INTO sizes VALUES ('entries', NEW.ns, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS entries_out AFTER DELETE ON entries BEGIN
    UPDATE sizes SET n = n - 1 WHERE tbl = 'entries' AND ns = OLD.ns;
END;
CREATE TRIGGER IF NOT EXISTS windows_in AFTER INSERT ON windows BEGIN
    INSERT INTO sizes VALUES ('windows', NEW.ns, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS windows_out AFTER DELETE ON windows BEGIN
    UPDATE sizes SET n = n - 1 WHERE tbl = 'windows' AND ns = OLD.ns;
END;
COMMIT;
"""
