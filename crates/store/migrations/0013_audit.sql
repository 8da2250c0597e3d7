-- The ledger of decisions, refusals and credentials: append-only, each
-- entry's hash covering its fields and the previous entry's hash.
CREATE TABLE audit (
    seq       INTEGER PRIMARY KEY,
    at        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    subject   TEXT NOT NULL,
    by        TEXT,
    via       TEXT,
    presence  TEXT,
    digest    TEXT,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
