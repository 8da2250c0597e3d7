-- How the person who decided a gate showed they were there (`click`,
-- `token`, `passkey`, `os`; none for agents, links and the expiry), kept
-- with the decision and with each counted approval, as the ledger keeps it.
ALTER TABLE runs ADD COLUMN decided_presence TEXT;
ALTER TABLE votes ADD COLUMN presence TEXT;
