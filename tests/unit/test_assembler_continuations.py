"""TurnAssembler: calls that only hand back tool results join the call that asked for
them across traces; a group with nothing to build a turn from is counted (fake clock)."""

from __future__ import annotations

import pytest

from factledger.processors.assembly.assembler import TurnAssembler
from factledger.processors.normalize.base import (
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
CALL = "call_Kud0j0DxWSmLzv9W5m6qVqXn"
ASK = ChatMessage("user", "What is the status of order W42?")
SHIPPED = '{"status": "shipped"}'


def carried(span: SpanRecord) -> NormalizedSpan | None:
    value = span.attributes.get("value")
    assert value is None or isinstance(value, LlmStep | ToolExecution)
    return value


def record(trace: str, value: LlmStep | ToolExecution) -> SpanRecord:
    return SpanRecord(
        trace_id=trace,
        span_id=value.span_id,
        name="span",
        start_time_unix_nano=value.start_time_unix_nano,
        end_time_unix_nano=value.end_time_unix_nano,
        attributes={"value": value},
    )


def step(span_id: str, inputs: tuple[ChatMessage, ...], output: ChatMessage, at: int) -> LlmStep:
    return LlmStep(
        span_id,
        input_messages=inputs,
        output_messages=(output,),
        start_time_unix_nano=at,
        end_time_unix_nano=at + 5,
    )


def asks(call_id: str) -> ChatMessage:
    return ChatMessage("assistant", tool_calls=(ToolCallPart(call_id, "get_order", "{}"),))


def request(call_id: str = CALL, at: int = 100) -> LlmStep:
    return step("s1", (ASK,), asks(call_id), at)


def continuation(call_id: str = CALL, span_id: str = "s2", at: int = 300) -> LlmStep:
    handed_back = ChatMessage("tool", SHIPPED, tool_call_id=call_id)
    return step(span_id, (handed_back,), ChatMessage("assistant", "W42 has shipped."), at)


def assembler() -> TurnAssembler:
    return TurnAssembler(lambda: 0.0, normalizer=carried)


@pytest.mark.parametrize(
    "continuation_first", [False, True], ids=["request-first", "continuation-first"]
)
def test_per_call_trace_handing_back_a_result_joins_the_call_that_asked(continuation_first):
    spans = [record(TRACE_A, request()), record(TRACE_B, continuation())]
    asm = assembler()
    for span in reversed(spans) if continuation_first else spans:
        asm.add(span)
    assert asm.open_count == 1
    [done] = asm.due(2.0)
    assert (done.turn.user_message, done.turn.reply) == (ASK.text, "W42 has shipped.")
    assert [(c.call_id, c.result) for c in done.turn.tool_calls] == [(CALL, SHIPPED)]
    assert (done.span_ids, done.turn.trace_id) == (("s1", "s2"), TRACE_A)


def test_short_call_ids_do_not_join_traces():
    # "call_0" repeats across runs of some local models: it says nothing about identity.
    asm = assembler()
    asm.add(record(TRACE_A, request("call_0")))
    asm.add(record(TRACE_B, continuation("call_0")))
    assert asm.open_count == 2


def test_continuation_of_a_trace_being_assembled_stays_in_its_trace():
    # The same id in two runs; the other run asked last, so the id now points there.
    asm = assembler()
    asm.add(record(TRACE_B, step("s8", (ASK,), asks(CALL), at=200)))
    asm.add(record(TRACE_A, request()))
    asm.add(record(TRACE_B, continuation(span_id="s9", at=400)))
    assert sorted(t.span_ids for t in asm.flush_all()) == [("s1",), ("s8", "s9")]


def test_tool_spans_without_any_call_or_agent_give_no_turn_and_are_counted():
    asm = assembler()
    asm.add(record(TRACE_C, ToolExecution("t1", "get_order", CALL, result=SHIPPED)))
    assert asm.due(2.0) == []  # waits for the calls, up to the maximum wait
    assert asm.flush_all() == []
    assert asm.drops == {"no_turn_root": 1}
