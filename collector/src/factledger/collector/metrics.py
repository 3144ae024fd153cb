"""Counters, gauges and histograms of the service, in the Prometheus text format.

Every drop is a counter with a reason; nothing is lost silently. Thread-safe: the
receiver, the span writer and the turn processor all count into one registry.

Label values may come from senders (a model name, a finding kind, a drop reason): every
counter family keeps at most `MAX_LABEL_VALUES` distinct values per label, each cut to
`MAX_LABEL_CHARS`; a value past the bound is counted under `OTHER`, so a sender cannot
grow a scrape (or Prometheus' series count) without limit.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

LabelKey = tuple[tuple[str, str], ...]

MAX_LABEL_VALUES = 200
"""Distinct values one label of one family may take; more than a model zoo or a reason
table needs, far fewer than a sender making up names would reach."""
MAX_LABEL_CHARS = 100
"""A label value is cut to this length (model names are shorter; a pasted prompt is not)."""
OTHER = "other"
"""The value that stands for every value past `MAX_LABEL_VALUES`."""


class LabelBound:
    """Maps label values onto a bounded set: the first `limit` distinct values of each
    (family, label) keep their name, later ones become `OTHER`. Thread-safe."""

    def __init__(self, limit: int = MAX_LABEL_VALUES, chars: int = MAX_LABEL_CHARS) -> None:
        self._limit = limit
        self._chars = chars
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], set[str]] = {}

    def __call__(self, family: str, name: str, value: str) -> str:
        value = value[: self._chars]
        with self._lock:
            seen = self._seen.setdefault((family, name), set())
            if value in seen:
                return value
            if len(seen) >= self._limit:
                return OTHER
            seen.add(value)
            return value

    def key(self, family: str, labels: Mapping[str, str]) -> LabelKey:
        return tuple(sorted((k, self(family, k, v)) for k, v in labels.items()))


@dataclass
class _Histogram:
    help_text: str
    bounds: tuple[float, ...]
    """Upper bounds of the buckets, ascending; +Inf is implied."""
    counts: list[int] = field(default_factory=list)
    """Observations per bucket (not cumulative), +Inf last."""
    total: float = 0.0


class Metrics:
    """A small registry of labelled counters, gauges read at render time and histograms."""

    def __init__(self, *, label_values: int = MAX_LABEL_VALUES) -> None:
        self._lock = threading.Lock()
        self._bound = LabelBound(label_values)
        self._counters: dict[str, dict[LabelKey, float]] = {}
        self._help: dict[str, str] = {}
        self._gauges: dict[str, tuple[str, Callable[[], float]]] = {}
        self._histograms: dict[str, _Histogram] = {}

    def describe(self, name: str, help_text: str) -> None:
        self._help[name] = help_text

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        """Add `amount` to counter `name`; label values are bounded (module docstring)."""
        key = self._bound.key(name, labels)
        with self._lock:
            series = self._counters.setdefault(name, {})
            series[key] = series.get(key, 0.0) + amount

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """Register a gauge whose value is read when metrics are rendered."""
        self._gauges[name] = (help_text, read)

    def histogram(self, name: str, help_text: str, bounds: Sequence[float]) -> None:
        """Register a histogram with these bucket upper bounds (ascending, finite)."""
        ordered = tuple(sorted(set(bounds)))
        if not ordered or not all(math.isfinite(b) for b in ordered):
            raise ValueError(f"histogram {name} needs finite bucket bounds, got {bounds!r}")
        with self._lock:
            self._histograms[name] = _Histogram(help_text, ordered, [0] * (len(ordered) + 1))

    def observe(self, name: str, *values: float) -> None:
        """Count each value in the registered histogram `name` (KeyError if unknown)."""
        with self._lock:
            histogram = self._histograms[name]
            for value in values:
                histogram.counts[bisect.bisect_left(histogram.bounds, value)] += 1
                histogram.total += value

    def observations(self, name: str) -> list[tuple[float, int]]:
        """(upper bound, cumulative count) per bucket of histogram `name`, +Inf last."""
        return self._snapshot(name)[1]

    def _snapshot(self, name: str) -> tuple[float, list[tuple[float, int]]]:
        """The sum and the cumulative buckets of histogram `name`, read at one moment."""
        with self._lock:
            histogram = self._histograms[name]
            counts = list(histogram.counts)
            total = histogram.total
            bounds = [*histogram.bounds, math.inf]
        return total, list(zip(bounds, itertools.accumulate(counts), strict=True))

    def value(self, name: str, **labels: str) -> float:
        key = tuple(sorted((k, v[:MAX_LABEL_CHARS]) for k, v in labels.items()))
        with self._lock:
            return self._counters.get(name, {}).get(key, 0.0)

    def gauge_value(self, name: str) -> float:
        """The registered gauge `name` read now (KeyError if unknown)."""
        return float(self._gauges[name][1]())

    def total(self, name: str) -> float:
        with self._lock:
            return sum(self._counters.get(name, {}).values())

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            counters = {name: dict(series) for name, series in self._counters.items()}
        for name in sorted(set(counters) | set(self._help) - set(self._gauges)):
            lines.append(f"# HELP {name} {self._help.get(name, name)}")
            lines.append(f"# TYPE {name} counter")
            for key, value in sorted(counters.get(name, {}).items()):
                lines.append(f"{name}{_labels(dict(key))} {_number(value)}")
        for name, (help_text, read) in sorted(self._gauges.items()):
            try:
                value = read()
            except Exception:  # a gauge must never break the scrape
                continue
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} gauge")
            lines.append(f"{name} {_number(value)}")
        for name in sorted(self._histograms):
            lines.extend(self._render_histogram(name))
        return "\n".join(lines) + "\n"

    def _render_histogram(self, name: str) -> list[str]:
        total, buckets = self._snapshot(name)
        lines = [f"# HELP {name} {self._histograms[name].help_text}", f"# TYPE {name} histogram"]
        for bound, cumulative in buckets:
            le = "+Inf" if math.isinf(bound) else _number(bound)
            lines.append(f'{name}_bucket{{le="{le}"}} {cumulative}')
        lines.append(f"{name}_sum {_number(total)}")
        lines.append(f"{name}_count {buckets[-1][1]}")
        return lines


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)
