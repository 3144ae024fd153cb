"""Webhook delivery on its own thread, with retries and a record of every attempt.

`submit` only enqueues (it never waits on the network), so a receiver that is down slows
neither ingest nor rule evaluation. One worker thread sends notices in due order; a
failure that may pass (no answer, a timeout, 408/425/429, 5xx) is tried again after
`backoff`, then twice that, and so on, up to `attempts` tries in all; any other answer
is final. Every attempt is handed to `record` (the alert loop writes it, the URL
redacted, to the `alert_deliveries` table). The queue is bounded: a notice that does not
fit is dropped and counted, never silently lost.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import httpx

from ..metrics import Metrics
from ..redaction import Redactor
from .rules import DeliverySettings, redact_url
from .webhook_targets import Resolve, refusal, system_resolve

log = logging.getLogger("factledger.alerts")

MAX_PENDING = 1_000
"""Notices waiting to be sent or retried, at most."""
MAX_ERROR_CHARS = 500
_MAX_ANSWER_CHARS = 16_384
"""Of a receiver's answer, the part redacted (the record keeps its first 200 characters)."""
_RETRYABLE_STATUS = frozenset({408, 425, 429})
DELIVERIES = "factledger_alert_deliveries_total"


@dataclass(frozen=True)
class DeliveryAttempt:
    """One try at sending one notice. `status_code` is 0 when nothing answered."""

    alert_id: str
    target: str
    attempt: int
    ok: bool
    status_code: int
    error: str
    at: datetime


@dataclass(frozen=True, order=True)
class _Pending:
    due: float
    seq: int
    alert_id: str = field(compare=False)
    url: str = field(compare=False)
    body: bytes = field(compare=False)
    attempt: int = field(compare=False, default=1)


class _Refused(Exception):
    """A target no notice may go to (`webhook_targets.refusal`): final, never retried."""


def retryable(status_code: int) -> bool:
    """Whether an answer with this status may turn out differently later (0: no answer)."""
    return status_code == 0 or status_code >= 500 or status_code in _RETRYABLE_STATUS


class Notifier:
    """Sends JSON bodies to webhooks in the background. `start()` before `submit`;
    `shutdown()` is idempotent and abandons retries still waiting (they are counted)."""

    def __init__(
        self,
        record: Callable[[DeliveryAttempt], None],
        settings: DeliverySettings | None = None,
        *,
        metrics: Metrics | None = None,
        max_pending: int = MAX_PENDING,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        transport: httpx.BaseTransport | None = None,
        redact: Callable[[str], str] | None = None,
        resolve: Resolve = system_resolve,
    ) -> None:
        self._record = record
        # A receiver's answer (an error page, a proxy's dump) may quote credentials: it is
        # recorded and logged as the redaction rules leave it.
        self._redact = redact or Redactor.default().text
        self._settings = settings or DeliverySettings()
        self._metrics = metrics
        self._max_pending = max_pending
        self._clock = clock
        self._wall = wall_clock
        self._transport = transport
        self._resolve = resolve
        self._cond = threading.Condition()
        self._heap: list[_Pending] = []
        self._in_flight = 0
        self._seq = itertools.count()
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> int:
        """Notices waiting to be sent or retried, plus the one being sent."""
        with self._cond:
            return len(self._heap) + self._in_flight

    def start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stopping:
                return
            self._thread = threading.Thread(
                target=self._run, name="factledger-alert-notifier", daemon=True
            )
            self._thread.start()

    def submit(self, alert_id: str, url: str, payload: Mapping[str, Any]) -> bool:
        """Queue one notice; False (and counted as dropped) when full or shut down."""
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        with self._cond:
            if self._stopping or len(self._heap) >= self._max_pending:
                accepted = False
            else:
                heapq.heappush(
                    self._heap, _Pending(self._clock(), next(self._seq), alert_id, url, body)
                )
                self._cond.notify_all()
                accepted = True
        if not accepted:
            self._count("dropped")
            log.warning(
                "alert notice %s to %s dropped: delivery queue full", alert_id, redact_url(url)
            )
        return accepted

    def force_flush(self, timeout: float = 30.0) -> bool:
        """Wait until nothing is pending (retries included); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._heap or self._in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
        return True

    def shutdown(self, timeout: float = 10.0) -> None:
        with self._cond:
            if self._stopping:
                return
            self._stopping = True
            abandoned = len(self._heap)
            self._heap.clear()
            self._cond.notify_all()
            thread = self._thread
        if abandoned:
            self._count("dropped", abandoned)
            log.warning("%d alert notices abandoned at shutdown", abandoned)
        if thread is not None:
            thread.join(timeout)

    # --- worker ---------------------------------------------------------------------------

    def _run(self) -> None:
        timeout = self._settings.timeout.total_seconds()
        headers = {"User-Agent": "factledger-alerts"}
        with httpx.Client(timeout=timeout, headers=headers, transport=self._transport) as client:
            while (item := self._next()) is not None:
                try:
                    self._deliver(client, item)
                finally:
                    with self._cond:
                        self._in_flight -= 1
                        self._cond.notify_all()

    def _next(self) -> _Pending | None:
        with self._cond:
            while not self._stopping:
                if self._heap:
                    wait = self._heap[0].due - self._clock()
                    if wait <= 0:
                        self._in_flight += 1
                        return heapq.heappop(self._heap)
                    self._cond.wait(wait)
                else:
                    self._cond.wait()
            return None

    def _deliver(self, client: httpx.Client, item: _Pending) -> None:
        status, error = 0, ""
        refused = refusal(item.url, self._resolve)
        try:
            if refused is not None:
                raise _Refused(refused)
            response = client.post(
                item.url, content=item.body, headers={"Content-Type": "application/json"}
            )
            status = response.status_code
            if not 200 <= status < 300:
                # Redacted before it is cut, so no secret is cut short of its shape.
                error = f"HTTP {status}: {self._redact(response.text[:_MAX_ANSWER_CHARS])[:200]}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {self._redact(str(exc))}"
        except _Refused as exc:
            error = f"refused: {exc}"
        ok = 200 <= status < 300
        attempt = DeliveryAttempt(
            alert_id=item.alert_id,
            target=item.url,
            attempt=item.attempt,
            ok=ok,
            status_code=status,
            error=error[:MAX_ERROR_CHARS],
            at=self._wall(),
        )
        try:
            self._record(attempt)
        except Exception:  # a lost record must not stop delivery
            log.exception("could not record a delivery attempt of alert %s", item.alert_id)
        if ok:
            self._count("ok")
            return
        if refused is None and retryable(status) and item.attempt < self._settings.attempts:
            self._count("retry")
            delay = self._settings.backoff.total_seconds() * 2 ** (item.attempt - 1)
            retry = replace(
                item, due=self._clock() + delay, seq=next(self._seq), attempt=item.attempt + 1
            )
            with self._cond:
                if not self._stopping:
                    heapq.heappush(self._heap, retry)
            return
        self._count("failed")
        log.warning(
            "alert %s: delivery to %s failed after %d attempts: %s",
            item.alert_id,
            redact_url(item.url),
            item.attempt,
            error,
        )

    def _count(self, outcome: str, amount: int = 1) -> None:
        if self._metrics is not None:
            self._metrics.inc(DELIVERIES, float(amount), outcome=outcome)
