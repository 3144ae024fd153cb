"""The verification stage: judged turns' names asked of the sources of truth, off the
ingest path, and the answers sent back to be judged into the turn's next version.

    judging ──requests──▶ bounded queue ──▶ verifier threads ──settlements──▶ judging
                              ▲                     │ a source down or slow:
                              └──── retry later ◀───┘ asked again after a back-off

The first verdict is stored before anything here runs, and stands meanwhile. A request
the queue has no room for is counted and left: its verdict is the deterministic one.
Each answer is counted by source and outcome. A request whose answers all say `no
source` changes nothing and makes no version; one whose sources were unreachable or slow
is asked again after `retry_seconds` (each wait in turn), with the answers it already has
sent on at once; after the last retry its unanswered names go back as unverifiable.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from factledger.collector.metrics import Metrics
from factledger.collector.thread_names import named
from factledger.processors.judging.core import Settlement, VerificationRequest
from factledger.processors.verification.base import (
    Verification,
    VerificationOutcome,
    Verifier,
)
from factledger.processors.verification.chain import NO_SOURCE, verify_subjects
from factledger.processors.verification.subjects import CANDIDATE_KINDS
from factledger.verifiers.settings import VerificationSettings

log = logging.getLogger("factledger.verification")

Deliver = Callable[[int, Settlement], None]
"""Hands a settlement to the judge (by index) that judged its turn."""

_POLL_SECONDS = 0.2


@dataclass(frozen=True)
class StageLimits:
    """How much verification may take: threads, queue, time per turn and per source,
    and the waits before asking an unreachable source again."""

    threads: int = 2
    max_queue: int = 1_000
    budget_seconds: float = 30.0
    per_source_seconds: float = 10.0
    retry_seconds: tuple[float, ...] = (5.0, 30.0, 120.0)


def stage_limits(settings: VerificationSettings) -> StageLimits:
    """The limits `[verification]` sets."""
    return StageLimits(
        threads=settings.threads,
        max_queue=settings.max_queue,
        budget_seconds=settings.budget_seconds,
        per_source_seconds=settings.per_source_seconds,
        retry_seconds=settings.retry_seconds,
    )


@dataclass(frozen=True)
class _Job:
    judge: int
    request: VerificationRequest
    attempt: int = 0
    earlier: tuple[Verification, ...] = ()
    """Answers kept from the attempts before (sent on already)."""


class VerificationStage:
    """Runs `verifiers` over the requests `submit` takes, in `limits.threads` threads."""

    def __init__(
        self,
        verifiers: Sequence[Verifier],
        deliver: Deliver,
        metrics: Metrics,
        limits: StageLimits = StageLimits(),
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._verifiers = tuple(verifiers)
        self._deliver = deliver
        self._metrics = metrics
        self._limits = limits
        self._clock = clock
        self._ready: queue.Queue[_Job] = queue.Queue(maxsize=max(1, limits.max_queue))
        self._later: list[tuple[float, int, _Job]] = []
        self._later_lock = threading.Lock()
        self._order = itertools.count()
        self._stop = threading.Event()
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        metrics.gauge("factledger_verification_queue_turns", lambda: float(self.pending))

    @property
    def pending(self) -> int:
        """Turns waiting or being verified, retries included."""
        with self._later_lock:
            later = len(self._later)
        with self._busy_lock:
            busy = self._busy
        return self._ready.qsize() + later + busy

    def start(self) -> None:
        for index in range(max(1, self._limits.threads)):
            thread = threading.Thread(
                target=named(f"verifier-{index}", self._run), name=f"verifier-{index}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop taking work; threads finish the turn in hand (bounded by their budget)."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def submit(self, judge: int, requests: Sequence[VerificationRequest]) -> None:
        """Queue `requests` of judge `judge`; those without room are counted and left."""
        for request in requests:
            try:
                self._ready.put_nowait(_Job(judge, request))
            except queue.Full:
                self._metrics.inc("factledger_verification_requests_total", result="dropped")

    def wait_idle(self, timeout: float) -> bool:
        """True once nothing is queued or being verified (retries waiting count); for
        tests and shutdown."""
        deadline = time.monotonic() + timeout
        while self.pending:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    # --- the threads ------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._release_due()
            try:
                job = self._ready.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            with self._busy_lock:
                self._busy += 1
            try:
                self._verify(job)
            except Exception:  # a thread that dies would silently stop verification
                log.exception("verifying turn %s failed", job.request.assembled.turn.turn_id)
            finally:
                with self._busy_lock:
                    self._busy -= 1

    def _release_due(self) -> None:
        now = self._clock()
        with self._later_lock:
            while self._later and self._later[0][0] <= now:
                _, _, job = heapq.heappop(self._later)
                try:
                    self._ready.put_nowait(job)
                except queue.Full:
                    heapq.heappush(self._later, (now + _POLL_SECONDS, next(self._order), job))
                    return

    def _verify(self, job: _Job) -> None:
        request = job.request
        answers = verify_subjects(
            request.subjects,
            request.assembled.turn,
            self._verifiers,
            budget_seconds=self._limits.budget_seconds,
            per_source_seconds=self._limits.per_source_seconds,
        )
        for answer in answers:
            source = answer.source.partition(":")[0] or "none"
            self._metrics.inc(
                "factledger_verifications_total", source=source, outcome=answer.outcome.value
            )
        waits = self._limits.retry_seconds
        again = [a for a in answers if a.retryable and not a.settled]
        if again and job.attempt < len(waits):
            done = [a for a in answers if a not in again]
            self._send(job, done, final=False)
            retry = replace(
                job,
                request=replace(request, subjects=tuple(a.subject for a in again)),
                attempt=job.attempt + 1,
                earlier=(*job.earlier, *done),
            )
            with self._later_lock:
                due = self._clock() + waits[job.attempt]
                heapq.heappush(self._later, (due, next(self._order), retry))
            self._metrics.inc("factledger_verification_requests_total", result="retried")
            return
        self._send(job, answers, final=True)

    def _send(self, job: _Job, answers: Sequence[Verification], *, final: bool) -> None:
        """Deliver the answers worth a version: any from a source (an unverifiable one
        says why the name stays unsettled); `no source` alone changes nothing."""
        worth = [a for a in answers if a.reason != NO_SOURCE]
        if not worth:
            if final and not job.earlier:
                self._metrics.inc("factledger_verification_requests_total", result="unsettled")
            return
        self._count_findings(worth)
        self._deliver(job.judge, Settlement(job.request, tuple(worth)))
        self._metrics.inc("factledger_verification_requests_total", result="settled")

    def _count_findings(self, answers: Sequence[Verification]) -> None:
        """Per finding kind: a confirmed candidate counts as the finding it becomes."""
        for answer in answers:
            subject = answer.subject
            kind = subject.finding_kind
            if kind is None and answer.outcome is VerificationOutcome.CONFIRMED:
                kind = CANDIDATE_KINDS[subject.claimed_absent]
            if kind is None or not answer.settled:
                continue
            self._metrics.inc(
                "factledger_verification_findings_total",
                kind=kind.value,
                outcome=answer.outcome.value,
            )
