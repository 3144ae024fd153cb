"""JudgingCore on a fake clock: what it judges when, what it sets aside and how it reports
that. Its three runners are held to one contract in tests/integration/test_judging_contract.py;
these are the core's own seams (reports made once, a closed core, one bad span)."""

from __future__ import annotations

from factledger.collector import otlp
from factledger.processors.judging.core import JudgingCore
from factledger.processors.judging.drops import Drop
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord
from tests.integration.otlp_turns import turn_request
from tests.unit.span_turns import FakeClock

GRACE = 2.0


def _spans(index: int) -> list[SpanRecord]:
    body, _ = turn_request(index, hallucinate=index % 2 == 0)
    return list(otlp.decode_request(body, otlp.JSON).spans)


def _core(clock: FakeClock) -> JudgingCore:
    return JudgingCore(default_runner(), grace_seconds=GRACE, max_wait_seconds=60, clock=clock)


def test_due_turns_wait_for_the_grace_and_a_flush_takes_them_at_once() -> None:
    clock = FakeClock()
    core = _core(clock)
    core.add([*_spans(1), *_spans(2)])
    assert (core.judge().turns, core.open_turns) == ((), 2)
    clock.now = GRACE + 0.1
    due = core.judge()
    assert [(j.assembled.turn.trace_id, j.verdict.outcome) for j in due.turns] == [
        (f"{1:032x}", "pass"),
        (f"{2:032x}", "reject"),
    ]
    core.add(_spans(3))
    flushed = core.judge(flush=True)
    assert (len(flushed.turns), flushed.flushed, flushed.open_turns) == (1, True, 0)


def test_each_drop_is_reported_once_and_kept_in_the_totals() -> None:
    core = _core(FakeClock())
    spans = _spans(1)
    core.add(spans)
    core.add(spans[:2])
    assert core.judge().drops == {Drop.DUPLICATE: 2}
    assert core.judge().drops == {}
    core.count(Drop.QUEUE_FULL)  # a transport's count, reported with the next judgement
    assert core.judge().drops == {Drop.QUEUE_FULL: 1}
    assert core.drops == {Drop.DUPLICATE: 2, Drop.QUEUE_FULL: 1}


def test_shutdown_judges_every_open_turn_once_and_later_spans_are_counted() -> None:
    core = _core(FakeClock())
    core.add(_spans(1))
    first = core.shutdown()
    assert (len(first.turns), first.flushed, core.closed) == (1, True, True)
    assert core.shutdown().turns == ()
    core.add(_spans(2))
    late = core.judge(flush=True)
    assert (late.turns, late.drops, core.open_turns) == ((), {Drop.SHUTDOWN: 4}, 0)


class FailingOnce(FakeClock):
    """A clock that raises the next time it is read once `armed`: a fault inside the
    assembler, past its own guard around each convention's reader."""

    armed = False

    def __call__(self) -> float:
        if self.armed:
            self.armed = False
            raise RuntimeError("a clock fault")
        return self.now


def test_a_span_the_assembler_raises_on_costs_that_span_alone() -> None:
    clock = FailingOnce()
    core = _core(clock)
    spans = _spans(1)
    clock.armed = True
    core.add(spans)
    judgement = core.judge(flush=True)
    assert judgement.drops == {Drop.ASSEMBLY_ERROR: 1}
    assert [j.assembled.turn.trace_id for j in judgement.turns] == [f"{1:032x}"]
