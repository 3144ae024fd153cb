-- What the in-loop guard (factledger.guards) did in a turn, read from the guard attributes
-- of its spans (processors/guard_activity.py): attempts checked, nudges sent, the last
-- decision's outcome (pass, flag, reject) and action (pass, nudge, annotate, raise), and
-- what the turn came to (GuardResult: unguarded, passed, footnoted, corrected, refused;
-- the rule is `guard_outcome`'s, stored so that no query restates it). Rows written
-- before these columns read as unguarded.
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS GuardChecks UInt32 DEFAULT 0;
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS GuardNudges UInt32 DEFAULT 0;
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS GuardOutcome LowCardinality(String) DEFAULT '';
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS GuardAction LowCardinality(String) DEFAULT '';
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS GuardResult LowCardinality(String) DEFAULT 'unguarded';
