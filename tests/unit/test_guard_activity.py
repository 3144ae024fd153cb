"""What the in-loop guard did in a turn, read from its spans as the adapters write them,
and what the turn came to (`processors.guard_activity`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from factledger.processors.guard_activity import (
    UNGUARDED,
    GuardActivity,
    GuardOutcome,
    guard_activity,
    guard_outcome,
)
from factledger.processors.spans import SpanEvent, SpanRecord

from .test_assembler import TRACE_A, FakeClock, add_all, agent_turn, assembler


def decision(outcome: str, action: str, at: int) -> SpanEvent:
    return SpanEvent(
        "gen_ai.evaluation.result",
        at,
        {
            "gen_ai.evaluation.name": "factledger.guard",
            "gen_ai.evaluation.score.label": outcome,
            "factledger.guard.action": action,
        },
    )


def guarded_span(
    span_id: str, decisions: Sequence[tuple[str, str, int]], name: str = "invoke_agent"
) -> SpanRecord:
    """A span with the attributes and events `telemetry.record` leaves after `decisions`
    (outcome, action, time) in that order."""
    outcome, action, _ = decisions[-1]
    attributes: Mapping[str, Any] = {
        "factledger.guard.outcome": outcome,
        "factledger.guard.action": action,
        "factledger.guard.kinds": [] if outcome == "pass" else ["fabricated_identifier"],
        "factledger.guard.checks": len(decisions),
        "factledger.guard.nudges": sum(a == "nudge" for _, a, _ in decisions),
    }
    return SpanRecord(
        TRACE_A,
        span_id,
        name,
        start_time_unix_nano=decisions[0][2] - 1,
        end_time_unix_nano=decisions[-1][2] + 1,
        attributes=attributes,
        events=tuple(decision(o, a, t) for o, a, t in decisions),
    )


@pytest.mark.parametrize(
    ("spans", "expected", "result"),
    [
        pytest.param([], UNGUARDED, "unguarded", id="no-guard-span"),
        pytest.param(
            [SpanRecord(TRACE_A, "s1", "chat", attributes={"gen_ai.request.model": "m"})],
            UNGUARDED,
            "unguarded",
            id="spans-without-guard-attributes",
        ),
        pytest.param(
            [guarded_span("s1", [("pass", "pass", 10)])],
            GuardActivity(1, 0, "pass", "pass"),
            "passed",
            id="clean-once",
        ),
        pytest.param(
            [guarded_span("s1", [("flag", "annotate", 10)])],
            GuardActivity(1, 0, "flag", "annotate"),
            "footnoted",
            id="flag-only",
        ),
        pytest.param(
            [guarded_span("s1", [("pass", "annotate", 10)])],
            GuardActivity(1, 0, "pass", "annotate"),
            "footnoted",
            id="echo-footnote",
        ),
        pytest.param(
            [guarded_span("s1", [("reject", "nudge", 10), ("pass", "pass", 20)])],
            GuardActivity(2, 1, "pass", "pass"),
            "corrected",
            id="counts-on-one-span-corrected",
        ),
        pytest.param(
            [guarded_span("s1", [("reject", "nudge", 10), ("flag", "annotate", 20)])],
            GuardActivity(2, 1, "flag", "annotate"),
            "corrected",
            id="nudged-then-only-flagged",
        ),
        pytest.param(
            [
                guarded_span("s1", [("reject", "nudge", 10)]),
                guarded_span("s2", [("reject", "nudge", 20)]),
                guarded_span("s3", [("reject", "annotate", 30)]),
            ],
            GuardActivity(3, 2, "reject", "annotate"),
            "refused",
            id="spread-over-spans-escalated-footnote",
        ),
        pytest.param(
            [
                guarded_span("s3", [("pass", "pass", 30)]),
                guarded_span("s1", [("reject", "nudge", 10)]),
            ],
            GuardActivity(2, 1, "pass", "pass"),
            "corrected",
            id="spread-over-spans-latest-decision-wins-in-any-order",
        ),
        pytest.param(
            [guarded_span("s1", [("reject", "nudge", 10), ("reject", "raise", 20)])],
            GuardActivity(2, 1, "reject", "raise"),
            "refused",
            id="raise",
        ),
        pytest.param(
            [guarded_span("s1", [("reject", "raise", 10)])],
            GuardActivity(1, 0, "reject", "raise"),
            "refused",
            id="raise-without-a-nudge",
        ),
        pytest.param(
            [guarded_span("s1", [("reject", "annotate", 10)])],
            GuardActivity(1, 0, "reject", "annotate"),
            "footnoted",
            id="reject-where-no-nudge-was-allowed",
        ),
    ],
)
def test_activity_and_result_of_a_turns_spans(
    spans: list[SpanRecord], expected: GuardActivity, result: GuardOutcome
) -> None:
    activity = guard_activity(spans)
    assert activity == expected
    assert (activity.result, guard_outcome(activity)) == (result, result)


def test_counts_stored_as_text_are_read_and_bad_values_ignored() -> None:
    span = guarded_span("s1", [("reject", "nudge", 10), ("pass", "pass", 20)])
    as_text = replace(
        span,
        attributes={
            **span.attributes,
            "factledger.guard.checks": "2",
            "factledger.guard.nudges": "1",
        },
    )
    assert guard_activity([as_text]) == GuardActivity(2, 1, "pass", "pass")
    broken = replace(span, attributes={**span.attributes, "factledger.guard.checks": True})
    assert guard_activity([broken]) == UNGUARDED


def test_the_assembled_turn_carries_the_guard_of_all_its_spans() -> None:
    """The agent span and a `factledger.guard` span below it (a span that says nothing
    else about the turn) both count."""
    clock = FakeClock()
    asm = assembler(clock)
    spans = agent_turn()
    agent = spans[-1]
    nudged = replace(
        guarded_span("x1", [("reject", "nudge", 250)], name="factledger.guard"),
        parent_span_id="g1",
        attributes={**guarded_span("x1", [("reject", "nudge", 250)]).attributes, "value": None},
    )
    passed = guarded_span("g1", [("pass", "pass", 350)])
    agent = replace(
        agent, attributes={**agent.attributes, **passed.attributes}, events=passed.events
    )
    add_all(asm, [*spans[:-1], nudged, agent])
    [done] = asm.due(5.0)
    assert done.turn.guard == GuardActivity(2, 1, "pass", "pass")
    assert done.turn.guard.result == "corrected"


def test_a_turn_without_guard_spans_is_unguarded() -> None:
    clock = FakeClock()
    asm = assembler(clock)
    add_all(asm, agent_turn())
    [done] = asm.due(5.0)
    assert done.turn.guard == UNGUARDED
