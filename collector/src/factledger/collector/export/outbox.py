"""The verdict outbox: every configured target's lane (`export.lane`), fed by the
verdict writer and drained by one delivery thread per target.

`append` is the only call on the judging path: it encodes each record once and hands it
to every lane, which writes it to that lane's segment files and queues it; it never waits
for a target. Lanes live in `<data dir>/export/<target>/`, private like the write-ahead
log of requests (verdict texts are redacted, but a turn's ids and findings are still the
tenant's). Long-lived, with the OTel lifecycle: `start()`, `force_flush(timeout)`,
`shutdown(timeout)` (idempotent, safe before `start`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from factledger.collector.alerts.gauges import prometheus_labels
from factledger.collector.export import codec
from factledger.collector.export.base import ExportTarget, VerdictRecord
from factledger.collector.export.lane import DROPPED, RETRIED, SENT, Lane, LaneLimits
from factledger.collector.metric_catalogue import CATALOGUE, EXPORT_DROP_REASONS
from factledger.collector.metrics import GaugeFamily, Metrics
from factledger.collector.private_dirs import private_directory
from factledger.collector.thread_names import named

PENDING = "factledger_export_pending"
LAG = "factledger_export_lag_seconds"


@dataclass(frozen=True)
class TargetStatus:
    """One target's counts since start and its pending records now."""

    target: str
    sent: int
    retried: int
    dropped: dict[str, int]
    pending: int
    lag_seconds: float


class Outbox:
    """Durable, bounded delivery of verdict records to `targets` (names unique)."""

    def __init__(
        self,
        targets: Sequence[ExportTarget],
        directory: Path,
        limits: LaneLimits,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._metrics = metrics
        self._clock = clock
        if targets:  # no directory for a service that exports nothing
            private_directory(directory)
        self._lanes = [Lane(t, directory / t.name, limits, metrics, clock=clock) for t in targets]
        self._threads: list[threading.Thread] = []
        self._started = False
        self._closed = False

    @property
    def targets(self) -> list[str]:
        return [lane.name for lane in self._lanes]

    def append(self, records: Sequence[VerdictRecord]) -> None:
        """Accept `records` for every target. Called on the verdict writer's thread after
        their rows are stored; never blocks on a target and never raises for one (a lane
        that cannot take a record counts it as dropped)."""
        if not self._lanes:
            return
        accepted_at = self._clock()
        for record in records:
            body = codec.encode(record, accepted_at)
            for lane in self._lanes:
                lane.append(record, body, accepted_at)

    def start(self) -> None:
        """Start one delivery thread per target (records left from before go first)."""
        if self._started or self._closed:
            return
        self._started = True
        for lane in self._lanes:
            thread = threading.Thread(
                target=named(f"export-{lane.name}", lane.run),
                name=f"factledger-export-{lane.name}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def force_flush(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is pending (delivered or dropped); False at `timeout`."""
        deadline = time.monotonic() + timeout
        while any(lane.pending for lane in self._lanes):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop delivering (what is pending stays on disk for the next start) and shut
        the targets down; idempotent."""
        if self._closed:
            return
        self._closed = True
        for lane in self._lanes:
            lane.stop()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for lane in self._lanes:
            lane.close()
            lane.target.shutdown()

    def status(self) -> list[TargetStatus]:
        """Per target, in settings order."""
        return [
            TargetStatus(
                target=lane.name,
                sent=int(self._metrics.value(SENT, target=lane.name)),
                retried=int(self._metrics.value(RETRIED, target=lane.name)),
                dropped={
                    reason: int(self._metrics.value(DROPPED, reason=reason, target=lane.name))
                    for reason in EXPORT_DROP_REASONS
                },
                pending=lane.pending,
                lag_seconds=lane.lag_seconds(),
            )
            for lane in self._lanes
        ]

    def metric_families(self) -> tuple[GaugeFamily, ...]:
        """`factledger_export_pending{target}` and `factledger_export_lag_seconds{target}`."""
        lanes = self._lanes
        pending = tuple((prometheus_labels(target=x.name), float(x.pending)) for x in lanes)
        lag = tuple((prometheus_labels(target=x.name), x.lag_seconds()) for x in lanes)
        return (
            GaugeFamily(PENDING, CATALOGUE[PENDING].help, pending),
            GaugeFamily(LAG, CATALOGUE[LAG].help, lag),
        )
