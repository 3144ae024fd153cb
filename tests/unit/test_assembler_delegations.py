"""A sub-agent with model calls of its own is judged as a turn nested in its lead's."""

from __future__ import annotations

import pickle
from collections.abc import Sequence

from factledger.processors.assembly.assembler import AssembledTurn
from factledger.processors.kinds import Outcome
from factledger.processors.normalize.base import AgentInvocation, LlmStep, ToolExecution
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord

from .test_assembler import (
    TRACE_A,
    FakeClock,
    add_all,
    asks,
    assembler,
    record,
    result,
    says,
    step,
    user,
)

REQUEST = (user("Summarise the release notes and save the summary."),)
DELEGATE = asks("d1", "ask_writer")
WRITER_TASK = (user("Write a summary of the release notes to notes.md."),)
WRITE = asks("w1", "write_file")
WRITE_FAILED = result("w1", "Error: permission denied")
WRITER_CLAIM = says("I saved the summary to notes.md.")
LEAD_REPLY = says("The writer is done with the summary.")

LEAD = AgentInvocation("g1", agent_name="planner", start_time_unix_nano=10, end_time_unix_nano=900)
LEAD_ASKS = step("l1", REQUEST, DELEGATE, at=20)
DELEGATION = ToolExecution(
    "t1",
    "ask_writer",
    "d1",
    result="I saved the summary to notes.md.",
    start_time_unix_nano=100,
    end_time_unix_nano=700,
)
WRITER = AgentInvocation(
    "g2", agent_name="writer", start_time_unix_nano=110, end_time_unix_nano=690
)
WRITER_ASKS = step("w1s", WRITER_TASK, WRITE, at=120)
WRITE_SPAN = ToolExecution(
    "t2",
    "write_file",
    "w1",
    result="Error: permission denied",
    error=True,
    start_time_unix_nano=200,
    end_time_unix_nano=210,
)
WRITER_SAYS = step("w2s", (*WRITER_TASK, WRITE, WRITE_FAILED), WRITER_CLAIM, at=300)
DELEGATED = result("d1", "I saved the summary to notes.md.")
LEAD_SAYS = step("l2", (*REQUEST, DELEGATE, DELEGATED), LEAD_REPLY, at=800)


def delegation_trace(*writer_steps: LlmStep) -> list[SpanRecord]:
    """A planner that calls a writer agent as a tool; the writer's spans run under it."""
    return [
        record(TRACE_A, LEAD_ASKS, parent="g1"),
        record(TRACE_A, DELEGATION, parent="g1"),
        record(TRACE_A, WRITER, parent="t1"),
        *(record(TRACE_A, s, parent="g2") for s in writer_steps),
        record(TRACE_A, WRITE_SPAN, parent="g2"),
        record(TRACE_A, LEAD_SAYS, parent="g1"),
        record(TRACE_A, LEAD),
    ]


def judged(spans: Sequence[SpanRecord]) -> list[AssembledTurn]:
    asm = assembler(FakeClock())
    add_all(asm, spans)
    return asm.flush_all()


def lead_only(spans: Sequence[SpanRecord]) -> list[AssembledTurn]:
    """The trace without the writer's agent span: what the lead's turn was before."""
    return judged([s for s in spans if s.span_id != "g2"])


def test_sub_agent_with_its_own_model_calls_is_a_turn_nested_in_the_lead():
    lead, nested = judged(delegation_trace(WRITER_ASKS, WRITER_SAYS))

    assert (lead.turn.agent, lead.parent_turn_id) == ("planner", "")
    assert nested.turn.agent == "writer"
    assert nested.parent_turn_id == lead.turn.turn_id
    assert nested.turn.turn_id not in ("", lead.turn.turn_id)
    assert nested.turn.user_message == WRITER_TASK[0].text
    assert nested.turn.reply == WRITER_CLAIM.text
    assert [c.name for c in nested.turn.tool_calls] == ["write_file"]
    assert nested.span_ids == ("g2", "t2", "w1s", "w2s")
    assert nested.version == 1


def test_the_nested_turn_is_rejected_and_the_lead_keeps_its_own_verdict():
    lead, nested = judged(delegation_trace(WRITER_ASKS, WRITER_SAYS))
    runner = default_runner()

    assert runner.validate(nested.turn).outcome is Outcome.REJECT
    # The lead's turn is what it was without the nested one: its own request and reply,
    # the delegation's result as its evidence, the writer's spans among its own.
    (before,) = lead_only(delegation_trace(WRITER_ASKS, WRITER_SAYS))
    assert lead.turn == before.turn
    assert lead.span_ids == tuple(sorted((*before.span_ids, "g2")))
    assert (lead.turn.user_message, lead.turn.reply) == (REQUEST[0].text, LEAD_REPLY.text)
    assert runner.validate(lead.turn).outcome == runner.validate(before.turn).outcome


def test_sub_agent_without_a_model_call_of_its_own_is_no_turn():
    (lead,) = judged(delegation_trace())

    assert lead.turn.agent == "planner"


def test_inner_agent_whose_calls_are_the_turns_conversation_is_no_delegation():
    # A run span around the agent that answers the user (a crew, a workflow): the inner
    # agent's calls are the turn's own conversation, so there is one turn.
    run = AgentInvocation("r1", agent_name="crew", start_time_unix_nano=5, end_time_unix_nano=950)
    spans = [
        record(TRACE_A, run),
        record(TRACE_A, LEAD, parent="r1"),
        record(TRACE_A, LEAD_ASKS, parent="g1"),
        record(TRACE_A, DELEGATION, parent="g1"),
        record(TRACE_A, LEAD_SAYS, parent="g1"),
    ]

    (turn,) = judged(spans)

    assert turn.parent_turn_id == ""


def test_a_late_span_of_the_sub_agent_gives_both_turns_their_next_version():
    clock = FakeClock()
    asm = assembler(clock)
    spans = delegation_trace(WRITER_ASKS, WRITER_SAYS)
    add_all(asm, [s for s in spans if s.span_id != "t2"])
    first = {t.turn.agent: t for t in asm.flush_all()}
    add_all(asm, [s for s in spans if s.span_id == "t2"])
    second = {t.turn.agent: t for t in asm.flush_all()}

    assert {a: t.version for a, t in second.items()} == {"planner": 2, "writer": 2}
    assert second["writer"].turn.turn_id == first["writer"].turn.turn_id
    assert second["writer"].parent_turn_id == first["planner"].turn.turn_id


def test_the_parent_id_survives_pickling_and_a_new_version():
    _, nested = judged(delegation_trace(WRITER_ASKS, WRITER_SAYS))

    again = pickle.loads(pickle.dumps(nested))

    assert again.parent_turn_id == nested.parent_turn_id
    assert nested.at_version(2).parent_turn_id == nested.parent_turn_id
