-- One row per verdict version of a turn. A span arriving after the verdict re-opens the
-- turn and adds a row with the next Version; ReplacingMergeTree(Version) keeps the
-- highest one after merges, and queries pick it explicitly (see README.md).
CREATE TABLE IF NOT EXISTS {db}.turns
(
    Tenant LowCardinality(String),
    TurnId String,
    Version UInt32,
    TraceId String,
    ConversationId String,
    ServiceName LowCardinality(String),
    AgentName LowCardinality(String),
    Model LowCardinality(String),
    Provider LowCardinality(String),
    StartedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    EndedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    ValidatedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    Verdict LowCardinality(String),
    Kinds Array(LowCardinality(String)),
    MaxScore Float32,
    HasClass5 UInt8,
    UserMessage String CODEC(ZSTD(3)),
    Reply String CODEC(ZSTD(3)),
    ToolCalls String CODEC(ZSTD(3)),
    SpanIds Array(String) CODEC(ZSTD(1)),
    Validators Array(String) CODEC(ZSTD(1)),
    ReplyPreview String CODEC(ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_conversation_id ConversationId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_started_at StartedAt TYPE minmax GRANULARITY 1
)
ENGINE = ReplacingMergeTree(Version)
PARTITION BY toYYYYMM(StartedAt)
ORDER BY (Tenant, TurnId)
TTL toDateTime(StartedAt) + INTERVAL {retention_days} DAY;
