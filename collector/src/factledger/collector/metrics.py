"""Counters, gauges and histograms of the service, in the Prometheus text format.

Every drop is a counter with a reason; nothing is lost silently. Thread-safe: the
receiver, the span writer and the turn processor all count into one registry.

Every family is declared in a `Catalogue` (`collector.metric_catalogue.CATALOGUE` by
default): a name it lacks, or a label it does not list, raises `UndeclaredMetric`, and
every declared family is on the scrape from start-up.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from factledger.collector.metric_catalogue import CATALOGUE, Catalogue, Family, FamilyType
from factledger.processors.errors import FactLedgerError

LabelKey = tuple[tuple[str, str], ...]

MAX_LABEL_VALUES = 200
"""Distinct values one label of one family may take; more than a model zoo or a reason
table needs, far fewer than a sender making up names would reach."""
MAX_LABEL_CHARS = 100
"""A label value is cut to this length (model names are shorter; a pasted prompt is not)."""
OTHER = "other"
"""The value that stands for every value past `MAX_LABEL_VALUES`."""


Sample = tuple[str, float]
"""The rendered labels (`{a="b"}`) and the value of one sample."""


@dataclass(frozen=True)
class GaugeFamily:
    """Samples of one declared gauge read elsewhere at scrape time (the alert loops')."""

    name: str
    help_text: str
    samples: tuple[Sample, ...]


class UndeclaredMetric(FactLedgerError, KeyError):
    """A metric name, or a label of it, that the catalogue does not declare."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


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
    bounds: tuple[float, ...]
    """Upper bounds of the buckets, ascending; +Inf is implied."""
    counts: list[int] = field(default_factory=list)
    """Observations per bucket (not cumulative), +Inf last."""
    total: float = 0.0


class Metrics:
    """A registry of labelled counters, gauges read at render time and histograms, every
    one declared in `catalogue`."""

    def __init__(
        self, catalogue: Catalogue = CATALOGUE, *, label_values: int = MAX_LABEL_VALUES
    ) -> None:
        self._catalogue = catalogue
        self._lock = threading.Lock()
        self._bound = LabelBound(label_values)
        self._counters: dict[str, dict[LabelKey, float]] = {}
        self._gauges: dict[str, Callable[[], float]] = {}
        self._histograms: dict[str, _Histogram] = {}
        for family in catalogue:
            if family.type == "histogram":
                self._histograms[family.name] = _histogram(family)

    def _declared(self, name: str, type_: FamilyType, labels: Iterable[str] = ()) -> Family:
        family = self._catalogue.get(name)
        if family is None or family.type != type_:
            raise UndeclaredMetric(f"{type_} {name} is not in the metric catalogue")
        unknown = set(labels) - set(family.labels)
        if unknown:
            raise UndeclaredMetric(f"{name} declares no label {', '.join(sorted(unknown))}")
        return family

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        """Add `amount` to counter `name`; label values are bounded (module docstring)."""
        self._declared(name, "counter", labels)
        key = self._bound.key(name, labels)
        with self._lock:
            series = self._counters.setdefault(name, {})
            series[key] = series.get(key, 0.0) + amount

    def gauge(self, name: str, read: Callable[[], float]) -> None:
        """Read gauge `name` with `read` when metrics are rendered."""
        self._declared(name, "gauge")
        self._gauges[name] = read

    def observe(self, name: str, *values: float) -> None:
        """Count each value in histogram `name`."""
        self._declared(name, "histogram")
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
        self._declared(name, "histogram")
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
        return float(self._gauges[name]())

    def total(self, name: str) -> float:
        with self._lock:
            return sum(self._counters.get(name, {}).values())

    def render(self, read_elsewhere: Iterable[GaugeFamily] = ()) -> str:
        """Every declared family in the Prometheus text format, with the samples of
        `read_elsewhere` (families of one name merged: several tenants' alert loops each
        give their own, and a name may be described only once per scrape)."""
        elsewhere: dict[str, GaugeFamily] = {}
        for read in read_elsewhere:
            self._declared(read.name, "gauge")
            seen = elsewhere.get(read.name)
            elsewhere[read.name] = (
                read
                if seen is None
                else GaugeFamily(read.name, seen.help_text, seen.samples + read.samples)
            )
        with self._lock:
            counters = {name: dict(series) for name, series in self._counters.items()}
        declared = sorted(self._catalogue, key=lambda family: family.name)
        lines: list[str] = []
        for family in (f for f in declared if f.type == "counter"):
            series = counters.get(family.name, {})
            for key in family.zero_series():
                series.setdefault(key, 0.0)
            lines += _head(family.name, family.help, "counter")
            for key, value in sorted(series.items()):
                lines.append(f"{family.name}{_labels(dict(key))} {_number(value)}")
        for family in (f for f in declared if f.type == "gauge"):
            lines += self._render_gauge(family, elsewhere.get(family.name))
        for family in (f for f in declared if f.type == "histogram"):
            lines.extend(self._render_histogram(family))
        return "\n".join(lines) + "\n"

    def _render_gauge(self, family: Family, elsewhere: GaugeFamily | None) -> list[str]:
        if elsewhere is not None:
            head = _head(family.name, elsewhere.help_text, "gauge")
            return head + [
                f"{family.name}{labels} {value!r}" for labels, value in elsewhere.samples
            ]
        lines = _head(family.name, family.help, "gauge")
        read = self._gauges.get(family.name)
        if read is None:
            return lines
        try:
            value = read()
        except Exception:  # a gauge must never break the scrape
            return lines
        return [*lines, f"{family.name} {_number(value)}"]

    def _render_histogram(self, family: Family) -> list[str]:
        name = family.name
        total, buckets = self._snapshot(name)
        lines = _head(name, family.help, "histogram")
        for bound, cumulative in buckets:
            le = "+Inf" if math.isinf(bound) else _number(bound)
            lines.append(f'{name}_bucket{{le="{le}"}} {cumulative}')
        lines.append(f"{name}_sum {_number(total)}")
        lines.append(f"{name}_count {buckets[-1][1]}")
        return lines


def _histogram(family: Family) -> _Histogram:
    ordered = tuple(sorted(set(family.buckets)))
    if not ordered or not all(math.isfinite(b) for b in ordered):
        raise ValueError(f"histogram {family.name} needs finite bucket bounds, got {ordered!r}")
    return _Histogram(ordered, [0] * (len(ordered) + 1))


def _head(name: str, help_text: str, type_: FamilyType) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {type_}"]


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)
