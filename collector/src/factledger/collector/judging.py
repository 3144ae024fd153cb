"""Turn judging: stored spans in, `turns` and `findings` rows out.

`TurnJudge` is the turn processor's work (assembly, validation, row shaping) without any
I/O, so the same code runs in the pipeline's thread or in a worker process
(`collector.judge_worker`). What it would count in /metrics comes back as `Count` values
in its result, for the process that owns the metrics to apply.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from factledger.collector import rows
from factledger.collector.redaction import Redactor
from factledger.processors.assembler import AssembledTurn, PriorVerdict, TurnAssembler
from factledger.processors.model import Turn, Verdict
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.judging")

MAX_OPEN_TURNS = 100_000
_MAX_MODEL_LABELS = 200
_MAX_LABEL_CHARS = 100

Row = list[Any]


class TurnValidator(Protocol):
    """What judging needs of a runner (`ValidationRunner`, or one with a time limit)."""

    def validate(self, turn: Turn) -> Verdict: ...


@dataclass(frozen=True)
class Count:
    """One increment of a /metrics counter."""

    name: str
    amount: int = 1
    labels: tuple[tuple[str, str], ...] = ()


_ASSEMBLY_ERROR = Count("factledger_spans_dropped_total", 1, (("reason", "assembly_error"),))


@dataclass(frozen=True)
class Judged:
    """What one call of `TurnJudge.judge` produced: rows to insert, counts to apply, how
    many of the given spans it took in (all of them: a span that fails assembly is
    counted as dropped), and the turns still open after it."""

    assembled: int
    turn_rows: list[Row] = field(default_factory=list)
    finding_rows: list[Row] = field(default_factory=list)
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
    validated_at: datetime,
    redactor: Redactor | None = None,
) -> tuple[Row, list[Row]]:
    """The `turns` row and the `findings` rows of one judged turn: the one place where a
    verdict becomes rows. Judged on the raw turn; stored redacted when `redactor` is set."""
    started = _datetime(assembled.started_at_ns)
    turn, verdict = (
        redactor.judged(assembled.turn, verdict) if redactor else (assembled.turn, verdict)
    )
    turn_row = rows.turn_row(
        turn,
        verdict,
        version=assembled.version,
        started_at=started,
        ended_at=_datetime(assembled.ended_at_ns),
        validated_at=validated_at,
        span_ids=assembled.span_ids,
    )
    finding_rows = rows.finding_rows(turn, verdict, version=assembled.version, started_at=started)
    return turn_row, finding_rows


def _datetime(unix_nano: int) -> datetime:
    return datetime.fromtimestamp(unix_nano / 1e9, UTC)


def _merged(counts: Sequence[Count]) -> list[Count]:
    """One Count per counter and label set: a result crosses a process boundary."""
    totals: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    for count in counts:
        key = (count.name, count.labels)
        totals[key] = totals.get(key, 0) + count.amount
    return [Count(name, amount, labels) for (name, labels), amount in totals.items()]


class TurnJudge:
    """Assembles spans into turns and judges the complete ones. Not thread-safe: one
    caller at a time (the pipeline's turn processor, or a worker process's loop)."""

    def __init__(
        self,
        runner: TurnValidator,
        *,
        grace_seconds: float,
        max_wait_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        max_open_turns: int = MAX_OPEN_TURNS,
        redactor: Redactor | None = None,
    ) -> None:
        self._runner = runner
        self._redactor = redactor
        self._assembler = TurnAssembler(
            clock,
            grace_seconds=grace_seconds,
            max_wait_seconds=max_wait_seconds,
            max_open_turns=max_open_turns,
        )
        self._model_labels: set[str] = set()
        self._drops_seen: dict[str, int] = {}
        self._without_turn_seen: dict[tuple[str, str], int] = {}

    @property
    def open_turns(self) -> int:
        return self._assembler.open_count

    def recall(self, priors: Sequence[PriorVerdict]) -> None:
        """Verdicts stored before this judge started, sent ahead of the spans read back
        with them at a restart (see `TurnAssembler.remember`)."""
        for prior in priors:
            self._assembler.remember(prior)

    def judge(self, spans: Sequence[SpanRecord], *, flush: bool = False) -> Judged:
        """Add `spans`, then judge the turns that are due (with `flush`, every open one).
        Never raises: a span or turn that fails is counted, its neighbours go on."""
        counts: list[Count] = []
        for span in spans:
            try:
                self._assembler.add(span)
            except Exception:  # one bad span never takes the processor down
                log.exception("assembling span %s failed", span.span_id)
                counts.append(_ASSEMBLY_ERROR)
        turn_rows: list[Row] = []
        finding_rows: list[Row] = []
        try:
            due = self._assembler.flush_all() if flush else self._assembler.due()
            self._judge(due, turn_rows, finding_rows, counts)
        except Exception:
            log.exception("judging turns failed")
            counts.append(Count("factledger_turns_failed_total"))
        self._count_drops(counts)
        return Judged(
            assembled=len(spans),
            turn_rows=turn_rows,
            finding_rows=finding_rows,
            counts=_merged(counts),
            open_turns=self._assembler.open_count,
            flushed=flush,
        )

    def _judge(
        self,
        due: Sequence[AssembledTurn],
        turn_rows: list[Row],
        finding_rows: list[Row],
        counts: list[Count],
    ) -> None:
        validated_at = datetime.now(UTC)
        for assembled in due:
            try:
                verdict = self._runner.validate(assembled.turn)
                turn_row, findings = judged_rows(assembled, verdict, validated_at, self._redactor)
            except Exception:  # one turn that cannot be shaped never costs its neighbours
                log.exception("judging turn %s failed", assembled.turn.turn_id)
                counts.append(Count("factledger_turns_failed_total"))
                continue
            turn_rows.append(turn_row)
            finding_rows.extend(findings)
            model = self._model_label(self._stored_text(assembled.turn.model))
            counts.append(
                Count(
                    "factledger_turns_validated_total",
                    1,
                    (("verdict", verdict.outcome.value), ("model", model)),
                )
            )
            counts.extend(
                Count("factledger_findings_total", 1, (("kind", f.kind.value),))
                for f in verdict.findings
            )

    def _count_drops(self, counts: list[Count]) -> None:
        """Carry the assembler's drop counts (duplicates, oversized groups, turns that
        could not be built, ...) into /metrics."""
        for reason, count in self._assembler.drops.items():
            new = count - self._drops_seen.get(reason, 0)
            if new > 0:
                counts.append(Count("factledger_assembly_drops_total", new, (("reason", reason),)))
                self._drops_seen[reason] = count
        for (service, scope), count in self._assembler.traces_without_turn.items():
            seen = self._without_turn_seen.get((service, scope), 0)
            if count <= seen:
                continue
            if not seen:
                # Once per service and scope: silence would look like a quiet agent.
                log.warning(
                    "traces of service %r (instrumentation scope %r) produced no turn: no "
                    "span carries GenAI, OpenInference, OpenLLMetry or AI SDK attributes "
                    "(see the conventions FactLedger reads in docs/service.md)",
                    service,
                    scope,
                )
            labels = (("service", service), ("scope", scope))
            counts.append(Count("factledger_traces_without_turn_total", count - seen, labels))
            self._without_turn_seen[(service, scope)] = count

    def _stored_text(self, text: str) -> str:
        """`text` as the store keeps it: a label is as public as a stored row."""
        return self._redactor.text(text) if self._redactor else text

    def _model_label(self, model: str) -> str:
        """Model names come from clients: bound the label set a Prometheus scrape sees."""
        label = (model or "unknown")[:_MAX_LABEL_CHARS]
        if label in self._model_labels:
            return label
        if len(self._model_labels) >= _MAX_MODEL_LABELS:
            return "other"
        self._model_labels.add(label)
        return label
