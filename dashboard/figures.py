"""The overview's numbers, from the API's reject-rate series: windows and buckets, rows
for the charts, totals per group, and the groups whose rate rose most against their
previous window. Pure functions; times are aware UTC datetimes or the API's ISO strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from factledger.dashboard.client import unix_ns

Bucket = Literal["1m", "5m", "1h", "1d"]

BUCKETS: dict[Bucket, timedelta] = {
    "1m": timedelta(minutes=1),
    "5m": timedelta(minutes=5),
    "1h": timedelta(hours=1),
    "1d": timedelta(days=1),
}
WINDOWS: dict[str, timedelta] = {
    "15 minutes": timedelta(minutes=15),
    "1 hour": timedelta(hours=1),
    "6 hours": timedelta(hours=6),
    "24 hours": timedelta(days=1),
    "7 days": timedelta(days=7),
    "30 days": timedelta(days=30),
}
DEFAULT_WINDOW = "1 hour"
MAX_POINTS = 720
"""Buckets one window may hold on a chart (30 days of hours)."""
DEFAULT_POINTS = 200
MIN_TURNS_FOR_RISE = 5
"""A group needs this many turns in each window to be ranked by its rise."""


@dataclass(frozen=True)
class Window:
    """The current window [split, end) and the previous one [start, split)."""

    start: datetime
    split: datetime
    end: datetime


@dataclass(frozen=True)
class Totals:
    key: str
    turns: int
    rejected: int
    flagged: int

    @property
    def rate(self) -> float:
        return self.rejected / self.turns if self.turns else 0.0

    @property
    def flag_rate(self) -> float:
        return self.flagged / self.turns if self.turns else 0.0


@dataclass(frozen=True)
class Change:
    """A group's reject rate in the current window against the previous one."""

    group: str
    key: str
    rate: float
    previous: float
    turns: int
    previous_turns: int

    @property
    def delta(self) -> float:
        return self.rate - self.previous


def buckets_for(window: timedelta) -> list[Bucket]:
    """The buckets that give a window between 2 and MAX_POINTS points, finest first."""
    return [name for name, width in BUCKETS.items() if 2 <= window / width <= MAX_POINTS]


def default_bucket(window: timedelta) -> Bucket:
    """The finest bucket that keeps the window at or under DEFAULT_POINTS points."""
    choices = buckets_for(window) or ["1d"]
    for name in choices:
        if window / BUCKETS[name] <= DEFAULT_POINTS:
            return name
    return choices[-1]


def time_format(window: timedelta) -> str:
    """A d3 time format for a window's axis: hours within a day, then days."""
    if window < timedelta(days=1):
        return "%H:%M"
    if window < timedelta(days=7):
        return "%a %H:%M"
    return "%b %d"


def window_bounds(now: datetime, window: timedelta, bucket: Bucket) -> Window:
    """The current window ends at `now` and starts on the bucket boundary at or before
    `now - window`; the previous window is as long and ends where the current starts."""
    width = BUCKETS[bucket].total_seconds()
    split_s = (now - window).timestamp() // width * width
    split = datetime.fromtimestamp(split_s, UTC)
    return Window(start=split - (now - split), split=split, end=now)


def parse_time(value: str | datetime) -> datetime:
    """An API timestamp (ISO 8601, `Z` allowed) as an aware UTC datetime."""
    if isinstance(value, datetime):
        parsed = value
    else:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def rows(
    series: Iterable[Mapping[str, Any]],
    since: datetime | None = None,
    bucket: Bucket = "1m",
) -> list[dict[str, Any]]:
    """One flat row per (key, bucket) at or after `since`: key, t (bucket start), t_end
    (bucket end), turns, rejected, flagged, rate, flag_rate (what the time charts plot)."""
    flat: list[dict[str, Any]] = []
    for one in series:
        for point in one["points"]:
            t = parse_time(point["t"])
            if since is not None and t < since:
                continue
            turns = int(point["turns"])
            flat.append(
                {
                    "key": str(one["key"]),
                    "t": t.isoformat(),
                    "t_end": (t + BUCKETS[bucket]).isoformat(),
                    "turns": turns,
                    "rejected": int(point["rejected"]),
                    "flagged": int(point["flagged"]),
                    "rate": float(point["rate"]),
                    "flag_rate": int(point["flagged"]) / turns if turns else 0.0,
                }
            )
    return flat


def stacked(flat: Sequence[Mapping[str, Any]], field: str = "turns") -> list[dict[str, Any]]:
    """`flat` rows with y0 and y1 added: each bucket's values of `field` stacked in key
    order, so a bar chart can draw the segments itself."""
    tops: dict[str, float] = {}
    out: list[dict[str, Any]] = []
    for row in sorted(flat, key=lambda r: (str(r["t"]), str(r["key"]))):
        base = tops.get(str(row["t"]), 0)
        top = base + row[field]
        tops[str(row["t"])] = top
        out.append({**row, "y0": base, "y1": top})
    return out


def totals(
    series: Iterable[Mapping[str, Any]],
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Totals]:
    """Turns, rejected and flagged per key over the buckets in [since, until), by key."""
    sums: dict[str, list[int]] = {}
    for one in series:
        counts = sums.setdefault(str(one["key"]), [0, 0, 0])
        for point in one["points"]:
            t = parse_time(point["t"])
            if (since is not None and t < since) or (until is not None and t >= until):
                continue
            counts[0] += int(point["turns"])
            counts[1] += int(point["rejected"])
            counts[2] += int(point["flagged"])
    return [Totals(key, *counts) for key, counts in sorted(sums.items())]


def overall(series: Sequence[Mapping[str, Any]], since: datetime, until: datetime) -> Totals:
    """All groups of a model/agent/service series together (each turn is in one group)."""
    parts = totals(series, since, until)
    return Totals(
        "all",
        sum(p.turns for p in parts),
        sum(p.rejected for p in parts),
        sum(p.flagged for p in parts),
    )


def rises(
    group: str,
    series: Sequence[Mapping[str, Any]],
    window: Window,
    *,
    min_turns: int = MIN_TURNS_FOR_RISE,
) -> list[Change]:
    """Each key's reject rate in the current window against the previous window, for the
    keys with at least `min_turns` turns in both (no baseline, no rise); largest rise
    first, then by key."""
    now = {t.key: t for t in totals(series, window.split, window.end)}
    before = {t.key: t for t in totals(series, window.start, window.split)}
    changes = [
        Change(
            group=group,
            key=key,
            rate=current.rate,
            previous=before[key].rate if key in before else 0.0,
            turns=current.turns,
            previous_turns=before[key].turns if key in before else 0,
        )
        for key, current in now.items()
        if current.turns >= min_turns and key in before and before[key].turns >= min_turns
    ]
    return sorted(changes, key=lambda c: (-c.delta, c.group, c.key))


def kind_rows(series: Iterable[Mapping[str, Any]], since: datetime) -> list[dict[str, Any]]:
    """Per finding kind, the turns it rejected and the turns it flagged since `since`, one
    row per (kind, severity) with a count above zero, for a stacked bar."""
    out: list[dict[str, Any]] = []
    for total in totals(series, since):
        for severity, count in (("reject", total.rejected), ("flag", total.flagged)):
            if count:
                out.append(
                    {
                        "kind": total.key,
                        "severity": severity,
                        "turns": count,
                        "all": total.rejected + total.flagged,
                    }
                )
    return out


def verdict_rows(parts: Iterable[Totals]) -> list[dict[str, Any]]:
    """Per key, its turns split into rejected, flagged and passed, for a stacked bar."""
    out: list[dict[str, Any]] = []
    for part in parts:
        passed = max(0, part.turns - part.rejected - part.flagged)
        for verdict, count in (
            ("reject", part.rejected),
            ("flag", part.flagged),
            ("pass", passed),
        ):
            out.append(
                {
                    "key": part.key,
                    "verdict": verdict,
                    "turns": count,
                    "share": count / part.turns if part.turns else 0.0,
                    "rate": part.rate,
                }
            )
    return out


def change_rows(changes: Iterable[Change]) -> list[dict[str, Any]]:
    """Rises as chart rows: label `model gpt-4o`, rate, previous, delta, direction."""
    return [
        {
            "label": f"{c.group} {c.key}",
            "group": c.group,
            "key": c.key,
            "rate": c.rate,
            "previous": c.previous,
            "delta": c.delta,
            "turns": c.turns,
            "previous_turns": c.previous_turns,
            "direction": "rose" if c.delta > 0 else "fell" if c.delta < 0 else "same",
        }
        for c in changes
    ]


def span_rows(spans: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A turn's spans as waterfall rows, by start time: label (`1. chat gpt-4o`), operation,
    start and end in milliseconds after the first span started, duration, error flag.
    A span too short to see gets a sliver of width (`end_ms` >= start_ms + 0.5% of the
    turn) while `duration_ms` keeps the true figure."""
    ordered = sorted(spans, key=lambda s: (unix_ns(s["start_time"]), str(s["span_id"])))
    if not ordered:
        return []
    origin = unix_ns(ordered[0]["start_time"])
    last = max(unix_ns(s["end_time"]) for s in ordered)
    sliver = max(last - origin, 1) / 1e6 * 0.005
    out: list[dict[str, Any]] = []
    for index, span in enumerate(ordered):
        start = (unix_ns(span["start_time"]) - origin) / 1e6
        end = (unix_ns(span["end_time"]) - origin) / 1e6
        attributes = span.get("attributes") or {}
        operation = attributes.get("gen_ai.operation.name") or str(span["name"]).split(" ")[0]
        out.append(
            {
                "label": f"{index + 1}. {span['name']}",
                "operation": operation,
                "start_ms": start,
                "end_ms": max(end, start + sliver),
                "duration_ms": float(span["duration_ms"]),
                "error": span.get("status_code") == "STATUS_CODE_ERROR",
                "span_id": span["span_id"],
            }
        )
    return out
