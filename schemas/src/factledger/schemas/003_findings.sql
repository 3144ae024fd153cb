-- One row per finding of a verdict version (Idx = position in the verdict). Empty
-- strings and -1 stand for "none": SpanStart/SpanEnd -1 when the finding has no offsets
-- in the reply, Score -1 when it carries no score.
CREATE TABLE IF NOT EXISTS {db}.findings
(
    Tenant LowCardinality(String),
    TurnId String,
    Version UInt32,
    Idx UInt16,
    Kind LowCardinality(String),
    Class LowCardinality(String),
    Severity LowCardinality(String),
    Message String CODEC(ZSTD(1)),
    Token String CODEC(ZSTD(1)),
    CheckedAgainst Array(String) CODEC(ZSTD(1)),
    SpanStart Int32,
    SpanEnd Int32,
    Validator LowCardinality(String),
    Score Float32,
    CallId String,
    Model LowCardinality(String),
    AgentName LowCardinality(String),
    StartedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    INDEX idx_started_at StartedAt TYPE minmax GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(StartedAt)
ORDER BY (Tenant, TurnId, Version, Idx)
TTL toDateTime(StartedAt) + INTERVAL {retention_days} DAY;
