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
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

from ..metrics import MAX_LABEL_CHARS, MAX_LABEL_VALUES, OTHER, GaugeFamily, Sample
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


class RejectRateGauges:
    """`families()` gives `factledger_reject_rate{model}`, `factledger_flag_rate{model}` and
    `factledger_window_turns{model}` over the last `window`, each sample also carrying
    `labels` (a tenant, where there are several). Thread-safe."""

    def __init__(
        self,
        store: Store,
        tenant: str,
        window: timedelta = timedelta(minutes=15),
        *,
        labels: Mapping[str, str] | None = None,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._tenant = tenant
        self._labels = dict(labels or {})
        # The folding rule: one window, no baseline; the other fields do not matter here.
        self._rule = AlertRule(name="metrics", window=window, baseline_windows=0)
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._cached: tuple[float, tuple[GaugeFamily, ...]] | None = None

    def families(self) -> tuple[GaugeFamily, ...]:
        with self._lock:
            if self._cached is not None and self._clock() - self._cached[0] < self._cache_seconds:
                return self._cached[1]
            families = self._compute()
            self._cached = (self._clock(), families)
            return families

    def _compute(self) -> tuple[GaugeFamily, ...]:
        span = windows(self._rule, self._wall())
        try:
            series = self._store.reject_rate(
                self._tenant, group_by="model", bucket="1m", since=span.start, until=span.end
            )
        except (StoreError, ValueError) as exc:
            log.warning("reject-rate gauges left out of the scrape: %s", exc)
            return ()
        rejected, _ = fold(self._rule, series, span)
        flagged, _ = fold(
            AlertRule(name="metrics", window=self._rule.window, baseline_windows=0, verdict="flag"),
            series,
            span,
        )
        minutes = int(self._rule.window.total_seconds()) // 60
        over = f"over the last {minutes} minutes, per model"
        return (
            GaugeFamily(
                "factledger_reject_rate",
                f"Rejected over validated turns {over}.",
                self._samples(rejected, lambda s: s.rate),
            ),
            GaugeFamily(
                "factledger_flag_rate",
                f"Turns flagged for human verification over validated turns {over}.",
                self._samples(flagged, lambda s: s.rate),
            ),
            GaugeFamily(
                "factledger_window_turns",
                f"Validated turns {over}.",
                self._samples(rejected, lambda s: float(s.turns)),
            ),
        )

    def _samples(
        self, stats: dict[str, GroupStats], read: Callable[[GroupStats], float]
    ) -> tuple[Sample, ...]:
        bounded = bounded_groups(stats)
        return tuple(
            (prometheus_labels(**self._labels, model=key), read(bounded[key]))
            for key in sorted(bounded)
        )


def bounded_groups(
    stats: Mapping[str, GroupStats], limit: int = MAX_LABEL_VALUES
) -> dict[str, GroupStats]:
    """Model names come from senders: the `limit` groups with the most turns keep their
    name (cut to `MAX_LABEL_CHARS`), the rest are summed into one `OTHER` group."""
    ranked = sorted(stats, key=lambda key: (-stats[key].turns, key))
    kept: dict[str, GroupStats] = {}
    for key in ranked:
        label = key[:MAX_LABEL_CHARS]
        if label not in kept and len(kept) >= limit:
            label = OTHER
        seen = kept.get(label, GroupStats())
        kept[label] = GroupStats(seen.turns + stats[key].turns, seen.hits + stats[key].hits)
    return kept
