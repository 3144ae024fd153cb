"""Counters and gauges of the service, rendered in the Prometheus text format.

Every drop is a counter with a reason; nothing is lost silently. Thread-safe: the
receiver, the span writer and the turn processor all count into one registry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

LabelKey = tuple[tuple[str, str], ...]


class Metrics:
    """A small registry of labelled counters plus gauges read at render time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[LabelKey, float]] = {}
        self._help: dict[str, str] = {}
        self._gauges: dict[str, tuple[str, Callable[[], float]]] = {}

    def describe(self, name: str, help_text: str) -> None:
        self._help[name] = help_text

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            series = self._counters.setdefault(name, {})
            series[key] = series.get(key, 0.0) + amount

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """Register a gauge whose value is read when metrics are rendered."""
        self._gauges[name] = (help_text, read)

    def value(self, name: str, **labels: str) -> float:
        key = tuple(sorted(labels.items()))
        with self._lock:
            return self._counters.get(name, {}).get(key, 0.0)

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
        return "\n".join(lines) + "\n"


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)
