"""TurnAssembler: grouping, completion timing, versions, joins and bounds (fake clock)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from factledger.processors.assembly.assembler import (
    MAX_SPANS_PER_GROUP,
    AssembledTurn,
    PriorVerdict,
    TurnAssembler,
)
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    NormalizedSpan,
    ToolCallPart,
    ToolExecution,
)
from factledger.processors.spans import SpanRecord

TRACE_A = "a" * 32
TRACE_B = "b" * 32
TRACE_C = "c" * 32


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def carried(span: SpanRecord) -> NormalizedSpan | None:
    """The test normalizer: each span carries its normalized value as an attribute."""
    value = span.attributes.get("value")
    if value == "boom":
        raise ValueError("unreadable span")
    return value


def record(
    trace: str, value: NormalizedSpan | str | None, *, span_id: str = "", parent: str = ""
) -> SpanRecord:
    if span_id == "":
        assert not isinstance(value, str | None)
        span_id = value.span_id
    start = getattr(value, "start_time_unix_nano", 0)
    end = getattr(value, "end_time_unix_nano", 0)
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name="span",
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes={"value": value},
        resource_attributes={"service.name": "agent-svc"},
    )


def user(text: str) -> ChatMessage:
    return ChatMessage("user", text)


def asks(call_id: str, name: str) -> ChatMessage:
    return ChatMessage("assistant", tool_calls=(ToolCallPart(call_id, name, "{}"),))


def says(text: str) -> ChatMessage:
    return ChatMessage("assistant", text)


def result(call_id: str, text: str) -> ChatMessage:
    return ChatMessage("tool", text, tool_call_id=call_id)


def step(
    span_id: str,
    inputs: Sequence[ChatMessage],
    output: ChatMessage,
    at: int = 0,
    conversation_id: str = "",
) -> LlmStep:
    return LlmStep(
        span_id,
        input_messages=tuple(inputs),
        output_messages=(output,),
        start_time_unix_nano=at,
        end_time_unix_nano=at + 5,
        conversation_id=conversation_id,
    )


ASK = (user("What is the status of order W42?"),)
LOOKUP = asks("c1", "get_order")
FOUND = result("c1", '{"status": "shipped"}')
ANSWER = says("Order W42 has shipped.")
S1 = step("s1", ASK, LOOKUP, at=100)
S2 = step("s2", (*ASK, LOOKUP, FOUND), ANSWER, at=300)
TOOL = ToolExecution(
    "t1", "get_order", "c1", result='{"status": "shipped"}', start_time_unix_nano=200
)
AGENT = AgentInvocation("g1", agent_name="support", start_time_unix_nano=50, end_time_unix_nano=400)


def agent_turn(trace: str = TRACE_A) -> list[SpanRecord]:
    """An agent run as the SDK exports it: children first, the agent span last."""
    return [
        record(trace, S1, parent="g1"),
        record(trace, TOOL, parent="g1"),
        record(trace, S2, parent="g1"),
        record(trace, AGENT),
    ]


def assembler(clock: FakeClock, **options: int | float) -> TurnAssembler:
    return TurnAssembler(clock, normalizer=carried, **options)  # type: ignore[arg-type]


def add_all(asm: TurnAssembler, spans: Sequence[SpanRecord]) -> None:
    for span in spans:
        asm.add(span)


def summary(turns: Sequence[AssembledTurn]) -> list[tuple[str, int, tuple[str, ...]]]:
    return [(t.turn.user_message, t.version, t.span_ids) for t in turns]


# --- when a turn is complete ---------------------------------------------------------------


def test_agent_turn_is_due_after_the_grace_period():
    clock = FakeClock()
    asm = assembler(clock)
    add_all(asm, agent_turn())
    assert asm.open_count == 1
    assert asm.due(1.9) == []
    [done] = asm.due(2.0)
    assert (done.version, done.span_ids) == (1, ("g1", "s1", "s2", "t1"))
    assert (done.turn.reply, done.turn.agent, done.turn.trace_id) == (
        ANSWER.text,
        "support",
        TRACE_A,
    )
    assert (done.started_at_ns, done.ended_at_ns) == (50, 400)
    assert (done.tenant, done.service) == ("default", "agent-svc")
    assert done.turn.tool_calls[0].span_id == "t1"
    assert asm.open_count == 0
    assert asm.due(10.0) == []


def test_every_span_restarts_the_grace_period():
    clock = FakeClock()
    asm = assembler(clock)
    spans = agent_turn()
    add_all(asm, spans[:3])
    clock.now = 1.5
    asm.add(spans[3])
    assert asm.due(3.0) == []
    assert len(asm.due(3.5)) == 1


def test_agentless_trace_waits_while_its_latest_call_asked_for_tools():
    clock = FakeClock()
    asm = assembler(clock)
    asm.add(record(TRACE_A, S1))
    assert asm.due(30.0) == []
    [done] = asm.due(60.0)  # max wait: judged with an empty reply
    assert (done.turn.reply, [c.name for c in done.turn.tool_calls]) == ("", ["get_order"])


def test_agentless_trace_is_due_once_the_reply_arrived():
    clock = FakeClock()
    asm = assembler(clock)
    add_all(asm, [record(TRACE_A, S1), record(TRACE_A, TOOL), record(TRACE_A, S2)])
    [done] = asm.due(2.0)
    assert (done.turn.reply, done.span_ids) == (ANSWER.text, ("s1", "s2", "t1"))


def test_busy_group_is_judged_at_max_wait():
    clock = FakeClock()
    asm = assembler(clock, max_wait_seconds=5.0)
    for i in range(6):
        clock.now = float(i)
        asm.add(record(TRACE_A, step(f"s{i}", ASK, LOOKUP, at=i + 1)))
    assert len(asm.due(5.0)) == 1


def test_flush_all_judges_what_is_open():
    asm = assembler(FakeClock())
    asm.add(record(TRACE_A, S1))
    assert [t.turn.user_message for t in asm.flush_all()] == [ASK[0].text]
    assert asm.open_count == 0


# --- late spans and duplicates --------------------------------------------------------------


def test_late_span_reopens_the_turn_as_version_two():
    clock = FakeClock()
    asm = assembler(clock)
    spans = agent_turn()
    add_all(asm, [spans[0], spans[2], spans[3]])
    [first] = asm.due(2.0)
    clock.now = 10.0
    asm.add(spans[1])  # the tool span, after the verdict
    assert asm.open_count == 1
    [second] = asm.due(12.0)
    assert (first.version, second.version) == (1, 2)
    assert second.turn.turn_id == first.turn.turn_id
    assert "t1" in second.span_ids and "t1" not in first.span_ids


def test_late_agent_span_keeps_the_turn_id():
    clock = FakeClock()
    asm = assembler(clock)
    spans = agent_turn()
    add_all(asm, spans[:3])
    [first] = asm.due(2.0)  # judged agent-less
    clock.now = 5.0
    asm.add(spans[3])
    [second] = asm.due(7.0)
    assert (second.version, second.turn.turn_id) == (2, first.turn.turn_id)
    assert second.turn.agent == "support"


@pytest.mark.parametrize("after_verdict", [False, True], ids=["while-open", "after-verdict"])
def test_resent_span_is_ignored_and_counted(after_verdict):
    clock = FakeClock()
    asm = assembler(clock)
    spans = agent_turn()
    add_all(asm, spans)
    if after_verdict:
        assert len(asm.due(2.0)) == 1
    clock.now = 3.0
    asm.add(spans[1])
    assert asm.drops == {"duplicate": 1}
    assert len(asm.due(20.0)) == (0 if after_verdict else 1)
    assert asm.open_count == 0


def test_late_span_of_another_turn_does_not_repeat_the_judged_one():
    clock = FakeClock()
    asm = assembler(clock)
    add_all(asm, [record(TRACE_A, S1), record(TRACE_A, S2)])
    [first] = asm.due(2.0)
    clock.now = 5.0
    follow_up = (*ASK, LOOKUP, FOUND, ANSWER, user("Thanks, cancel it."))
    asm.add(record(TRACE_A, step("s3", follow_up, says("Cancelled."), at=500)))
    [second] = asm.due(7.0)
    assert (second.turn.user_message, second.version) == ("Thanks, cancel it.", 1)
    assert second.turn.turn_id != first.turn.turn_id


# --- bounds and bad input ----------------------------------------------------------------------


def test_oldest_open_group_is_judged_early_when_full():
    clock = FakeClock()
    asm = assembler(clock, max_open_turns=2)
    for i, trace in enumerate((TRACE_A, TRACE_B, TRACE_C)):
        asm.add(record(trace, step(f"s{i}", (user(f"request {i}"),), LOOKUP)))
    assert asm.open_count == 2
    assert asm.drops == {"max_open_turns": 1}
    assert [t.turn.user_message for t in asm.due(0.0)] == ["request 0"]


def test_group_holds_a_bounded_number_of_spans():
    asm = assembler(FakeClock())
    asm.add(record(TRACE_A, S2))
    for i in range(MAX_SPANS_PER_GROUP):
        asm.add(record(TRACE_A, None, span_id=f"link{i}", parent="s2"))
    assert asm.drops == {"group_full": 1}
    [done] = asm.due(2.0)
    assert done.span_ids == ("s2",)


def test_late_span_that_is_no_turn_span_reopens_nothing():
    clock = FakeClock()
    asm = assembler(clock)
    add_all(asm, agent_turn())
    assert len(asm.due(2.0)) == 1
    clock.now = 5.0
    asm.add(record(TRACE_A, None, span_id="http", parent="g1"))
    assert (asm.open_count, asm.due(20.0)) == (0, [])


def test_unreadable_span_is_counted_and_skipped():
    asm = assembler(FakeClock())
    asm.add(record(TRACE_A, "boom", span_id="x1"))
    assert (asm.drops, asm.open_count) == ({"normalize_error": 1}, 0)


def test_spans_outside_any_turn_open_nothing():
    asm = assembler(FakeClock())
    asm.add(record(TRACE_A, None, span_id="http"))
    assert asm.open_count == 0


# --- cutting traces into turns -----------------------------------------------------------------


def test_trace_with_two_agent_runs_gives_two_turns_with_their_subtrees():
    clock = FakeClock()
    asm = assembler(clock)
    second_ask = (user("And order W43?"),)
    spans = [
        *agent_turn(),
        # The second run's call sits under a framework span that says nothing itself.
        record(TRACE_A, None, span_id="chain", parent="g2"),
        record(TRACE_A, step("s9", second_ask, says("W43 is pending."), at=600), parent="chain"),
        record(TRACE_A, AgentInvocation("g2", start_time_unix_nano=550, end_time_unix_nano=700)),
    ]
    add_all(asm, spans)
    turns = asm.due(2.0)
    assert summary(turns) == [
        (ASK[0].text, 1, ("g1", "s1", "s2", "t1")),
        ("And order W43?", 1, ("chain", "g2", "s9")),
    ]


def test_call_under_a_parent_never_received_joins_the_agent_run_around_it():
    asm = assembler(FakeClock())
    spans = agent_turn()
    add_all(asm, [spans[0], record(TRACE_A, S2, parent="lost"), spans[3]])
    [done] = asm.due(2.0)
    assert done.span_ids == ("g1", "s1", "s2")


def test_agentless_trace_with_two_requests_splits_at_the_new_user_message():
    asm = assembler(FakeClock())
    follow_up = (*ASK, LOOKUP, FOUND, ANSWER, user("Thanks, cancel it."))
    add_all(
        asm,
        [
            record(TRACE_A, S1),
            record(TRACE_A, S2),
            record(TRACE_A, step("s3", follow_up, says("Cancelled."), at=500)),
        ],
    )
    assert [t.turn.user_message for t in asm.due(2.0)] == [ASK[0].text, "Thanks, cancel it."]


# --- joining per-call traces (no agent span, every call its own trace) -------------------------

CHAIN = [
    (TRACE_A, S1),
    (TRACE_B, step("s2", (*ASK, LOOKUP, FOUND), asks("c2", "get_tracking"), at=300)),
    (
        TRACE_C,
        step(
            "s3",
            (*ASK, LOOKUP, FOUND, asks("c2", "get_tracking"), result("c2", "DHL")),
            ANSWER,
            at=500,
        ),
    ),
]


@pytest.mark.parametrize(
    "order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)], ids=["in-order", "reversed", "first-call-last"]
)
def test_per_call_traces_extending_each_other_are_one_turn(order):
    asm = assembler(FakeClock())
    for i in order:
        trace, value = CHAIN[i]
        asm.add(record(trace, value))
    [done] = asm.due(2.0)
    assert (done.turn.reply, done.span_ids) == (ANSWER.text, ("s1", "s2", "s3"))
    assert [c.name for c in done.turn.tool_calls] == ["get_order", "get_tracking"]
    assert done.turn.trace_id == TRACE_A  # the first call's trace


def test_chain_continued_after_its_verdict_is_version_two():
    clock = FakeClock()
    asm = assembler(clock)
    asm.add(record(TRACE_A, S1))
    [first] = asm.due(60.0)
    clock.now = 61.0
    asm.add(record(TRACE_B, step("s2", (*ASK, LOOKUP, FOUND), ANSWER, at=300)))
    [second] = asm.due(63.0)
    assert (second.version, second.turn.turn_id) == (2, first.turn.turn_id)
    assert second.turn.reply == ANSWER.text


def test_same_request_from_two_users_is_not_joined():
    asm = assembler(FakeClock())
    add_all(asm, [record(TRACE_A, S1), record(TRACE_B, step("s9", ASK, LOOKUP, at=100))])
    assert asm.open_count == 2


@pytest.mark.parametrize(
    ("second_input", "turns"),
    [
        ((*ASK, says("Checking.")), 1),
        ((*ASK, says("Checking."), says("Done."), user("Cancel it.")), 2),
    ],
    ids=["same-request-joins", "new-request-is-a-new-turn"],
)
def test_conversation_id_joins_calls_of_one_request(second_input, turns):
    asm = assembler(FakeClock())
    asm.add(record(TRACE_A, step("s1", ASK, LOOKUP, conversation_id="conv-7")))
    asm.add(record(TRACE_B, step("s2", second_input, ANSWER, conversation_id="conv-7")))
    assert asm.open_count == turns
    assert all(t.turn.conversation_id == "conv-7" for t in asm.flush_all())


# --- verdicts stored before a restart ----------------------------------------------------


def _judged_chain() -> AssembledTurn:
    asm = assembler(FakeClock())
    add_all(asm, [record(trace, value) for trace, value in CHAIN])
    [done] = asm.due(2.0)
    return done


def _prior(done: AssembledTurn, span_ids: tuple[str, ...] | None = None) -> PriorVerdict:
    return PriorVerdict("default", done.turn.turn_id, done.version, span_ids or done.span_ids)


def test_spans_read_back_with_their_verdict_are_not_judged_again():
    done = _judged_chain()
    asm = assembler(FakeClock())
    asm.remember(_prior(done))
    add_all(asm, [record(trace, value) for trace, value in CHAIN])
    assert asm.due(2.0) == []


def test_a_span_the_stored_verdict_lacks_gives_the_next_version():
    done = _judged_chain()
    asm = assembler(FakeClock())
    asm.remember(_prior(done, ("s1", "s2")))  # s3 came after the verdict
    add_all(asm, [record(trace, value) for trace, value in CHAIN])
    [again] = asm.due(2.0)
    assert (again.turn.turn_id, again.version, again.span_ids) == (
        done.turn.turn_id,
        2,
        ("s1", "s2", "s3"),
    )


def test_one_trace_of_a_joined_turn_read_back_alone_is_not_a_turn_of_its_own():
    done = _judged_chain()
    asm = assembler(FakeClock())
    asm.remember(_prior(done))
    asm.add(record(*CHAIN[2]))  # the last call's trace: it would make a turn by itself
    assert asm.due(2.0) == []
    other_tenant = record(*CHAIN[2])
    asm.add(dataclasses.replace(other_tenant, tenant="globex"))
    [theirs] = asm.due(4.0)
    assert theirs.tenant == "globex" and theirs.version == 1
