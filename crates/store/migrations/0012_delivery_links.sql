-- An approval link is never stored: a delivery keeps what it needs to sign
-- one when it is sent (the gate, and when the gate expires), and the link
-- is made, signed with the key outside this file, for each attempt.
ALTER TABLE webhook_deliveries ADD COLUMN link_gate TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN link_expires_at TEXT;
