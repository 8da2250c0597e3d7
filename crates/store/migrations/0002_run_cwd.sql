-- The directory the paused process ran in: a resume from elsewhere (the
-- app) runs the remaining steps there, as the agent's own resume would.
ALTER TABLE runs ADD COLUMN cwd TEXT;
