-- Paused runs (approval and input gates) and their decisions.
CREATE TABLE runs (
    state_key      TEXT PRIMARY KEY,           -- workflow_resume_<uuid> | pipeline_resume_<uuid>
    kind           TEXT NOT NULL,              -- workflow-file | pipeline-resume
    approval_id    TEXT UNIQUE,                -- 8 hex digits, approval gates only
    gate           TEXT NOT NULL,              -- approval | input
    status         TEXT NOT NULL,              -- pending | running | done | cancelled | failed
    workflow_name  TEXT,
    request_json   TEXT NOT NULL,              -- the requiresApproval / requiresInput block
    state_json     TEXT NOT NULL,              -- what a resume needs to continue
    created_at     TEXT NOT NULL,
    claim_id       TEXT,
    claimed_pid    INTEGER,
    claimed_at     TEXT,
    decision       TEXT,                       -- approve | reject | respond | cancel
    decided_by     TEXT,
    decided_via    TEXT,                       -- cli | app | notification | http
    decided_at     TEXT,
    result_json    TEXT,                       -- final envelope of the resume
    next_state_key TEXT                        -- the gate the resume paused at next
);
CREATE INDEX runs_status ON runs (status, created_at);

-- state.set / state.get / diff.last values.
CREATE TABLE kv (
    key        TEXT PRIMARY KEY,
    value_json TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
