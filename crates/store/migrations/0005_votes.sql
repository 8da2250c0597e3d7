-- Approvals counted toward a gate's `min_approvals`: one per approver.
-- The approval that reaches the count claims the run as usual.
CREATE TABLE votes (
    state_key TEXT NOT NULL,
    approver  TEXT NOT NULL,
    via       TEXT NOT NULL,
    at        TEXT NOT NULL,
    comment   TEXT,
    PRIMARY KEY (state_key, approver)
);
