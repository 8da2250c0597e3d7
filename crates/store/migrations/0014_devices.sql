-- Paired devices: a person's phone or laptop, each with a passkey (its
-- public key and counter, as webauthn-rs keeps it; never a secret).
CREATE TABLE devices (
    name         TEXT PRIMARY KEY,
    rp_id        TEXT NOT NULL,
    passkey      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at   TEXT
);
