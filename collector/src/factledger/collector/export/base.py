"""The export seam: what leaves FactLedger for each verdict version, and the one
interface every target implements.

A target is told about verdict versions in batches, on an outbox delivery thread of its
own, never on the ingest or judging path. It answers with a value or one of two errors:

    ExportError
     ├── TargetUnavailable   retryable: down, slow, 429, 5xx (the outbox backs off,
     │                       honouring `retry_after_seconds` when the target gave one)
     └── TargetRefused       permanent: the target will never take these records
                             (400, 401/403, a payload it rejects); counted as dropped

Anything else a target raises counts as retryable, as the OTel Collector treats an
unclassified error. Records carry text already redacted as stored (`collector.redaction`):
a target sends them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Verdict = Literal["reject", "flag", "pass"]

VersionCause = Literal["judged", "late_span", "verified", "labelled"]
"""Why a verdict version exists: the first judgement, a span that arrived after it, a
verification that settled it, or a human label."""


@dataclass(frozen=True)
class ExportedFinding:
    """One finding of a verdict version, as a target shows it."""

    kind: str
    verdict: Verdict
    token: str
    message: str
    validator_class: int


@dataclass(frozen=True)
class VerdictRecord:
    """One verdict version of one turn, keyed to the span that produced the reply.

    `span_id` is the reply's LLM span (16 hex digits) in trace `trace_id` (32 hex digits);
    `response_id` is that span's `gen_ai.response.id` where the agent recorded one.
    `version` grows with each version of the same turn: a target that can update what it
    sent keys on (`tenant`, `turn_id`) and keeps the newest record by `order`.
    """

    tenant: str
    turn_id: str
    version: int
    cause: VersionCause
    verdict: Verdict
    trace_id: str
    span_id: str
    response_id: str | None
    service_name: str
    agent_name: str
    model: str
    findings: tuple[ExportedFinding, ...]
    turn_url: str
    judged_at_ms: int

    @property
    def order(self) -> tuple[int, int]:
        """Which of two records of a turn is newer: the higher version, then the later
        judgement (a human label is judged under the version it labels, after it)."""
        return (self.version, self.judged_at_ms)


@dataclass(frozen=True)
class Delivered:
    """A batch the target took whole."""

    count: int


class ExportError(Exception):
    """A batch the target did not take; retryable unless it is a `TargetRefused`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TargetUnavailable(ExportError):
    """Down, slow, throttled or failing: send the same batch again later."""

    def __init__(self, reason: str, retry_after_seconds: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after_seconds = retry_after_seconds


class TargetRefused(ExportError):
    """The target will never take this batch (bad credentials, a payload it rejects)."""


class ExportTarget(Protocol):
    """One place verdicts go.

    `deliver` is called on the outbox's delivery thread for this target only, one batch at
    a time, with at most the batch size the outbox was configured with; it may block up
    to `timeout_seconds` and must not hold state between calls that a retry of the same
    batch would duplicate. `shutdown` is idempotent and safe before any delivery.
    """

    @property
    def name(self) -> str:
        """The target's name in settings, metrics and logs (`otel`, `phoenix`, ...)."""
        ...

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        """Send `records`; raise `TargetUnavailable` or `TargetRefused` when not taken."""
        ...

    def shutdown(self) -> None:
        """Release connections and clients."""
        ...
