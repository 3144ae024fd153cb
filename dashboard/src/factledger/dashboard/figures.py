"""The overview's numbers, from the API's reject-rate series: windows and buckets, rows
for the charts, totals per group, and the groups whose rate rose most against their
previous window. Pure functions; times are aware UTC datetimes or the API's ISO strings.

A chart point is only as good as the turns behind it, so every row says how far to
trust it (`state`): a bucket still filling is `filling`, one with fewer than
MIN_TURNS_PER_POINT turns is `few`, the rest `settled`; each rate also carries its 95%
Wilson interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from math import sqrt
from typing import Any, Literal

from factledger.dashboard.client import unix_ns
from factledger.dashboard.highlight import kind_label

Bucket = Literal["1m", "5m", "1h", "1d"]
PointState = Literal["settled", "few", "filling"]

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
MIN_TURNS_PER_POINT = 5
"""A finished bucket with fewer turns is drawn faint and off the line: with two turns a
rate is 0%, 50% or 100%, which says nothing about a trend."""
WILSON_Z = 1.96
"""The normal quantile of the rates' 95% intervals."""
SECONDS_FORMAT_SPAN = timedelta(minutes=5)
"""Axes at most this long label seconds: their ticks are seconds apart."""


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
    """A d3 time format for an axis spanning `window`: seconds within a few minutes,
    then hours within a day, then days."""
    if window <= SECONDS_FORMAT_SPAN:
        return "%H:%M:%S"
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
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """One flat row per (key, bucket) at or after `since`: what the time charts plot.

    Keys: key, t (bucket start), t_end (bucket end, or `now` while the bucket is still
    filling), t_mid (the middle of t..t_end, where a rate is drawn), turns, rejected,
    flagged, rate and flag_rate with their 95% intervals (rate_low, rate_high, flag_low,
    flag_high), partial (the bucket ends after `now`) and state (see the module)."""
    flat: list[dict[str, Any]] = []
    for one in series:
        for point in one["points"]:
            t = parse_time(point["t"])
            if since is not None and t < since:
                continue
            turns = int(point["turns"])
            rejected = int(point["rejected"])
            flagged = int(point["flagged"])
            end = t + BUCKETS[bucket]
            partial = now is not None and end > now
            if partial and now is not None:
                end = max(now, t)
            rate_low, rate_high = wilson_interval(rejected, turns)
            flag_low, flag_high = wilson_interval(flagged, turns)
            flat.append(
                {
                    "key": str(one["key"]),
                    "t": t.isoformat(),
                    "t_end": end.isoformat(),
                    "t_mid": (t + (end - t) / 2).isoformat(),
                    "turns": turns,
                    "rejected": rejected,
                    "flagged": flagged,
                    "rate": float(point["rate"]),
                    "flag_rate": flagged / turns if turns else 0.0,
                    "rate_low": rate_low,
                    "rate_high": rate_high,
                    "flag_low": flag_low,
                    "flag_high": flag_high,
                    "partial": partial,
                    "state": point_state(turns, partial=partial),
                }
            )
    return flat


def point_state(turns: int, *, partial: bool) -> PointState:
    """How far a bucket's rate can be trusted: `filling` while the bucket is still open,
    `few` below MIN_TURNS_PER_POINT turns, else `settled`."""
    if partial:
        return "filling"
    return "few" if turns < MIN_TURNS_PER_POINT else "settled"


def wilson_interval(hits: int, turns: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of the rate hits/turns (0..1 when there are no turns):
    unlike rate ± z·se it stays inside 0..1 and is wide, not zero, at 0/2 or 2/2."""
    if turns <= 0:
        return 0.0, 1.0
    p = hits / turns
    scale = 1 + z * z / turns
    centre = (p + z * z / (2 * turns)) / scale
    half = z * sqrt(p * (1 - p) / turns + z * z / (4 * turns * turns)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def fitted_domain(
    flat: Iterable[Mapping[str, Any]], window: Window, bucket: Bucket
) -> tuple[datetime, datetime]:
    """The time axis of the current window, fitted to its data: it starts at the first
    bucket with turns (not at the window's start, so a minute of data is not squeezed
    into a line at the edge of an hour), ends at the window's end, and spans at least one
    bucket. Later gaps stay on the axis: a quiet stretch shows as one."""
    starts = [parse_time(r["t"]) for r in flat if int(r["turns"]) > 0]
    start = max(window.split, min(starts)) if starts else window.split
    return start, max(window.end, start + BUCKETS[bucket])


def newest_bucket(series: Iterable[Mapping[str, Any]]) -> datetime | None:
    """The start of the newest bucket with turns in any series, or None."""
    starts = [parse_time(point["t"]) for one in series for point in one["points"] if point["turns"]]
    return max(starts) if starts else None


def fitting_window(newest: datetime | None, now: datetime, bucket: Bucket = "1h") -> str:
    """The name of the shortest window from DEFAULT_WINDOW up that holds the newest
    turn, given the start of the newest `bucket` with turns (DEFAULT_WINDOW when there
    are none, or the longest window when even it ends before them)."""
    names = list(WINDOWS)
    candidates = names[names.index(DEFAULT_WINDOW) :]
    if newest is None:
        return DEFAULT_WINDOW
    for name in candidates:
        if newest >= now - WINDOWS[name]:
            return name
    return candidates[-1]


def series_labels(
    parts: Iterable[Totals], measure: Literal["rate", "flag_rate", "turns"]
) -> dict[str, str]:
    """Each key's legend label with the figure behind its line: `gpt-4o · 27.1% of 48
    turns` for a rate, `gpt-4o · 48 turns` for volume."""
    labels: dict[str, str] = {}
    for part in parts:
        count = f"{part.turns:,} turn{'s' if part.turns != 1 else ''}"
        if measure == "turns":
            labels[part.key] = f"{part.key} · {count}"
        else:
            labels[part.key] = f"{part.key} · {getattr(part, measure):.1%} of {count}"
    return labels


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
    row per (kind, severity) with a count above zero, for a stacked bar; `label` is how
    the kind reads on the page."""
    out: list[dict[str, Any]] = []
    for total in totals(series, since):
        for severity, count in (("reject", total.rejected), ("flag", total.flagged)):
            if count:
                out.append(
                    {
                        "kind": total.key,
                        "label": kind_label(total.key),
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
