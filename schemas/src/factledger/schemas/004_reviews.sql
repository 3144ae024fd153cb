-- Human reviews of turns (the labels of the review queue). Append-only: a second review
-- of a turn adds a row; readers show every review, newest last.
CREATE TABLE IF NOT EXISTS {db}.reviews
(
    Tenant LowCardinality(String),
    TurnId String,
    ReviewId String,
    Label LowCardinality(String),
    Note String CODEC(ZSTD(1)),
    Reviewer String,
    CreatedAt DateTime64(3) CODEC(Delta, ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(CreatedAt)
ORDER BY (Tenant, TurnId, CreatedAt)
TTL toDateTime(CreatedAt) + INTERVAL {retention_days} DAY;
