-- The workflows' triggers, as far as the backend has handled them. A row
-- is made the first time a trigger is seen; its id is derived from the
-- workflow file and the trigger itself, so an edit that changes the
-- trigger makes a new one. `mark` is the time up to which the trigger is
-- handled: a schedule's last occurrence fired (or skipped by its
-- catch-up policy), a watch's last look at its files. A fire advances the
-- mark in the same transaction as the run's history row, so a schedule
-- fires each occurrence once, whichever backend and however it stops.
CREATE TABLE triggers (
    id         TEXT PRIMARY KEY,
    workflow   TEXT NOT NULL,
    mark       TEXT NOT NULL,
    paused     INTEGER NOT NULL DEFAULT 0,
    fired_at   TEXT,                       -- when it last started a run
    updated_at TEXT NOT NULL
);

-- The one backend (app or `clawdis serve`) that fires the home's triggers;
-- another takes over when its process is gone.
CREATE TABLE scheduler_lease (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    owner TEXT NOT NULL,                   -- pid:start
    since TEXT NOT NULL
);
