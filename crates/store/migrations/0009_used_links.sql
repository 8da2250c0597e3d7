-- The signed approval links that were used: each decides once. A link is
-- named by the nonce inside it; its gate is kept for the record.
CREATE TABLE used_links (
    nonce     TEXT PRIMARY KEY,
    state_key TEXT NOT NULL,
    used_at   TEXT NOT NULL
);
