-- The clawd browser's sessions: each an isolated browser context (or a named
-- persistent profile) with the last snapshot of its page (URL, cookies,
-- localStorage per origin), so a session is restored after Chromium or the
-- backend is killed. `context` is the browser context it last had.
CREATE TABLE browser_sessions (
    id         TEXT PRIMARY KEY,
    profile    TEXT,                       -- a named persistent profile, if any
    dialogs    TEXT NOT NULL,              -- default | accept | dismiss | ask
    context    TEXT,
    url        TEXT NOT NULL DEFAULT 'about:blank',
    state      TEXT NOT NULL DEFAULT '{}', -- {cookies, origins}
    created_at TEXT NOT NULL,
    saved_at   TEXT NOT NULL
);

-- Every action run in a session, for its trace and for the agent to query.
CREATE TABLE browser_actions (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    session     TEXT NOT NULL,
    action      TEXT NOT NULL,
    target      TEXT,
    input       TEXT,
    ok          INTEGER NOT NULL,
    code        TEXT,
    result      TEXT NOT NULL,             -- the whole result object
    duration_ms INTEGER NOT NULL,
    retries     INTEGER NOT NULL,
    screenshot  TEXT,
    at          TEXT NOT NULL
);
CREATE INDEX browser_actions_by_session ON browser_actions (session, seq);
