-- When a gate with `expires_in` expires: the backend decides it then.
ALTER TABLE runs ADD COLUMN expires_at TEXT;
CREATE INDEX runs_expiry ON runs (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;
