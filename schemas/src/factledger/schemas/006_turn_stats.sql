-- Turns, rejected and flagged turns per tenant, model, agent, service and minute of
-- StartedAt. The view sees every version of a turn, so a re-judged turn counts under
-- each verdict it ever had (once per minute: the states are distinct-TurnId sets).
-- Read with uniqExactMerge / uniqExactIfMerge over turn_stats_1m_data.
CREATE TABLE IF NOT EXISTS {db}.turn_stats_1m_data
(
    Tenant LowCardinality(String),
    Model LowCardinality(String),
    AgentName LowCardinality(String),
    ServiceName LowCardinality(String),
    Minute DateTime,
    turns AggregateFunction(uniqExact, String),
    rejected AggregateFunction(uniqExactIf, String, UInt8),
    flagged AggregateFunction(uniqExactIf, String, UInt8)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(Minute)
ORDER BY (Tenant, Minute, Model, AgentName, ServiceName)
TTL Minute + INTERVAL {retention_days} DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.turn_stats_1m TO {db}.turn_stats_1m_data AS
SELECT
    Tenant,
    Model,
    AgentName,
    ServiceName,
    toStartOfMinute(toDateTime(StartedAt)) AS Minute,
    uniqExactState(TurnId) AS turns,
    uniqExactIfState(TurnId, Verdict = 'reject') AS rejected,
    uniqExactIfState(TurnId, Verdict = 'flag') AS flagged
FROM {db}.turns
GROUP BY Tenant, Model, AgentName, ServiceName, Minute;
