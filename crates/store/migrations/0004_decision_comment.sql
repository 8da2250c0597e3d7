-- What the decider said with the decision: an approval's comment, a
-- denial's reason.
ALTER TABLE runs ADD COLUMN decision_comment TEXT;
