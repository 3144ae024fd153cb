-- Alert lifecycle rows (one when an alert fires, one when it resolves, same AlertId)
-- and one row per webhook delivery attempt.
CREATE TABLE IF NOT EXISTS {db}.alerts
(
    Tenant LowCardinality(String),
    AlertId String,
    Rule LowCardinality(String),
    GroupKey String,
    State LowCardinality(String),
    Value Float64,
    Threshold Float64,
    Turns UInt64,
    FiredAt DateTime64(3),
    ResolvedAt Nullable(DateTime64(3)),
    Message String CODEC(ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(FiredAt)
ORDER BY (Tenant, AlertId, FiredAt)
TTL toDateTime(FiredAt) + INTERVAL {retention_days} DAY;

CREATE TABLE IF NOT EXISTS {db}.alert_deliveries
(
    Tenant LowCardinality(String),
    AlertId String,
    Target String,
    Attempt UInt16,
    Ok UInt8,
    StatusCode Int32,
    Error String CODEC(ZSTD(1)),
    At DateTime64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(At)
ORDER BY (Tenant, AlertId, At)
TTL toDateTime(At) + INTERVAL {retention_days} DAY;
