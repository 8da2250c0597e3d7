-- The process that started a run, as the operating system described it
-- when the run began (pid, executable, arguments, working directory,
-- terminal, parents), as JSON: what an approval shows of who asked. Only
-- runs a `lobster` process starts have one.
ALTER TABLE history ADD COLUMN provenance_json TEXT;
