"""The service's verification stage: threads, the bounded queue, retries, what it counts
(collector.verify.stage)."""

from __future__ import annotations

import threading
import time

from factledger.collector.metrics import Metrics
from factledger.collector.verify.stage import StageLimits, VerificationStage
from factledger.processors.assembly.assembler import AssembledTurn
from factledger.processors.judging.core import Settlement, VerificationRequest
from factledger.processors.kinds import Kind, Outcome
from factledger.processors.model import Finding, Turn, Verdict
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
    existence_outcome,
)

REQUESTS = "factledger_verification_requests_total"
FINDINGS = "factledger_verification_findings_total"


class Flaky:
    """Down for its first `down` questions (unverifiable, retryable), then answers."""

    name = "git"

    def __init__(
        self, exists: dict[str, bool], down: int = 0, block: threading.Event | None = None
    ):
        self._exists = exists
        self._down = down
        self._block = block
        self.asked = 0

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        if self._block is not None:
            self._block.wait(5)
        self.asked += 1
        if subject.name not in self._exists:
            return None
        source = "git:acme/site"
        if self.asked <= self._down:
            outcome = VerificationOutcome.UNVERIFIABLE
            return Verification(subject, outcome, source, reason="unreachable", retryable=True)
        return Verification(subject, existence_outcome(subject, self._exists[subject.name]), source)


def _request(*names: str) -> VerificationRequest:
    findings = tuple(
        Finding(Kind.CONFABULATED_IDENTIFIER_SET, "m", token=name, score=0.9) for name in names
    )
    subjects = tuple(
        Subject(SubjectKind.PATH, n, finding=i, finding_kind=Kind.CONFABULATED_IDENTIFIER_SET)
        for i, n in enumerate(names)
    )
    turn = Turn(reply=" ".join(names), turn_id="t1", trace_id="a" * 32)
    assembled = AssembledTurn(turn, 1, ("s1",), 0, 0, "default", "svc")
    return VerificationRequest(assembled, Verdict(Outcome.FLAG, findings), subjects)


def _stage(
    verifier: Flaky, **limits: object
) -> tuple[VerificationStage, list[tuple[int, Settlement]], Metrics]:
    delivered: list[tuple[int, Settlement]] = []
    metrics = Metrics()
    stage = VerificationStage(
        [verifier],
        lambda judge, settlement: delivered.append((judge, settlement)),
        metrics,
        StageLimits(**limits),  # type: ignore[arg-type]
    )
    return stage, delivered, metrics


def test_answers_go_back_to_the_judge_that_judged_the_turn_and_are_counted() -> None:
    stage, delivered, metrics = _stage(Flaky({"a.py": True, "b.py": False}))
    stage.start()
    stage.submit(3, [_request("a.py", "b.py")])
    assert stage.wait_idle(5)
    stage.stop()
    ((judge, settlement),) = delivered
    assert judge == 3
    assert [(v.subject.name, v.outcome) for v in settlement.verifications] == [
        ("a.py", VerificationOutcome.REFUTED),
        ("b.py", VerificationOutcome.CONFIRMED),
    ]
    answers = "factledger_verifications_total"
    assert metrics.value(answers, source="git", outcome="refuted") == 1
    assert metrics.value(answers, source="git", outcome="confirmed") == 1
    kind = Kind.CONFABULATED_IDENTIFIER_SET.value
    assert metrics.value(FINDINGS, kind=kind, outcome="confirmed") == 1
    assert metrics.value(FINDINGS, kind=kind, outcome="refuted") == 1
    assert metrics.value(REQUESTS, result="settled") == 1


def test_an_unreachable_source_is_asked_again_after_a_wait() -> None:
    flaky = Flaky({"a.py": False}, down=1)
    stage, delivered, metrics = _stage(flaky, retry_seconds=(0.2,))
    stage.start()
    started = time.monotonic()
    stage.submit(0, [_request("a.py")])
    assert stage.wait_idle(5)
    stage.stop()
    assert time.monotonic() - started >= 0.2
    ((_, settlement),) = delivered
    assert [v.outcome for v in settlement.verifications] == [VerificationOutcome.CONFIRMED]
    assert metrics.value(REQUESTS, result="retried") == 1


def test_after_the_last_retry_the_name_goes_back_unverifiable() -> None:
    stage, delivered, _ = _stage(Flaky({"a.py": False}, down=10), retry_seconds=(0.05, 0.05))
    stage.start()
    stage.submit(0, [_request("a.py")])
    assert stage.wait_idle(5)
    stage.stop()
    ((_, settlement),) = delivered
    (answer,) = settlement.verifications
    assert (answer.outcome, answer.reason) == (VerificationOutcome.UNVERIFIABLE, "unreachable")


def test_names_no_source_knows_make_no_version() -> None:
    stage, delivered, metrics = _stage(Flaky({}))
    stage.start()
    stage.submit(0, [_request("a.py")])
    assert stage.wait_idle(5)
    stage.stop()
    assert delivered == []
    assert metrics.value(REQUESTS, result="unsettled") == 1


def test_a_full_queue_leaves_the_request_with_its_first_verdict_and_counts_it() -> None:
    block = threading.Event()
    stage, delivered, metrics = _stage(Flaky({"a.py": True}, block=block), threads=1, max_queue=1)
    stage.start()
    stage.submit(0, [_request("a.py")])  # taken by the thread, which waits on `block`
    time.sleep(0.3)
    stage.submit(0, [_request("a.py"), _request("a.py")])  # one queued, one without room
    assert metrics.value(REQUESTS, result="dropped") == 1
    block.set()
    assert stage.wait_idle(5)
    stage.stop()
    assert len(delivered) == 2
