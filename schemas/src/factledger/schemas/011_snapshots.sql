-- Evidence snapshots (seed 003): every document a fetch-type tool or a file read
-- retrieved, stored once per tenant and content. Hash is the SHA-256 (hex) of the result
-- text as the tool returned it; Content is that text redacted. Url, Tool, CallId, TurnId,
-- TraceId and FetchedAt name the read that stored it (the first of a merge's rows: reads
-- pick the earliest FetchedAt). Size is the raw text's length in bytes.
CREATE TABLE IF NOT EXISTS {db}.snapshots
(
    Tenant LowCardinality(String),
    Hash String,
    UrlOrPath String CODEC(ZSTD(1)),
    Tool LowCardinality(String),
    CallId String,
    TurnId String,
    TraceId String,
    FetchedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    Size UInt64,
    Content String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(FetchedAt)
ORDER BY (Tenant, Hash)
TTL toDateTime(FetchedAt) + INTERVAL {retention_days} DAY;

-- What one verdict version of a turn holds as evidence: the snapshots its reads made
-- (a document also read by another turn is listed by both) and, per cited source of the
-- reply, the snapshot that backs it ('' for none). SpanStart/SpanEnd are offsets in the
-- stored (redacted) reply. One row per version, so a turn's evidence is one row to read.
CREATE TABLE IF NOT EXISTS {db}.turn_evidence
(
    Tenant LowCardinality(String),
    TurnId String,
    Version UInt32,
    StartedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    Snapshots Nested
    (
        Hash String,
        UrlOrPath String,
        Tool LowCardinality(String),
        CallId String,
        FetchedAt DateTime64(3),
        Size UInt64
    ) CODEC(ZSTD(1)),
    Citations Nested
    (
        Cited String,
        SpanStart Int32,
        SpanEnd Int32,
        SnapshotHash String
    ) CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(StartedAt)
ORDER BY (Tenant, TurnId, Version)
TTL toDateTime(StartedAt) + INTERVAL {retention_days} DAY;

ALTER TABLE {db}.snapshots MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.turn_evidence MODIFY SETTING non_replicated_deduplication_window = 1000
