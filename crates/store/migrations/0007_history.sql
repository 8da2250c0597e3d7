-- Runs started through the workflow service (HTTP, MCP, `clawdis runs`),
-- one row each from start to end; `seq` orders them newest first and is
-- the paging cursor. A gate such a run pauses at is a `runs` row carrying
-- its `run_id`, so every channel's decision is part of the run's history.
CREATE TABLE history (
    seq          INTEGER PRIMARY KEY,
    run_id       TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL,              -- workflow | pipeline
    workflow     TEXT,                       -- the workflow's name
    definition   TEXT NOT NULL,              -- the file's text or the pipeline, as it ran
    args_json    TEXT NOT NULL,
    cwd          TEXT,
    status       TEXT NOT NULL,              -- running | ok | needs_approval | needs_input | cancelled | failed
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    started_by   TEXT NOT NULL,              -- the principal: owner, token:<name>, mcp:<client>
    owner        TEXT,                       -- pid:start of the process running it, while it runs
    result_json  TEXT                        -- the last envelope
);
CREATE INDEX history_status ON history (status, seq);
CREATE INDEX history_workflow ON history (workflow, seq);

-- Each step of a history run, in the workflow's order.
CREATE TABLE history_steps (
    run_id      TEXT NOT NULL,
    position    INTEGER NOT NULL,
    step_id     TEXT NOT NULL,
    status      TEXT NOT NULL,               -- pending | running | ok | failed | skipped | cancelled
    started_at  TEXT,
    finished_at TEXT,
    duration_ms INTEGER,
    attempts    INTEGER NOT NULL DEFAULT 0,
    output_json TEXT,
    error       TEXT,
    PRIMARY KEY (run_id, step_id)
);

ALTER TABLE runs ADD COLUMN run_id TEXT;
CREATE INDEX runs_run_id ON runs (run_id) WHERE run_id IS NOT NULL;
