-- Withdrawn reviews: a reviewer's undo. Reviews stay append-only; a row here names one
-- review that no longer counts, so the turn's label falls back to its previous review,
-- or the turn returns to the review queue when it has none. Sharded like `reviews`
-- (by turn), so a turn's reviews and their withdrawals live on one shard.
CREATE TABLE IF NOT EXISTS {db}.review_withdrawals
(
    Tenant LowCardinality(String),
    TurnId String,
    ReviewId String,
    Reviewer String,
    WithdrawnAt DateTime64(3) CODEC(Delta, ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(WithdrawnAt)
ORDER BY (Tenant, TurnId, ReviewId)
TTL toDateTime(WithdrawnAt) + INTERVAL {retention_days} DAY;

ALTER TABLE {db}.review_withdrawals MODIFY SETTING non_replicated_deduplication_window = 1000
