"""The judging core: normalized spans in, assembled turns and their verdicts out.

    core = JudgingCore(runner, grace_seconds=2.0, max_wait_seconds=60.0)
    core.add(spans)                  # any order, re-sent and late spans included
    judgement = core.judge()         # the turns that are due; flush=True: every open one
    judgement = core.shutdown()      # every open turn, once; later spans are counted

Every runner drives this one object and only carries spans to it and verdicts away: the
span processor on its worker thread, the service's turn processor in its own thread or in
a judge worker process (through `collector.judge.turn_judge.TurnJudge`, which makes the verdicts
rows). What the core sets aside is counted by one set of reasons (`judging.drops`).

A re-sent span is ignored (`duplicate`); a span that arrives after its turn was judged
re-opens it, and the turn is judged again under the next version. Validation fails open
(`runner.ValidationRunner`: a crashing validator gives a `validator_error` finding); a
runner that raises all the same costs that turn alone (`turn_failed`), a span the
assembler raises on costs that span alone (`assembly_error`): `judge` never raises.

Not thread-safe, but for `count`: one thread adds and judges; a runner's transport may
count what it could not hand over from any thread.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..assembly.assembler import (
    AssembledTurn,
    Normalizer,
    PriorVerdict,
    TurnAssembler,
)
from ..model import Turn, Verdict
from ..spans import SpanRecord
from ..verification.base import Subject, Verification
from ..verification.settle import Grade, settled_verdict
from ..verification.subjects import subjects
from .drops import Drop, DropTally

log = logging.getLogger("factledger.judging")

MAX_OPEN_TURNS = 10_000
"""The assembler's bound on open turns unless the runner says otherwise."""
MAX_SETTLED_TURNS = 50_000
"""Turns whose verifications the core keeps, to apply them to the turn's later versions."""

SubjectKey = tuple[str, str, bool]


class TurnValidator(Protocol):
    """What judging needs of a runner (`ValidationRunner`, or one wrapped with a time limit)."""

    def validate(self, turn: Turn) -> Verdict: ...


@dataclass(frozen=True)
class VerificationRequest:
    """What a judged turn asks of the sources of truth: its subjects not yet settled, with
    the turn and its verdict as validated (before verification). Held in memory only, on
    its way to the verification stage and back in a `Settlement`."""

    assembled: AssembledTurn
    verdict: Verdict
    subjects: tuple[Subject, ...]


@dataclass(frozen=True)
class Settlement:
    """The answers to a `VerificationRequest`, to be judged into the turn's next version."""

    request: VerificationRequest
    verifications: tuple[Verification, ...]


@dataclass(frozen=True)
class JudgedTurn:
    """One assembled turn (a version of it) and its verdict, with the verifications the
    verdict applied and what is still to be verified."""

    assembled: AssembledTurn
    verdict: Verdict
    request: VerificationRequest | None = None
    verifications: tuple[Verification, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """What one `judge` (or `shutdown`) produced."""

    turns: tuple[JudgedTurn, ...] = ()
    drops: Mapping[Drop, int] = field(default_factory=dict)
    """Counted since the previous judgement: each count is reported once."""
    without_turn: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """Traces that produced no turn since the previous judgement, by (service, scope)."""
    open_turns: int = 0
    """Turns still open after it."""
    flushed: bool = False
    """True when every open turn was judged, not only the due ones."""


class JudgingCore:
    """Assembles spans into turns and judges the complete ones with `runner`."""

    def __init__(
        self,
        runner: TurnValidator,
        *,
        grace_seconds: float,
        max_wait_seconds: float,
        max_open_turns: int = MAX_OPEN_TURNS,
        clock: Callable[[], float] = time.monotonic,
        normalizer: Normalizer | None = None,
        verify: bool = False,
        grade: Grade | None = None,
    ) -> None:
        self._runner = runner
        self._verify = verify
        self._grade = grade
        self._settled: OrderedDict[str, dict[SubjectKey, Verification]] = OrderedDict()
        self._assembler = TurnAssembler(
            clock,
            grace_seconds=grace_seconds,
            max_wait_seconds=max_wait_seconds,
            max_open_turns=max_open_turns,
            normalizer=normalizer,
        )
        self._drops = DropTally()
        self._assembler_seen: dict[Drop, int] = {}
        self._without_turn_seen: dict[tuple[str, str], int] = {}
        self._shut = False

    @property
    def open_turns(self) -> int:
        return self._assembler.open_count

    @property
    def drops(self) -> Mapping[Drop, int]:
        """Every count so far, by reason (a snapshot; safe from any thread)."""
        return self._drops.totals()

    @property
    def closed(self) -> bool:
        return self._shut

    def count(self, reason: Drop, amount: int = 1) -> None:
        """Count what a runner's transport set aside before it reached the core (a full
        queue, a span it could not read). Safe from any thread."""
        self._drops.add(reason, amount)

    def recall(self, priors: Sequence[PriorVerdict]) -> None:
        """Verdicts stored before this core started, handed in ahead of the spans read back
        with them at a restart, so versions go on (`TurnAssembler.remember`)."""
        for prior in priors:
            self._assembler.remember(prior)

    def add(self, spans: Iterable[SpanRecord]) -> None:
        """Take spans in. After `shutdown` each is counted as `shutdown` instead."""
        for span in spans:
            if self._shut:
                self._drops.add(Drop.SHUTDOWN)
                continue
            try:
                self._assembler.add(span)
            except Exception:  # one bad span never takes judging down
                log.exception("assembling span %s failed", span.span_id)
                self._drops.add(Drop.ASSEMBLY_ERROR)

    def judge(self, *, flush: bool = False) -> Judgement:
        """Judge the turns that are due (with `flush`, every open one). Never raises."""
        if self._shut:
            return self._judgement((), flushed=flush)
        try:
            due = self._assembler.flush_all() if flush else self._assembler.due()
        except Exception:
            log.exception("completing turns failed")
            self._drops.add(Drop.TURN_FAILED)
            due = []
        return self._judgement(tuple(self._validated(due)), flushed=flush)

    def settle(self, settlements: Sequence[Settlement]) -> Judgement:
        """Judge each settled turn again under its next version, the answers applied; a
        settlement for a version that a later one replaced meanwhile is kept for the turn
        (its later versions apply it) but judges nothing. Never raises."""
        out: list[JudgedTurn] = []
        for settlement in settlements:
            try:
                judged = self._settled_turn(settlement)
            except Exception:
                log.exception("settling turn %s failed", settlement.request.assembled.turn.turn_id)
                self._drops.add(Drop.TURN_FAILED)
                continue
            if judged is not None:
                out.append(judged)
        return self._judgement(tuple(out), flushed=False)

    def shutdown(self) -> Judgement:
        """Judge every open turn and take no more spans. Idempotent: a later call judges
        nothing."""
        if self._shut:
            return self._judgement((), flushed=True)
        judgement = self.judge(flush=True)
        self._shut = True
        return judgement

    def _validated(self, due: Sequence[AssembledTurn]) -> Iterable[JudgedTurn]:
        for assembled in due:
            try:
                verdict = self._runner.validate(assembled.turn)
                judged = self._verified(assembled, verdict)
            except Exception:  # one turn that cannot be judged never costs its neighbours
                log.exception("validating turn %s failed", assembled.turn.turn_id)
                self._drops.add(Drop.TURN_FAILED)
                continue
            yield judged

    def _verified(self, assembled: AssembledTurn, verdict: Verdict) -> JudgedTurn:
        """The verdict with what is known of the turn's subjects applied, and a request
        for the rest."""
        if not self._verify:
            return JudgedTurn(assembled, verdict)
        current = subjects(assembled.turn, verdict)
        known = self._known(assembled.turn.turn_id, current)
        pending = tuple(s for s in current if s.key not in known)
        request = VerificationRequest(assembled, verdict, pending) if pending else None
        applied = settled_verdict(verdict, known, self._grade)
        return JudgedTurn(assembled, applied, request, tuple(known.values()))

    def _settled_turn(self, settlement: Settlement) -> JudgedTurn | None:
        request = settlement.request
        assembled = request.assembled
        turn_id = assembled.turn.turn_id
        answers = self._settled.setdefault(turn_id, {})
        self._settled.move_to_end(turn_id)
        while len(self._settled) > MAX_SETTLED_TURNS:
            self._settled.popitem(last=False)
        answers.update((v.subject.key, v) for v in settlement.verifications)
        version = self._assembler.next_version(turn_id, assembled.span_ids, assembled.version)
        if version is None:
            return None
        known = self._known(turn_id, subjects(assembled.turn, request.verdict))
        verdict = settled_verdict(request.verdict, known, self._grade)
        return JudgedTurn(assembled.at_version(version), verdict, None, tuple(known.values()))

    def _known(self, turn_id: str, current: Sequence[Subject]) -> dict[SubjectKey, Verification]:
        """The answers kept for the turn that are about subjects it still has."""
        answers = self._settled.get(turn_id)
        if not answers:
            return {}
        return {s.key: answers[s.key] for s in current if s.key in answers}

    def _judgement(self, turns: tuple[JudgedTurn, ...], *, flushed: bool) -> Judgement:
        self._carry_assembler_drops()
        return Judgement(
            turns=turns,
            drops=self._drops.take_new(),
            without_turn=self._new_without_turn(),
            open_turns=self._assembler.open_count,
            flushed=flushed,
        )

    def _carry_assembler_drops(self) -> None:
        for name, total in self._assembler.drops.items():
            reason = Drop(name)
            self._drops.add(reason, total - self._assembler_seen.get(reason, 0))
            self._assembler_seen[reason] = total

    def _new_without_turn(self) -> dict[tuple[str, str], int]:
        new: dict[tuple[str, str], int] = {}
        for key, total in self._assembler.traces_without_turn.items():
            seen = self._without_turn_seen.get(key, 0)
            if total > seen:
                new[key] = total - seen
                self._without_turn_seen[key] = total
        return new
