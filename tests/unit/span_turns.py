"""Test helpers for span-shape tests: a span record, and spans judged into turns.

`judged` runs spans through a real `TurnAssembler` on a fake clock and the default
validators, as the pipeline does, so a test states the spans and reads the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from factledger.processors.assembly.assembler import TurnAssembler
from factledger.processors.model import Turn, Verdict
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord

TRACE = "5b8efff798038103d269b633813fc60c"


def record(
    span_id: str,
    name: str,
    attributes: Mapping[str, Any],
    *,
    parent: str = "",
    start: int = 1_000,
    end: int = 2_000,
    status: int = 0,
    scope: str = "",
) -> SpanRecord:
    """A span of the trace `TRACE` with the given attributes."""
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        status_code=status,
        attributes=dict(attributes),
        scope_name=scope,
    )


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def judged(spans: Sequence[SpanRecord], *, nested: bool = False) -> list[tuple[Turn, Verdict]]:
    """Every turn of the spans, in the order they ended, with its default verdict: the
    turns of their own, and with `nested` the sub-agents' turns nested in them too."""
    clock = FakeClock()
    assembler = TurnAssembler(clock, grace_seconds=1.0)
    for span in spans:
        assembler.add(span)
    clock.now = 10.0
    turns = sorted([*assembler.due(), *assembler.flush_all()], key=lambda t: t.ended_at_ns)
    turns = [t for t in turns if nested or not t.parent_turn_id]
    runner = default_runner()
    return [(t.turn, runner.validate(t.turn)) for t in turns]


def only_turn(spans: Sequence[SpanRecord]) -> tuple[Turn, Verdict]:
    """The one turn of its own of the spans (fails when they give another number)."""
    turns = judged(spans)
    assert len(turns) == 1, [t.reply for t, _ in turns]
    return turns[0]
