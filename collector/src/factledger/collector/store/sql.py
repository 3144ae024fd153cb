"""What the store's queries share: limits, SQL fragments and the shaping of their rows.

Values a caller passes never appear here: every fragment takes them as bound parameters
(`{tenant:String}`); `{db}` is the validated database name, filled in by the connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..rows import from_epoch_ms

GroupBy = Literal["model", "agent", "service", "kind"]
Bucket = Literal["1m", "5m", "1h", "1d"]

BUCKET_SECONDS: dict[str, int] = {"1m": 60, "5m": 300, "1h": 3600, "1d": 86400}
GROUP_COLUMNS: dict[str, str] = {"model": "Model", "agent": "AgentName", "service": "ServiceName"}

MAX_LIST_LIMIT = 1_000
MAX_SERIES_POINTS = 10_000
"""Buckets one reject-rate series may hold (a 1m bucket over a week is 10,080)."""
MAX_OPEN_TRACES = 10_000
MAX_SPAN_ROWS = 100_000
TRACE_IDS_PER_QUERY = 1_000
SPAN_IDS_PER_QUERY = 10_000

# The spans columns as `rows.span_from_row` and `views.span_view` read them: times as
# Unix nanoseconds. Aliases differ from column names (an alias equal to the column it
# wraps would be cyclic), `unaliased_span` renames them back.
SPAN_SELECT = """
    toUnixTimestamp64Nano(Timestamp) AS ts_ns, Tenant, TraceId, SpanId, ParentSpanId,
    TraceState, SpanName, SpanKind, ServiceName, ResourceAttributes, ScopeName, ScopeVersion,
    SpanAttributes, Duration, StatusCode, StatusMessage,
    arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp) AS event_ts_ns,
    Events.Name AS event_names, Events.Attributes AS event_attributes, AttributeTypes,
    toUnixTimestamp64Milli(IngestedAt) AS ingested_ms
"""
# A tenant's spans by id ({span_ids:Array(String)}) between {started_ms} and {ended_ms}.
# SpanId is not in the sort key: the time window prunes the daily partitions to the
# turns' days (a day's margin for clock skew between services).
SPANS_BY_ID = (
    f"SELECT {SPAN_SELECT} FROM {{db}}.spans"
    " WHERE Tenant = {tenant:String} AND SpanId IN {span_ids:Array(String)}"
    " AND Timestamp >= fromUnixTimestamp64Milli({started_ms:Int64}) - INTERVAL 1 DAY"
    " AND Timestamp <= fromUnixTimestamp64Milli({ended_ms:Int64}) + INTERVAL 1 DAY"
    " ORDER BY Timestamp, SpanId LIMIT 1 BY TraceId, SpanId"
)
SPAN_ALIASES = {
    "ts_ns": "Timestamp",
    "event_ts_ns": "Events.Timestamp",
    "event_names": "Events.Name",
    "event_attributes": "Events.Attributes",
    "ingested_ms": "IngestedAt",
}

# The latest version of every turn of a tenant, as "not a superseded version": the rows of
# every version below a turn's highest. Only re-judged turns (Version > 1) contribute, so
# the set stays small; the set of every turn's latest version (a GROUP BY over the whole
# table, probed row by row) took about a second per million turns. Duplicate rows of one
# version (a retried insert) are removed by `LIMIT 1 BY TurnId` in the queries using this.
LATEST = """
    (TurnId, Version) NOT IN (
        SELECT TurnId, arrayJoin(range(toUInt32(max(Version)))) FROM {db}.turns
        WHERE Tenant = {tenant:String} AND Version > 1 GROUP BY TurnId
    )
"""

# A tenant's reviews that still count: every review no withdrawal names (an undo). A turn's
# label is the latest of these; a turn without any is back in the review queue.
LIVE_REVIEWS = """
    SELECT * FROM {db}.reviews WHERE Tenant = {tenant:String} AND ReviewId NOT IN (
        SELECT ReviewId FROM {db}.review_withdrawals WHERE Tenant = {tenant:String}
    )
"""

MAX_REVIEW_EXPORT = 1_000
"""Labelled turns one export page holds at most (newest labels first): each comes with all
its spans, so a page is bounded and a whole tenant takes many logged requests."""
TURN_IDS_PER_QUERY = 1_000

TURN_SUMMARY = """
    TurnId, TraceId, ConversationId, ServiceName, AgentName, Model,
    toUnixTimestamp64Milli(StartedAt) AS started_ms, toUnixTimestamp64Milli(EndedAt) AS ended_ms,
    Verdict, Kinds, ReplyPreview, Version, ClockSkewSeconds,
    toUnixTimestamp64Milli(AgentStartedAt) AS agent_started_ms
"""


def turn_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    """A turn as lists show it, from a row selected with TURN_SUMMARY."""
    return {
        "turn_id": row["TurnId"],
        "trace_id": row["TraceId"],
        "conversation_id": row["ConversationId"],
        "service": row["ServiceName"],
        "agent": row["AgentName"],
        "model": row["Model"],
        "started_at": from_epoch_ms(row["started_ms"]),
        "ended_at": from_epoch_ms(row["ended_ms"]),
        "verdict": row["Verdict"],
        "kinds": list(row["Kinds"]),
        "reply_preview": row["ReplyPreview"],
        "version": int(row["Version"]),
        # Only a turn counted at its receive time has one (collector/judge/clock_skew.py).
        "clock_skew_seconds": float(row["ClockSkewSeconds"]) or None,
    }


def unaliased_span(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row selected with SPAN_SELECT under the spans table's own column names."""
    return {SPAN_ALIASES.get(name, name): value for name, value in row.items()}


def check_limit(name: str, value: int, most: int) -> None:
    """Raise ValueError unless 0 <= value <= most."""
    if not 0 <= value <= most:
        raise ValueError(f"{name} must be 0..{most}, not {value}")
