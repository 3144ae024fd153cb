-- Turns from agents whose clocks are hours off count at the time they were received
-- (collector/judge/clock_skew.py): StartedAt is then that time, so charts, rates and
-- alerts see them; AgentStartedAt keeps the agent's own start and ClockSkewSeconds the
-- skew (agent clock minus the service's, positive when ahead; 0 for a clock that holds).
-- Rows written before these columns read as a clock that held.
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS AgentStartedAt DateTime64(3) DEFAULT StartedAt CODEC(Delta, ZSTD(1)) AFTER ReplyPreview;
ALTER TABLE {db}.turns ADD COLUMN IF NOT EXISTS ClockSkewSeconds Float32 DEFAULT 0 AFTER AgentStartedAt;
