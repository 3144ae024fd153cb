"""The store's recovery reads: tenants with recent spans, traces owed a verdict (oldest
first), the verdicts already stored for traces and their spans, read back to be judged."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from factledger.processors.assembly.assembler import PriorVerdict

from ..rows import epoch_ms
from .connection import Connection
from .sql import (
    MAX_OPEN_TRACES,
    MAX_SPAN_ROWS,
    SPAN_IDS_PER_QUERY,
    SPAN_SELECT,
    TRACE_IDS_PER_QUERY,
    check_limit,
    unaliased_span,
)


class RecoveryQueries(Connection):
    """What a restart or a late span needs read back."""

    def recent_tenants(self, since: datetime) -> list[str]:
        """The tenants with spans ingested at or after `since`, sorted."""
        rows = self._query(
            "SELECT DISTINCT Tenant FROM {db}.spans"
            " WHERE IngestedAt >= fromUnixTimestamp64Milli({since_ms:Int64}) ORDER BY Tenant",
            {"since_ms": epoch_ms(since)},
        )
        return [row["Tenant"] for row in rows]

    def owed_traces(
        self,
        tenant: str,
        since: datetime,
        limit: int = MAX_OPEN_TRACES,
        after: OwedTrace | None = None,
    ) -> list[OwedTrace]:
        """Traces with a span ingested at or after `since` that no verdict holds (its id
        is in no turn's SpanIds): turns in flight when the process stopped, the next turn
        of a trace, late spans; also a judged trace with a span outside every turn (such
        as an HTTP server span around the agent): reading it back judges nothing again.
        Oldest first (by the first ingest of such a span, then trace id), at most `limit`,
        from just past `after`: a caller pages through every owed trace however old, and
        one whose spans are judged meanwhile only moves later.

        Verdicts count from `since` on: one that holds a span ingested since then was
        made after it."""
        check_limit("limit", limit, MAX_OPEN_TRACES)
        start = after or OwedTrace(-1, "")
        rows = self._query(
            "SELECT TraceId, toUnixTimestamp64Milli(min(IngestedAt)) AS first_ms"
            " FROM {db}.spans WHERE Tenant = {tenant:String}"
            " AND IngestedAt >= fromUnixTimestamp64Milli({since_ms:Int64})"
            # GLOBAL: on a cluster a trace's spans and its turns may sit on different shards.
            " AND SpanId GLOBAL NOT IN"
            " (SELECT arrayJoin(SpanIds) FROM {db}.turns WHERE Tenant = {tenant:String}"
            "  AND ValidatedAt >= fromUnixTimestamp64Milli({since_ms:Int64}))"
            " GROUP BY TraceId"
            " HAVING (first_ms, TraceId) > ({after_ms:Int64}, {after_trace:String})"
            " ORDER BY first_ms, TraceId LIMIT {limit:UInt32}",
            {
                "tenant": tenant,
                "since_ms": epoch_ms(since),
                "limit": limit,
                "after_ms": start.first_ingested_ms,
                "after_trace": start.trace_id,
            },
        )
        return [OwedTrace(int(row["first_ms"]), row["TraceId"]) for row in rows]

    def verdicts_for(
        self, tenant: str, trace_ids: Sequence[str], span_ids: Sequence[str], since: datetime
    ) -> list[PriorVerdict]:
        """The latest verdict of each turn of the given traces (any age), and of each turn
        validated at or after `since` that holds one of `span_ids` (a turn joined from
        several traces is stored under its first), sorted by turn id: what judging them
        again must go on from."""
        latest: dict[str, PriorVerdict] = {}

        def keep(where: str, params: dict[str, Any]) -> None:
            for row in self._query(
                "SELECT TurnId, max(Version) AS version, argMax(SpanIds, Version) AS span_ids"
                f" FROM {{db}}.turns WHERE Tenant = {{tenant:String}} AND {where}"
                " GROUP BY TurnId",
                {"tenant": tenant, **params},
            ):
                known = latest.get(row["TurnId"])
                if known is None or row["version"] > known.version:
                    latest[row["TurnId"]] = PriorVerdict(
                        tenant, row["TurnId"], int(row["version"]), tuple(row["span_ids"])
                    )

        traces = sorted(set(trace_ids))
        for start in range(0, len(traces), TRACE_IDS_PER_QUERY):
            batch = traces[start : start + TRACE_IDS_PER_QUERY]
            keep("TraceId IN {trace_ids:Array(String)}", {"trace_ids": batch})
        spans = sorted(set(span_ids))
        for start in range(0, len(spans), SPAN_IDS_PER_QUERY):
            keep(
                "ValidatedAt >= fromUnixTimestamp64Milli({since_ms:Int64})"
                " AND hasAny(SpanIds, {span_ids:Array(String)})",
                {
                    "since_ms": epoch_ms(since),
                    "span_ids": spans[start : start + SPAN_IDS_PER_QUERY],
                },
            )
        return [latest[turn_id] for turn_id in sorted(latest)]

    def spans_for_traces(self, tenant: str, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Every span of the given traces, once each, ordered by trace then start time, as
        rows keyed by SPAN_COLUMNS for `rows.span_from_row`. At most MAX_SPAN_ROWS."""
        unique = sorted(set(trace_ids))
        spans: list[dict[str, Any]] = []
        for start in range(0, len(unique), TRACE_IDS_PER_QUERY):
            batch = unique[start : start + TRACE_IDS_PER_QUERY]
            rows = self._query(
                f"SELECT {SPAN_SELECT} FROM {{db}}.spans WHERE Tenant = {{tenant:String}}"
                " AND TraceId IN {trace_ids:Array(String)}"
                " ORDER BY TraceId, Timestamp, SpanId LIMIT 1 BY TraceId, SpanId"
                " LIMIT {limit:UInt32}",
                {"tenant": tenant, "trace_ids": batch, "limit": MAX_SPAN_ROWS - len(spans)},
            )
            spans.extend(unaliased_span(row) for row in rows)
            if len(spans) >= MAX_SPAN_ROWS:
                break
        return spans


class OwedTrace(NamedTuple):
    """A trace owed a verdict, and where it stands in `Store.owed_traces`' order."""

    first_ingested_ms: int
    """IngestedAt of its earliest span that no verdict holds."""
    trace_id: str
