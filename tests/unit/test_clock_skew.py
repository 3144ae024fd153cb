"""The clock-skew rule: which turns count at the time they were received, and when."""

from __future__ import annotations

import json

import pytest

from factledger.collector.judge.clock_skew import receive_skew_ns, turn_times
from factledger.processors.assembly.assembler import AssembledTurn, TurnAssembler
from factledger.processors.model import Turn
from factledger.processors.spans import SpanRecord

S = 10**9
H = 3600 * S
BOUND = 7200.0
TEXT = {"type": "text", "content": "hi"}


@pytest.mark.parametrize(
    ("lags", "skew"),
    [
        pytest.param((1 * S, 2 * S, 5 * S), 0, id="correct-clock-export-delay"),
        pytest.param((-3 * H, -3 * H, -3 * H + 5 * S), 3 * H, id="clock-ahead"),
        pytest.param((5 * H, 5 * H, 5 * H + S), -5 * H, id="clock-behind"),
        pytest.param((S, S, S, 3 * H), 0, id="one-late-span-of-an-old-turn"),
        pytest.param((S, 3 * H), 0, id="a-late-span-beside-one-on-time"),
        pytest.param((-3 * H, S), 0, id="half-ahead-is-not-enough"),
        pytest.param((2 * H - S,), 0, id="within-the-bound-behind"),
        pytest.param((-2 * H + S,), 0, id="within-the-bound-ahead"),
        pytest.param((), 0, id="no-receive-time-known"),
    ],
)
def test_receive_skew_is_the_median_beyond_the_bound(lags: tuple[int, ...], skew: int) -> None:
    assert receive_skew_ns(sorted(lags), BOUND) == skew


def _assembled(start: int, end: int, received: int, lags: tuple[int, ...]) -> AssembledTurn:
    turn = Turn(tenant="default", trace_id="t", turn_id="turn", service="svc", reply="")
    return AssembledTurn(turn, 1, ("s",), start, end, "default", "svc", received, lags)


def test_a_skewed_turn_counts_at_its_receive_time_minus_its_duration() -> None:
    now = 1_800_000_000 * S
    ahead = _assembled(now + 3 * H, now + 3 * H + 10 * S, now, (-3 * H,))
    times = turn_times(ahead, BOUND)
    assert (times.started_at_ns, times.agent_started_at_ns) == (now - 10 * S, now + 3 * H)
    assert times.skew_seconds == 3 * 3600 and times.skewed


def test_a_turn_whose_own_times_hold_keeps_them() -> None:
    now = 1_800_000_000 * S
    correct = turn_times(_assembled(now - 10 * S, now - S, now, (S,)), BOUND)
    assert (correct.started_at_ns, correct.agent_started_at_ns) == (now - 10 * S, now - 10 * S)
    assert correct.skew_seconds == 0.0 and not correct.skewed
    unknown = turn_times(_assembled(now - 5 * H, now - 5 * H + S, 0, ()), BOUND)
    assert unknown.started_at_ns == now - 5 * H and not unknown.skewed


def _span(span_id: str, start: int, end: int, received: int) -> SpanRecord:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    if span_id == "a":
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "x"}
    return SpanRecord(
        trace_id="1" * 32,
        span_id=span_id * 16,
        name=span_id,
        parent_span_id="" if span_id == "a" else "a" * 16,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes={
            **attributes,
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [TEXT]}]),
        },
        received_at_unix_nano=received,
    )


def test_the_assembler_keeps_the_latest_receive_time_and_every_spans_lag() -> None:
    assembler = TurnAssembler(lambda: 0.0)
    assembler.add(_span("a", 100 * S, 110 * S, 200 * S))
    assembler.add(_span("b", 101 * S, 105 * S, 190 * S))
    assembler.add(_span("c", 106 * S, 109 * S, 0))  # unknown: no lag
    (turn,) = assembler.flush_all()
    assert turn.received_at_ns == 200 * S
    assert turn.receive_lags_ns == (85 * S, 90 * S)
    assert turn.at_version(2).receive_lags_ns == turn.receive_lags_ns


def test_receive_times_are_not_part_of_what_a_span_is() -> None:
    assert _span("b", 1, 2, 3) == _span("b", 1, 2, 4)
