-- The verdict history of every turn. `turns` is a ReplacingMergeTree: merges keep only a
-- turn's latest version, so the history is copied here as each version is inserted.
-- Replacing on (Tenant, TurnId, Version) collapses a version written twice (a replay
-- after a restart) and keeps distinct versions apart.
CREATE TABLE IF NOT EXISTS {db}.turn_versions
(
    Tenant LowCardinality(String),
    TurnId String,
    Version UInt32,
    Verdict LowCardinality(String),
    Kinds Array(LowCardinality(String)),
    StartedAt DateTime64(3),
    ValidatedAt DateTime64(3)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(StartedAt)
ORDER BY (Tenant, TurnId, Version)
TTL toDateTime(StartedAt) + INTERVAL {retention_days} DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.turn_versions_mv TO {db}.turn_versions AS
SELECT Tenant, TurnId, Version, Verdict, Kinds, StartedAt, ValidatedAt
FROM {db}.turns;
