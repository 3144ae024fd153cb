-- Raw spans, one row per span, modelled on the OTel Collector ClickHouse exporter's
-- `otel_traces`. Attribute values are stored as strings (see README.md); AttributeTypes
-- records the original type of every non-string value so a row decodes back to the
-- exact span. A client retry that resends a span collapses: TraceId and SpanId end the
-- sort key of a ReplacingMergeTree (queries still count distinct ids: merges are lazy).
CREATE TABLE IF NOT EXISTS {db}.spans
(
    Timestamp DateTime64(9) CODEC(Delta, ZSTD(1)),
    Tenant LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested
    (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    AttributeTypes Map(LowCardinality(String), LowCardinality(String)) CODEC(ZSTD(1)),
    IngestedAt DateTime64(3) CODEC(Delta, ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_ingested_at IngestedAt TYPE minmax GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toDate(Timestamp)
ORDER BY (Tenant, ServiceName, SpanName, toDateTime(Timestamp), TraceId, SpanId)
TTL toDateTime(Timestamp) + INTERVAL {retention_days} DAY
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1;
