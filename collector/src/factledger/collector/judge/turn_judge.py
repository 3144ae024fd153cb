"""Turn judging in the service: stored spans in, `turns` and `findings` rows out.

`TurnJudge` drives the judging core (`processors.judging.core`: assembly and validation)
and shapes its verdicts into rows, without any I/O, so the same code runs in the
pipeline's thread or in a worker process (`collector.judge.worker_process`). What it would count
in /metrics comes back as `Count` values in its result, for the process that owns the
metrics to apply; the core's drop reasons map onto counters in `drop_count`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from factledger.collector import evidence_rows, rows
from factledger.collector.export.records import ReplyRef, version_cause
from factledger.collector.judge.clock_skew import SKEW_BOUND_SECONDS, turn_times
from factledger.collector.redaction import Redactor
from factledger.processors.assembly.assembler import AssembledTurn, PriorVerdict
from factledger.processors.evidence.result_tokens import identifier_backings
from factledger.processors.evidence.snapshots import citation_backing, document_snapshots
from factledger.processors.judging.core import (
    JudgedTurn,
    Judgement,
    JudgingCore,
    Settlement,
    TurnValidator,
    VerificationRequest,
)
from factledger.processors.judging.drops import ASSEMBLY_DROPS, TURN_DROPS, Drop
from factledger.processors.model import Turn, Verdict
from factledger.processors.spans import SpanRecord
from factledger.processors.validators.identifiers import checked_identifiers
from factledger.processors.verification.base import Verification
from factledger.processors.verification.settle import Grade

log = logging.getLogger("factledger.judging")

MAX_OPEN_TURNS = 100_000
_MAX_MODEL_LABELS = 200
_MAX_LABEL_CHARS = 100
_MAX_REMEMBERED_MODELS = 4 * _MAX_MODEL_LABELS

Row = list[Any]


@dataclass(frozen=True)
class Count:
    """One increment of a /metrics counter."""

    name: str
    amount: int = 1
    labels: tuple[tuple[str, str], ...] = ()


def drop_count(reason: Drop, amount: int = 1) -> Count:
    """The /metrics increment for `amount` of `reason`: the assembler's reasons under
    `factledger_assembly_drops_total`, turns under `factledger_turns_failed_total`,
    spans under `factledger_spans_dropped_total`, each with the reason's own name."""
    if reason in ASSEMBLY_DROPS:
        return Count("factledger_assembly_drops_total", amount, (("reason", reason.value),))
    if reason in TURN_DROPS:
        return Count("factledger_turns_failed_total", amount)
    return Count("factledger_spans_dropped_total", amount, (("reason", reason.value),))


@dataclass(frozen=True)
class Judged:
    """What one call of `TurnJudge.judge` produced: rows to insert, counts to apply, how
    many of the given spans it took in (all of them: a span that fails assembly is
    counted as dropped), and the turns still open after it."""

    assembled: int
    turn_rows: list[Row] = field(default_factory=list)
    finding_rows: list[Row] = field(default_factory=list)
    verification_rows: list[Row] = field(default_factory=list)
    requests: list[VerificationRequest] = field(default_factory=list)
    """Turns with names a source of truth could settle, for the verification stage."""
    snapshot_rows: list[Row] = field(default_factory=list)
    """`snapshots` rows of the judged turns' document reads (`judged_evidence_rows`)."""
    evidence_rows: list[Row] = field(default_factory=list)
    """`turn_evidence` rows: one per judged turn, its snapshots and citation backings."""
    replies: list[ReplyRef] = field(default_factory=list)
    """Per turn row, the reply's span and why the version exists (for verdict export)."""
    counts: list[Count] = field(default_factory=list)
    open_turns: int = 0
    flushed: bool = False
    """True when every open turn was judged (a flush), not only the due ones."""

    @property
    def empty(self) -> bool:
        return not (self.assembled or self.turn_rows or self.counts or self.flushed)


def judged_rows(
    assembled: AssembledTurn,
    verdict: Verdict,
    stored: tuple[Turn, Verdict],
    validated_at: datetime,
    redactor: Redactor | None = None,
    verifications: Sequence[Verification] = (),
    skew_bound_seconds: float = SKEW_BOUND_SECONDS,
) -> tuple[Row, list[Row], list[Row]]:
    """The `turns` row, the `findings` rows and the `verifications` rows of one judged
    turn: the one place where a verdict becomes rows. Judged on the raw turn (`verdict`);
    stored as `stored` says (the turn and verdict `Redactor.judged` made, or the raw pair
    without redaction), the answers of sources redacted when `redactor` is set. Every row
    carries the time the turn counts at: its own start, or for a clock skewed beyond
    `skew_bound_seconds` the time it was received (`collector.judge.clock_skew`)."""
    times = turn_times(assembled, skew_bound_seconds)
    started = _datetime(times.started_at_ns)
    raw_verdict = verdict
    turn, verdict = stored
    turn_row = rows.turn_row(
        turn,
        verdict,
        version=assembled.version,
        started_at=started,
        ended_at=_datetime(times.started_at_ns + _duration(assembled)),
        validated_at=validated_at,
        span_ids=assembled.span_ids,
        agent_started_at=_datetime(times.agent_started_at_ns),
        clock_skew_seconds=times.skew_seconds,
        parent_turn_id=assembled.parent_turn_id,
    )
    finding_rows = rows.finding_rows(turn, verdict, version=assembled.version, started_at=started)
    if redactor:
        verifications = [redactor.verification(v) for v in verifications]
    verification_rows = rows.verification_rows(
        turn, raw_verdict, verifications, version=assembled.version, started_at=started
    )
    return turn_row, finding_rows, verification_rows


def judged_evidence_rows(
    assembled: AssembledTurn, redactor: Redactor | None = None
) -> tuple[list[Row], Row]:
    """The `snapshots` rows and the `turn_evidence` row of one judged turn: what its reads
    retrieved (fetched at the turn's start, the time the turn carries), the snapshot
    backing each citation and the call backing each identifier of the reply. Found on the
    raw turn; stored redacted when `redactor` is set."""
    turn = assembled.turn
    snapshots = document_snapshots(turn, fetched_at_ns=assembled.started_at_ns)
    citations = citation_backing(turn, snapshots)
    backings = identifier_backings(turn, checked_identifiers(turn))
    if redactor:
        snapshots, citations, backings = redactor.evidence(turn, snapshots, citations, backings)
    evidence_row = evidence_rows.turn_evidence_row(
        turn.tenant,
        turn.turn_id,
        version=assembled.version,
        started_at=_datetime(assembled.started_at_ns),
        snapshots=snapshots,
        citations=citations,
        backings=backings,
    )
    return [evidence_rows.snapshot_row(turn.tenant, s) for s in snapshots], evidence_row


def _duration(assembled: AssembledTurn) -> int:
    if not assembled.started_at_ns:
        return assembled.ended_at_ns  # no start known: the end is all there is
    return max(0, assembled.ended_at_ns - assembled.started_at_ns)


def _datetime(unix_nano: int) -> datetime:
    return datetime.fromtimestamp(unix_nano / 1e9, UTC)


def _merged(counts: Sequence[Count]) -> list[Count]:
    """One Count per counter and label set: a result crosses a process boundary."""
    totals: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    for count in counts:
        key = (count.name, count.labels)
        totals[key] = totals.get(key, 0) + count.amount
    return [Count(name, amount, labels) for (name, labels), amount in totals.items()]


def _reply_ref(assembled: AssembledTurn, *, settled: bool) -> ReplyRef:
    turn = assembled.turn
    return ReplyRef(
        tenant=turn.tenant,
        turn_id=turn.turn_id,
        version=assembled.version,
        span_id=turn.reply_span_id,
        response_id=turn.response_id,
        cause=version_cause(assembled.version, settled=settled),
    )


class TurnJudge:
    """The service's runner of the judging core: stored spans in, rows and counts out.
    With `verify`, each verdict's checkable names come back as requests (`Judged.requests`)
    and `settle` judges the answers into the next version; `grade` is the settings'
    severity for the findings verification makes (`ValidationRunner.graded`).
    Not thread-safe: one caller at a time (the pipeline's turn processor, or a worker
    process's loop)."""

    def __init__(
        self,
        runner: TurnValidator,
        *,
        grace_seconds: float,
        max_wait_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        max_open_turns: int = MAX_OPEN_TURNS,
        redactor: Redactor | None = None,
        verify: bool = False,
        grade: Grade | None = None,
        skew_bound_seconds: float = SKEW_BOUND_SECONDS,
    ) -> None:
        self._redactor = redactor
        self._skew_bound = skew_bound_seconds
        self._core = JudgingCore(
            runner,
            grace_seconds=grace_seconds,
            max_wait_seconds=max_wait_seconds,
            max_open_turns=max_open_turns,
            clock=clock,
            verify=verify,
            grade=grade,
        )
        self._model_labels: set[str] = set()
        self._label_of_model: dict[str, str] = {}
        self._service_labels: set[str] = set()
        self._without_turn_logged: set[tuple[str, str]] = set()

    @property
    def open_turns(self) -> int:
        return self._core.open_turns

    def recall(self, priors: Sequence[PriorVerdict]) -> None:
        """Verdicts stored before this judge started, sent ahead of the spans read back
        with them at a restart (see `TurnAssembler.remember`)."""
        self._core.recall(priors)

    def judge(self, spans: Sequence[SpanRecord], *, flush: bool = False) -> Judged:
        """Add `spans`, then judge the turns that are due (with `flush`, every open one).
        Never raises: a span or turn that fails is counted, its neighbours go on."""
        self._core.add(spans)
        return self._judged(self._core.judge(flush=flush), assembled=len(spans), flushed=flush)

    def settle(self, settlements: Sequence[Settlement]) -> Judged:
        """Judge settled turns again under their next version (`JudgingCore.settle`); a
        settlement a later version overtook is counted as stale."""
        judgement = self._core.settle(settlements)
        # Not counted again as validated: the turn was, and verification counts its own.
        judged = self._judged(
            judgement, assembled=0, flushed=False, count_verdicts=False, settled=True
        )
        stale = len(settlements) - len(judgement.turns)
        if stale > 0:
            judged.counts.append(Count("factledger_verifications_stale_total", stale))
        return judged

    def _judged(
        self,
        judgement: Judgement,
        *,
        assembled: int,
        flushed: bool,
        count_verdicts: bool = True,
        settled: bool = False,
    ) -> Judged:
        validated_at = datetime.now(UTC)
        result = Judged(assembled=assembled, open_turns=judgement.open_turns, flushed=flushed)
        counts: list[Count] = []
        for judged in judgement.turns:
            try:
                turn = judged.assembled.turn
                stored = (
                    self._redactor.judged(turn, judged.verdict)
                    if self._redactor
                    else (turn, judged.verdict)
                )
                turn_row, findings, verifications = judged_rows(
                    judged.assembled,
                    judged.verdict,
                    stored,
                    validated_at,
                    self._redactor,
                    judged.verifications,
                    self._skew_bound,
                )
                # A turn `judged` left as it was holds no secret in any text its evidence
                # is cut from (results, arguments, the reply, tool names): no second scan.
                evidence_redactor = None if stored[0] is turn else self._redactor
                snapshots, evidence = judged_evidence_rows(judged.assembled, evidence_redactor)
            except Exception:  # one turn that cannot be shaped never costs its neighbours
                log.exception("judging turn %s failed", judged.assembled.turn.turn_id)
                counts.append(drop_count(Drop.TURN_FAILED))
                continue
            result.turn_rows.append(turn_row)
            result.replies.append(_reply_ref(judged.assembled, settled=settled))
            result.finding_rows.extend(findings)
            result.verification_rows.extend(verifications)
            result.snapshot_rows.extend(snapshots)
            result.evidence_rows.append(evidence)
            if judged.request is not None:
                result.requests.append(judged.request)
            if count_verdicts:
                counts.extend(self._verdict_counts(judged))
                counts.extend(self._skew_counts(judged.assembled))
        counts.extend(drop_count(reason, amount) for reason, amount in judgement.drops.items())
        counts.extend(self._without_turn_counts(judgement.without_turn))
        result.counts.extend(_merged(counts))
        return result

    def _verdict_counts(self, judged: JudgedTurn) -> list[Count]:
        verdict = judged.verdict
        model = self._model_label(judged.assembled.turn.model)
        labels = (("verdict", verdict.outcome.value), ("model", model))
        findings = (("kind", f.kind.value) for f in verdict.findings)
        return [
            Count("factledger_turns_validated_total", 1, labels),
            *(Count("factledger_findings_total", 1, (kind,)) for kind in findings),
        ]

    def _skew_counts(self, assembled: AssembledTurn) -> list[Count]:
        """A turn counted at its receive time, for a clock beyond the bound: by service,
        so that the sender whose clock is off can be found."""
        if not turn_times(assembled, self._skew_bound).skewed:
            return []
        service = self._bounded_label(self._service_labels, self._stored_text(assembled.service))
        return [Count("factledger_clock_skewed_turns_total", 1, (("service", service),))]

    def _without_turn_counts(self, new: Mapping[tuple[str, str], int]) -> list[Count]:
        counts: list[Count] = []
        for (service, scope), amount in new.items():
            if (service, scope) not in self._without_turn_logged:
                # Once per service and scope: silence would look like a quiet agent.
                log.warning(
                    "traces of service %r (instrumentation scope %r) produced no turn: no "
                    "span carries GenAI, OpenInference, OpenLLMetry or AI SDK attributes "
                    "(see the conventions FactLedger reads in docs/service.md)",
                    service,
                    scope,
                )
                self._without_turn_logged.add((service, scope))
            labels = (("service", service), ("scope", scope))
            counts.append(Count("factledger_traces_without_turn_total", amount, labels))
        return counts

    def _stored_text(self, text: str) -> str:
        """`text` as the store keeps it: a label is as public as a stored row."""
        return self._redactor.text(text) if self._redactor else text

    def _model_label(self, model: str) -> str:
        """The /metrics label of a model's name as stored; remembered per name, since
        every turn asks and a redaction scan per turn is not free."""
        label = self._label_of_model.get(model)
        if label is None:
            label = self._bounded_label(self._model_labels, self._stored_text(model))
            if len(self._label_of_model) >= _MAX_REMEMBERED_MODELS:
                self._label_of_model.clear()  # names a client made up without end
            self._label_of_model[model] = label
        return label

    @staticmethod
    def _bounded_label(seen: set[str], text: str) -> str:
        """Model and service names come from clients: bound the label set a Prometheus
        scrape sees."""
        label = (text or "unknown")[:_MAX_LABEL_CHARS]
        if label in seen:
            return label
        if len(seen) >= _MAX_MODEL_LABELS:
            return "other"
        seen.add(label)
        return label
