-- What the sources of truth answered about the names of a verdict version: one row per
-- subject (Idx = its position), written with the version the answers made. A later
-- version of the turn repeats the answers it still applies, so the latest version's rows
-- are the whole story. FindingIdx is the finding of that version the answer is about, -1
-- for none (a refuted finding is withdrawn; a short SHA no finding named).
CREATE TABLE IF NOT EXISTS {db}.verifications
(
    Tenant LowCardinality(String),
    TurnId String,
    Version UInt32,
    Idx UInt16,
    SubjectKind LowCardinality(String),
    Name String CODEC(ZSTD(1)),
    ClaimedAbsent Bool,
    SpanStart Int32,
    SpanEnd Int32,
    FindingIdx Int32,
    FindingKind LowCardinality(String),
    Outcome LowCardinality(String),
    Source String CODEC(ZSTD(1)),
    Query String CODEC(ZSTD(1)),
    Answer String CODEC(ZSTD(1)),
    Reason LowCardinality(String),
    CheckedAt DateTime64(3),
    DurationMs Float32,
    StartedAt DateTime64(3) CODEC(Delta, ZSTD(1))
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(StartedAt)
ORDER BY (Tenant, TurnId, Version, Idx)
TTL toDateTime(StartedAt) + INTERVAL {retention_days} DAY;

-- As for the other tables written by the pipeline (008_deduplication.sql).
ALTER TABLE {db}.verifications MODIFY SETTING non_replicated_deduplication_window = 1000
