"""One target's lane of the outbox: its segment files, its pending records, its delivery.

Accepted means durable: `append` writes the record to the lane's write-ahead log
(`collector.ingest.wal`, one `os.write` into the page cache, so it survives `kill -9`)
before it is queued, and a delivered or dropped record is released there, so a restart
replays exactly what was accepted and not yet settled. Records leave in the order they
came, one batch at a time:

    delivered             counted sent, released
    TargetRefused         counted dropped{refused}, released: the target will never take it
    TargetUnavailable,    counted retried, sent again after a back-off (`export.backoff`)
    any other error
    older than give-up    counted dropped{gave_up}, released, before each attempt

The lane is bounded by records and by bytes: a record that does not fit is counted as
dropped{outbox_full} at once and never written. `step` is one attempt, with the clock
injected, so that tests drive it without the thread; `run` is the delivery thread's body.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from factledger.collector.export import codec
from factledger.collector.export.backoff import Backoff
from factledger.collector.export.base import (
    ExportTarget,
    TargetRefused,
    TargetUnavailable,
    VerdictRecord,
)
from factledger.collector.ingest.wal import WalUnavailable, WriteAheadLog
from factledger.collector.metrics import Metrics

log = logging.getLogger("factledger.export")

SENT = "factledger_export_sent_total"
RETRIED = "factledger_export_retried_total"
DROPPED = "factledger_export_dropped_total"

SEGMENT_BYTES = 8 * 1024 * 1024
SEGMENT_SECONDS = 60.0
"""A lane's segment is closed this long after it opened; once closed and delivered it is
deleted. Records are redacted (unlike raw requests), so a minute is short enough."""


@dataclass(frozen=True)
class LaneLimits:
    """The bounds and pacing of one lane (`[export]` in the settings file)."""

    max_records: int = 100_000
    max_bytes: int = 64 * 1024 * 1024
    give_up_seconds: float = 24 * 3600.0
    batch_size: int = 100
    deliver_timeout_seconds: float = 10.0
    backoff: Backoff = field(default_factory=Backoff)


@dataclass(frozen=True)
class _Pending:
    """A record waiting, kept encoded: the lane's memory is about `max_bytes`, whatever
    a decoded record would weigh."""

    seq: int
    accepted_at: float
    body: bytes


class Lane:
    """The outbox of one target. `append` is called from the verdict writer's thread and
    never blocks on the target; `step` and `run` on the lane's delivery thread alone.
    `clock` is wall seconds (acceptance times are kept across restarts)."""

    def __init__(
        self,
        target: ExportTarget,
        directory: Path,
        limits: LaneLimits,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.target = target
        self.name = target.name
        self._limits = limits
        self._metrics = metrics
        self._clock = clock
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._pending: deque[_Pending] = deque()
        self._bytes = 0
        self._failures = 0
        # Delivered records leave the disk at once: retain_seconds=0.
        self._wal = WriteAheadLog(
            directory,
            segment_bytes=SEGMENT_BYTES,
            retain_seconds=0.0,
            segment_seconds=SEGMENT_SECONDS,
        )
        self._replay()

    def _replay(self) -> None:
        last_unreadable = 0
        for stored in self._wal.replay():
            decoded = codec.decode(stored.body)
            if decoded is None:
                self._drop(1, "unreadable")
                last_unreadable = stored.seq
                continue
            self._pending.append(_Pending(stored.seq, decoded[1], stored.body))
            self._bytes += len(stored.body)
        if self._pending:
            log.info("export %s: %d records pending from before", self.name, len(self._pending))
        elif last_unreadable:
            self._wal.release(last_unreadable)

    # --- the writer's side ------------------------------------------------------------

    def append(self, record: VerdictRecord, body: bytes, accepted_at: float) -> bool:
        """Keep `record` (encoded as `body`) until it is delivered or dropped; False, and
        counted as dropped, when the lane is full or its disk refuses the write."""
        with self._lock:
            full = (
                len(self._pending) >= self._limits.max_records
                or self._bytes + len(body) > self._limits.max_bytes
            )
            if full:
                self._drop(1, "outbox_full")
                return False
            try:
                seq = self._wal.append(codec.CONTENT_TYPE, record.tenant, body)
            except (WalUnavailable, RuntimeError):  # a full disk, or the lane is closed
                self._drop(1, "outbox_unavailable")
                return False
            self._pending.append(_Pending(seq, accepted_at, body))
            self._bytes += len(body)
            self._ready.notify()
        return True

    # --- the delivery thread ----------------------------------------------------------

    def step(self) -> float | None:
        """One attempt: drop what is past the give-up time, else send one batch. Returns
        the seconds to wait before the next attempt (0: go on), None when nothing is
        pending."""
        with self._lock:
            batch = list(islice(self._pending, self._limits.batch_size))
        if not batch:
            return None
        cutoff = self._clock() - self._limits.give_up_seconds
        expired = 0
        while expired < len(batch) and batch[expired].accepted_at <= cutoff:
            expired += 1
        if expired:
            log.warning("export %s: gave up on %d records", self.name, expired)
            self._settle(expired, "gave_up")
            return 0.0
        records = []
        for pending in batch:
            decoded = codec.decode(pending.body)
            if decoded is None:
                break  # not what `append` is given (codec.encode's bytes); never sent
            records.append(decoded[0])
        if not records:
            self._settle(1, "unreadable")
            return 0.0
        try:
            self.target.deliver(records, self._limits.deliver_timeout_seconds)
        except TargetRefused as exc:
            log.warning("export %s refused %d records: %s", self.name, len(records), exc.reason)
            self._failures = 0
            self._settle(len(records), "refused")
            return 0.0
        except TargetUnavailable as exc:
            return self._retry(len(records), exc.reason, exc.retry_after_seconds)
        except Exception as exc:  # unclassified: retryable, as the OTel Collector has it
            log.exception("export %s failed", self.name)
            return self._retry(len(records), type(exc).__name__, None)
        self._failures = 0
        self._settle(len(records), None)
        return 0.0

    def run(self) -> None:
        """Deliver until `stop`: wait for records, attempt, back off as told."""
        while not self._stop.is_set():
            with self._lock:
                while not self._pending and not self._stop.is_set():
                    self._ready.wait()
            if self._stop.is_set():
                return
            delay = self.step()
            if delay:
                self._stop.wait(delay)

    def stop(self) -> None:
        """Wake the delivery thread and make it return (records stay on disk)."""
        with self._lock:
            self._stop.set()
            self._ready.notify_all()

    def close(self) -> None:
        """Close the segment files; call after the delivery thread returned."""
        self._wal.close()

    # --- state ------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def pending_bytes(self) -> int:
        return self._bytes

    def lag_seconds(self) -> float:
        """How long the oldest pending record has waited (0 when none waits)."""
        with self._lock:
            oldest = self._pending[0].accepted_at if self._pending else None
        return 0.0 if oldest is None else max(0.0, self._clock() - oldest)

    def _retry(self, count: int, reason: str, retry_after: float | None) -> float:
        self._failures += 1
        self._metrics.inc(RETRIED, count, target=self.name)
        delay = self._limits.backoff.delay(self._failures, retry_after)
        log.info("export %s: %s; %d records again in %.1fs", self.name, reason, count, delay)
        return delay

    def _settle(self, count: int, dropped: str | None) -> None:
        """The first `count` pending records are done: sent, or dropped for `dropped`."""
        with self._lock:
            last = 0
            for _ in range(count):
                done = self._pending.popleft()
                self._bytes -= len(done.body)
                last = done.seq
        if dropped is None:
            self._metrics.inc(SENT, count, target=self.name)
        else:
            self._drop(count, dropped)
        self._wal.release(last)

    def _drop(self, count: int, reason: str) -> None:
        self._metrics.inc(DROPPED, count, target=self.name, reason=reason)
