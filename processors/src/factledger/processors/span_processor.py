"""Validate turns inside the agent's own process: an OpenTelemetry SDK span processor.

    tracer_provider.add_span_processor(FactLedgerSpanProcessor(on_verdict=print))

`on_end` converts the ended span and puts it on a bounded queue without blocking; it
never raises (a full queue counts a drop). One daemon worker drains the queue into the
judging core (`judging.core`, the same as the service's), which judges each complete turn
with the runner; the worker hands `(turn, verdict)` to `on_verdict` on its thread, and an
exception there is counted, never propagated. Drops are named as in `judging.drops`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

from .assembly.assembler import AssembledTurn, Normalizer
from .judging.core import Judgement, JudgingCore
from .judging.drops import Drop
from .model import Verdict
from .runner import ValidationRunner, default_runner
from .spans import SpanEvent, SpanRecord

log = logging.getLogger("factledger.span_processor")

VerdictCallback = Callable[[AssembledTurn, Verdict], None]


def span_record_from_readable(span: ReadableSpan, *, tenant: str = "default") -> SpanRecord:
    """The SDK span as a `SpanRecord`: hex ids, plain attribute values, OTLP enum numbers."""
    context = span.context
    parent = span.parent
    scope = span.instrumentation_scope
    return SpanRecord(
        trace_id=format(context.trace_id, "032x") if context is not None else "",
        span_id=format(context.span_id, "016x") if context is not None else "",
        name=span.name,
        parent_span_id=format(parent.span_id, "016x") if parent is not None else "",
        # The SDK numbers kinds from INTERNAL = 0; OTLP from UNSPECIFIED = 0, INTERNAL = 1.
        kind=span.kind.value + 1,
        start_time_unix_nano=span.start_time or 0,
        end_time_unix_nano=span.end_time or 0,
        status_code=span.status.status_code.value,
        status_message=span.status.description or "",
        attributes=_plain(span.attributes),
        events=tuple(
            SpanEvent(e.name, e.timestamp or 0, _plain(e.attributes)) for e in span.events
        ),
        resource_attributes=_plain(span.resource.attributes),
        scope_name=scope.name if scope is not None else "",
        scope_version=(scope.version or "") if scope is not None else "",
        tenant=tenant,
    )


def _plain(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attributes:
        return {}
    return {
        k: list(v) if isinstance(v, Sequence) and not isinstance(v, str | bytes) else v
        for k, v in attributes.items()
    }


class _Flush:
    """A marker on the queue: the worker sets `done` once everything before it is handled.
    `open_turns`: judge every open turn, not only the due ones; `final`: then stop."""

    def __init__(self, *, open_turns: bool = False, final: bool = False) -> None:
        self.open_turns = open_turns
        self.final = final
        self.done = threading.Event()


class FactLedgerSpanProcessor(SpanProcessor):
    """Assembles the spans of this process into turns and judges each one.

    Thread-safe: `on_end` may be called from any thread; assembly, validation and the
    callback run on one worker thread. `shutdown` is idempotent and delivers every turn
    still open; `force_flush` waits until queued spans are assembled and due turns (with
    `judge_open_turns`, every open turn) delivered. `drops` counts what was not handled
    the ordinary way, by reason (`judging.drops.Drop`).
    """

    def __init__(
        self,
        on_verdict: VerdictCallback,
        runner: ValidationRunner | None = None,
        *,
        grace_seconds: float = 2.0,
        max_wait_seconds: float = 60.0,
        max_queue_size: int = 10_000,
        max_open_turns: int = 10_000,
        poll_seconds: float = 0.05,
        tenant: str = "default",
        normalizer: Normalizer | None = None,
    ) -> None:
        self._on_verdict = on_verdict
        self._tenant = tenant
        self._poll = poll_seconds
        self._queue: queue.Queue[SpanRecord | _Flush] = queue.Queue(maxsize=max_queue_size)
        self._core = JudgingCore(
            runner or default_runner(),
            grace_seconds=grace_seconds,
            max_wait_seconds=max_wait_seconds,
            max_open_turns=max_open_turns,
            normalizer=normalizer,
        )
        self._lock = threading.Lock()
        self._shut = False
        self._worker = threading.Thread(
            target=self._run, name="factledger-span-processor", daemon=True
        )
        self._worker.start()

    @property
    def drops(self) -> Mapping[str, int]:
        """Counters by reason, this processor's and its assembler's (a snapshot)."""
        return {reason.value: count for reason, count in self._core.drops.items()}

    # --- SpanProcessor -----------------------------------------------------------------

    def on_end(self, span: ReadableSpan) -> None:
        try:
            if self._shut:
                self._core.count(Drop.SHUTDOWN)
                return
            self._queue.put_nowait(span_record_from_readable(span, tenant=self._tenant))
        except queue.Full:
            self._core.count(Drop.QUEUE_FULL)
        except Exception:  # the agent's own span must never fail because of us
            self._core.count(Drop.CONVERSION_ERROR)

    def force_flush(self, timeout_millis: int = 30_000, *, judge_open_turns: bool = False) -> bool:
        """Wait until spans queued so far are assembled and due turns delivered; with
        `judge_open_turns`, every turn still open is judged and delivered now too."""
        if self._shut or not self._worker.is_alive():
            return True
        return self._send(_Flush(open_turns=judge_open_turns), timeout_millis / 1000)

    def shutdown(self, timeout_millis: int = 30_000) -> None:
        """Assemble what is queued, judge every open turn, deliver, stop. Idempotent."""
        with self._lock:
            if self._shut:
                return
            self._shut = True
        if self._worker.is_alive():
            deadline = time.monotonic() + timeout_millis / 1000
            self._send(_Flush(final=True), timeout_millis / 1000)
            self._worker.join(max(0.0, deadline - time.monotonic()))

    def _send(self, marker: _Flush, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        try:
            self._queue.put(marker, timeout=timeout)
        except queue.Full:
            return False
        return marker.done.wait(max(0.0, deadline - time.monotonic()))

    # --- worker ------------------------------------------------------------------------

    def _run(self) -> None:
        next_due = time.monotonic() + self._poll
        while True:
            try:
                item = self._queue.get(timeout=self._poll)
            except queue.Empty:
                item = None
            if isinstance(item, SpanRecord):
                self._core.add((item,))
                if time.monotonic() < next_due:
                    continue  # take a burst of spans before looking for due turns
            elif isinstance(item, _Flush) and item.final:
                self._deliver(self._core.shutdown())
                item.done.set()
                return
            self._deliver(self._core.judge(flush=isinstance(item, _Flush) and item.open_turns))
            next_due = time.monotonic() + self._poll
            if isinstance(item, _Flush):
                item.done.set()

    def _deliver(self, judgement: Judgement) -> None:
        for judged in judgement.turns:
            try:
                self._on_verdict(judged.assembled, judged.verdict)
            except Exception:
                log.exception("on_verdict raised for turn %s", judged.assembled.turn.turn_id)
                self._core.count(Drop.CALLBACK_ERROR)
