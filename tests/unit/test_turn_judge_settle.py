"""The service's judge with verification on: requests out, settlements in as rows of the
next version (collector.judge.turn_judge.TurnJudge)."""

from __future__ import annotations

from factledger.collector import otlp, rows
from factledger.collector.judge.turn_judge import TurnJudge
from factledger.processors.judging.core import Settlement
from factledger.processors.runner import default_runner
from factledger.processors.verification.base import Verification, VerificationOutcome
from tests.integration.otlp_turns import turn_request
from tests.unit.span_turns import FakeClock

REPLY = "Order #W0000001 has shipped; the change is 9d22a7c."


def _judge(clock: FakeClock) -> TurnJudge:
    runner = default_runner()
    return TurnJudge(
        runner,
        grace_seconds=1.0,
        max_wait_seconds=60.0,
        clock=clock,
        verify=True,
        grade=runner.graded,
    )


def _column(row: list[object], name: str) -> object:
    return row[rows.TURN_COLUMNS.index(name)]


def test_a_settlement_becomes_the_next_versions_rows_counted_once() -> None:
    clock = FakeClock()
    judge = _judge(clock)
    body, _ = turn_request(1, hallucinate=False, reply=REPLY)
    judge.judge(list(otlp.decode_request(body, otlp.JSON).spans))
    clock.now = 5.0
    first = judge.judge([])
    (request,) = first.requests
    assert [_column(r, "Version") for r in first.turn_rows] == [1]
    assert first.verification_rows == []
    (subject,) = request.subjects
    answer = Verification(subject, VerificationOutcome.CONFIRMED, "git:acme/site", answer="none")
    settled = judge.settle([Settlement(request, (answer,))])
    ((row,),) = [settled.turn_rows]
    assert (_column(row, "Version"), _column(row, "Verdict")) == (2, "reject")
    (stored,) = settled.verification_rows
    keyed = dict(zip(rows.VERIFICATION_COLUMNS, stored, strict=True))
    assert (keyed["Name"], keyed["Outcome"], keyed["Source"]) == (
        "9d22a7c",
        "confirmed",
        "git:acme/site",
    )
    assert keyed["FindingKind"] == "fabricated_identifier"  # the finding it became
    assert settled.requests == []
    assert not [c for c in settled.counts if c.name == "factledger_turns_validated_total"]
    stale = judge.settle([Settlement(request, (answer,))])
    assert stale.turn_rows == []
    assert [(c.name, c.amount) for c in stale.counts] == [
        ("factledger_verifications_stale_total", 1)
    ]
