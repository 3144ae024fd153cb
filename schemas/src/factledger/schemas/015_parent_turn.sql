-- The turn a turn is nested in: a sub-agent that made model calls of its own is judged as
-- a turn of that agent inside its lead's (processors/assembly/delegations.py). '' for a
-- turn of its own, and for every row written before this column. Rates, alerts and the
-- turn list count turns of their own only (collector/store/rates.py).
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS ParentTurnId String DEFAULT '';
