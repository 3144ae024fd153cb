"""Reject-rate figures for Prometheus, read from the store at scrape time.

The figures cover the last `window` (whole minutes, ending with the current one) per
model, and are cached for `cache_seconds` so that several scrapers or a fast scrape
interval cost one store query. A store that fails leaves the figures out of the scrape
(the scrape itself never fails because of them).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from ..store import Store, StoreError
from .evaluator import GroupStats
from .rules import AlertRule
from .stats import fold, windows

log = logging.getLogger("factledger.alerts")

CACHE_SECONDS = 15.0


def prometheus_labels(**labels: str) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def gauge_family(name: str, help_text: str, samples: Iterable[tuple[str, float]]) -> list[str]:
    """The text lines of one gauge: HELP, TYPE and `name{labels} value` per sample."""
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
    lines.extend(f"{name}{labels} {value!r}" for labels, value in samples)
    return lines


class RejectRateGauges:
    """`render()` gives `factledger_reject_rate{model}`, `factledger_flag_rate{model}` and
    `factledger_window_turns{model}` over the last `window`. Thread-safe."""

    def __init__(
        self,
        store: Store,
        tenant: str,
        window: timedelta = timedelta(minutes=15),
        *,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._tenant = tenant
        # The folding rule: one window, no baseline; the other fields do not matter here.
        self._rule = AlertRule(name="metrics", window=window, baseline_windows=0)
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._cached: tuple[float, str] | None = None

    def render(self) -> str:
        with self._lock:
            if self._cached is not None and self._clock() - self._cached[0] < self._cache_seconds:
                return self._cached[1]
            text = self._compute()
            self._cached = (self._clock(), text)
            return text

    def _compute(self) -> str:
        span = windows(self._rule, self._wall())
        try:
            series = self._store.reject_rate(
                self._tenant, group_by="model", bucket="1m", since=span.start, until=span.end
            )
        except (StoreError, ValueError) as exc:
            log.warning("reject-rate gauges left out of the scrape: %s", exc)
            return ""
        rejected, _ = fold(self._rule, series, span)
        flagged, _ = fold(
            AlertRule(name="metrics", window=self._rule.window, baseline_windows=0, verdict="flag"),
            series,
            span,
        )
        minutes = int(self._rule.window.total_seconds()) // 60
        over = f"over the last {minutes} minutes, per model"
        lines = gauge_family(
            "factledger_reject_rate",
            f"Rejected over validated turns {over}.",
            _samples(rejected, lambda s: s.rate),
        )
        lines += gauge_family(
            "factledger_flag_rate",
            f"Turns flagged for human verification over validated turns {over}.",
            _samples(flagged, lambda s: s.rate),
        )
        lines += gauge_family(
            "factledger_window_turns",
            f"Validated turns {over}.",
            _samples(rejected, lambda s: float(s.turns)),
        )
        return "\n".join(lines) + "\n"


def _samples(
    stats: dict[str, GroupStats], read: Callable[[GroupStats], float]
) -> list[tuple[str, float]]:
    return [(prometheus_labels(model=key), read(stats[key])) for key in sorted(stats)]
