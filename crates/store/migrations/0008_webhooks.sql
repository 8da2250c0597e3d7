-- What webhooks announce, recorded by triggers in the same transaction as
-- the change itself, whichever process makes it (a `lobster` pausing or
-- resuming, the app, the backend). The backend turns each event into
-- deliveries and deletes it; `seq` never goes back (AUTOINCREMENT), so a
-- delivery's (event_seq, url) names one event's delivery to one receiver.
CREATE TABLE events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    type    TEXT NOT NULL,                   -- approval.pending | approval.decided | run.completed | run.failed
    subject TEXT NOT NULL,                   -- a gate's state key (approval.*, a lobster run's end) or a run id
    at      TEXT NOT NULL
);

CREATE TRIGGER events_gate_paused AFTER INSERT ON runs
BEGIN
    INSERT INTO events (type, subject, at) VALUES ('approval.pending', NEW.state_key, NEW.created_at);
END;

CREATE TRIGGER events_gate_decided AFTER UPDATE OF decision ON runs
WHEN OLD.decision IS NULL AND NEW.decision IS NOT NULL
BEGIN
    INSERT INTO events (type, subject, at)
    VALUES ('approval.decided', NEW.state_key, IFNULL(NEW.decided_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
END;

-- A run a `lobster` process started ends with the resume of its last gate.
CREATE TRIGGER events_gate_run_ended AFTER UPDATE OF status ON runs
WHEN NEW.run_id IS NULL AND NEW.next_state_key IS NULL AND OLD.status <> NEW.status
     AND NEW.status IN ('done', 'cancelled', 'failed')
BEGIN
    INSERT INTO events (type, subject, at)
    VALUES (CASE NEW.status WHEN 'failed' THEN 'run.failed' ELSE 'run.completed' END,
            NEW.state_key, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

-- A service run ends.
CREATE TRIGGER events_run_ended AFTER UPDATE OF status ON history
WHEN OLD.status <> NEW.status AND NEW.status IN ('ok', 'cancelled', 'failed')
BEGIN
    INSERT INTO events (type, subject, at)
    VALUES (CASE NEW.status WHEN 'failed' THEN 'run.failed' ELSE 'run.completed' END,
            NEW.run_id, IFNULL(NEW.finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
END;

-- One event's delivery to one receiver, with its retries. `id` is the
-- `webhook-id` header, the same on every attempt.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    event_seq       INTEGER NOT NULL,
    type            TEXT NOT NULL,
    url             TEXT NOT NULL,
    payload_json    TEXT NOT NULL,
    status          TEXT NOT NULL,           -- pending | delivered | failed
    attempts        INTEGER NOT NULL DEFAULT 0,
    budget_from     INTEGER NOT NULL DEFAULT 0, -- attempts made before the last redelivery
    next_attempt_at TEXT,                    -- due then (or a sender's lease until then)
    leased_by       TEXT,                    -- pid:start of the sender holding it, while it sends
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    delivered_at    TEXT,
    UNIQUE (event_seq, url)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- Each attempt of a delivery.
CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    at          TEXT NOT NULL,
    status_code INTEGER,                     -- the receiver's HTTP status, if it answered
    error       TEXT,
    duration_ms INTEGER,
    PRIMARY KEY (delivery_id, attempt)
);
