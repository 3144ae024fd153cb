"""The store's reject-rate series (per model, agent, service or finding kind and time
bucket) and its row counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..rows import epoch_ms, from_epoch_ms
from .connection import Connection
from .sql import BUCKET_SECONDS, GROUP_COLUMNS, LATEST, MAX_SERIES_POINTS, Bucket, GroupBy


class RateQueries(Connection):
    """Rates over time, and counts of what is stored."""

    def reject_rate(
        self,
        tenant: str,
        *,
        group_by: GroupBy,
        bucket: Bucket,
        since: datetime,
        until: datetime,
    ) -> list[dict[str, Any]]:
        """Rejected and flagged turns over all turns, per group and time bucket.

        `since`/`until` are widened to whole buckets (UTC). Returns one series per key,
        sorted by key: `{key, points: [{t, turns, rejected, flagged, rate}]}` with `t` the
        bucket start (aware UTC). Turns of their own only: a sub-agent's turn nested in
        another is left out (`_nested_counts`). Like the view it reads, a turn counts under
        every verdict any of its versions had. For `group_by="kind"`, `turns` is every turn
        in the bucket and `rejected`/`flagged` the turns with a finding of that kind at that
        severity; each kind has a point for every bucket that has turns.
        Raises ValueError for an unknown group_by or bucket, or too many buckets.
        """
        if bucket not in BUCKET_SECONDS:
            raise ValueError(f"bucket must be one of {sorted(BUCKET_SECONDS)}, not {bucket!r}")
        if group_by not in (*GROUP_COLUMNS, "kind"):
            raise ValueError(f"group_by must be model, agent, service or kind, not {group_by!r}")
        width = BUCKET_SECONDS[bucket]
        first = epoch_ms(since) // 1000 // width * width
        end = -(-epoch_ms(until) // (width * 1000)) * width
        if (end - first) // width > MAX_SERIES_POINTS:
            raise ValueError(f"more than {MAX_SERIES_POINTS} {bucket} buckets; widen the bucket")
        params = {"tenant": tenant, "width": width, "first": first, "end": end}
        window = (
            "Tenant = {tenant:String} AND Minute >= toDateTime({first:Int64})"
            " AND Minute < toDateTime({end:Int64})"
        )
        bucket_expr = "intDiv(toUInt32(Minute), {width:UInt32}) * {width:UInt32}"
        if group_by != "kind":
            rows = self._query(
                f"SELECT {GROUP_COLUMNS[group_by]} AS key, {bucket_expr} AS t,"
                " uniqExactMerge(turns) AS n_turns, uniqExactIfMerge(rejected) AS n_rejected,"
                " uniqExactIfMerge(flagged) AS n_flagged"
                f" FROM {{db}}.turn_stats_1m_data WHERE {window}"
                " GROUP BY key, t ORDER BY key, t",
                params,
            )
            return _series(_without(rows, self._nested_counts(GROUP_COLUMNS[group_by], params)))
        totals = {
            row["t"]: row["n_turns"]
            for row in _without(
                self._query(
                    f"SELECT '' AS key, {bucket_expr} AS t, uniqExactMerge(turns) AS n_turns,"
                    " 0 AS n_rejected, 0 AS n_flagged"
                    f" FROM {{db}}.turn_stats_1m_data WHERE {window} GROUP BY t",
                    params,
                ),
                self._nested_counts("''", params),
            )
        }
        by_kind = self._query(
            "SELECT Kind AS key,"
            " intDiv(toUInt32(toDateTime(StartedAt)), {width:UInt32}) * {width:UInt32} AS t,"
            " uniqExactIf(TurnId, Severity = 'reject') AS n_rejected,"
            " uniqExactIf(TurnId, Severity = 'flag') AS n_flagged"
            " FROM {db}.findings WHERE Tenant = {tenant:String}"
            " AND StartedAt >= fromUnixTimestamp64Milli({first:Int64} * 1000)"
            " AND StartedAt < fromUnixTimestamp64Milli({end:Int64} * 1000)"
            f" AND TurnId NOT IN ({_NESTED_IDS}) GROUP BY key, t",
            params,
        )
        found = {(row["key"], row["t"]): row for row in by_kind}
        rows = [
            {
                "key": key,
                "t": t,
                "n_turns": n_turns,
                "n_rejected": found.get((key, t), {}).get("n_rejected", 0),
                "n_flagged": found.get((key, t), {}).get("n_flagged", 0),
            }
            for key in sorted({key for key, _ in found})
            for t, n_turns in sorted(totals.items())
        ]
        return _series(rows)

    def _nested_counts(self, key: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The nested turns' share of the view's counts, per `key` and bucket: the view
        counts every turn, and a turn nested in another counts only there. Exact to
        subtract: a nested turn's id is never that of a turn of its own, and it lands in
        the same (key, bucket) as in the view (buckets are whole minutes)."""
        return self._query(
            f"SELECT {key} AS key,"
            " intDiv(toUInt32(toDateTime(StartedAt)), {width:UInt32}) * {width:UInt32} AS t,"
            " uniqExact(TurnId) AS n_turns,"
            " uniqExactIf(TurnId, Verdict = 'reject') AS n_rejected,"
            " uniqExactIf(TurnId, Verdict = 'flag') AS n_flagged"
            " FROM {db}.turns WHERE Tenant = {tenant:String} AND ParentTurnId != ''"
            " AND StartedAt >= fromUnixTimestamp64Milli({first:Int64} * 1000)"
            " AND StartedAt < fromUnixTimestamp64Milli({end:Int64} * 1000)"
            " GROUP BY key, t",
            params,
        )

    # --- counts ---------------------------------------------------------------------------

    def span_count(self, tenant: str) -> int:
        """Distinct (TraceId, SpanId) of the tenant: a resent span counts once."""
        return self._scalar(
            "SELECT uniqExact(TraceId, SpanId) FROM {db}.spans WHERE Tenant = {tenant:String}",
            {"tenant": tenant},
        )

    def turn_count(self, tenant: str) -> int:
        """Distinct turns of the tenant (every version of a turn counts once)."""
        return self._scalar(
            "SELECT uniqExact(TurnId) FROM {db}.turns WHERE Tenant = {tenant:String}",
            {"tenant": tenant},
        )

    def finding_count(self, tenant: str) -> int:
        """Findings of the latest version of each of the tenant's turns."""
        return self._scalar(
            "SELECT uniqExact(TurnId, Version, Idx) FROM {db}.findings"
            f" WHERE Tenant = {{tenant:String}} AND {LATEST}",
            {"tenant": tenant},
        )


_NESTED_IDS = "SELECT TurnId FROM {db}.turns WHERE Tenant = {tenant:String} AND ParentTurnId != ''"


def _without(
    rows: Sequence[Mapping[str, Any]], nested: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """`rows` (key, t and counts) less the nested turns' counts; a point left with no
    turn is dropped, as if those turns were never counted."""
    if not nested:
        return list(rows)
    less = {(row["key"], row["t"]): row for row in nested}
    out: list[Mapping[str, Any]] = []
    for row in rows:
        minus = less.get((row["key"], row["t"]))
        if minus is not None:
            counts = ("n_turns", "n_rejected", "n_flagged")
            row = {**row, **{n: int(row[n]) - int(minus[n]) for n in counts}}
        if int(row["n_turns"]) > 0:
            out.append(row)
    return out


def _series(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    series: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        turns = int(row["n_turns"])
        rejected = int(row["n_rejected"])
        series.setdefault(row["key"], []).append(
            {
                "t": from_epoch_ms(int(row["t"]) * 1000),
                "turns": turns,
                "rejected": rejected,
                "flagged": int(row["n_flagged"]),
                "rate": rejected / turns if turns else 0.0,
            }
        )
    return [{"key": key, "points": points} for key, points in sorted(series.items())]
