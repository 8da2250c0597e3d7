-- Named bearer tokens besides the owner's (which lives in the keychain).
-- Only a SHA-256 digest of each token is kept, never the token.
CREATE TABLE tokens (
    name       TEXT PRIMARY KEY,
    role       TEXT NOT NULL,              -- agent | approver
    digest     TEXT NOT NULL UNIQUE,       -- hex SHA-256 of the token
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
