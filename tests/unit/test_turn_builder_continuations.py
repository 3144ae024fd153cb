"""turn_builder: calls that record no history, tool calls without ids, results by name.

Frameworks that send only what is new (OpenAI Responses with a previous response id) or
record no input at all (Claude Agent SDK through LangSmith) write LLM calls that continue
the turn of an earlier call; Gemini writes tool calls without ids. The turn must still
carry the request, every call with its result, and the reply.
"""

from __future__ import annotations

import pytest

from factledger.processors.assembly.turn_builder import (
    ANONYMOUS_CALL_PREFIX,
    TurnSpans,
    awaits_tools,
    build_turn,
    continues_turn,
    split_turns,
)
from factledger.processors.normalize.base import (
    ChatMessage,
    LlmStep,
    ToolCallPart,
    ToolExecution,
)
from factledger.processors.runner import default_runner

ASK = ChatMessage("user", "What's the weather in Oslo and Rome?")
SYSTEM = ChatMessage("system", "You are a weather agent.")


def says(text: str, *calls: ToolCallPart) -> ChatMessage:
    return ChatMessage("assistant", text, tool_calls=calls)


def asks(call_id: str, city: str) -> ToolCallPart:
    return ToolCallPart(call_id, "get_weather", f'{{"city": "{city}"}}')


def answer(call_id: str, text: str) -> ChatMessage:
    return ChatMessage("tool", text, tool_call_id=call_id)


def step(span_id: str, inputs: tuple[ChatMessage, ...], output: ChatMessage, at: int) -> LlmStep:
    return LlmStep(
        span_id,
        input_messages=inputs,
        output_messages=(output,),
        start_time_unix_nano=at,
        end_time_unix_nano=at + 5,
    )


def ran(span_id: str, city: str, result: str, at: int, call_id: str = "") -> ToolExecution:
    return ToolExecution(
        span_id,
        "get_weather",
        call_id,
        arguments=f'{{"city": "{city}"}}',
        result=result,
        start_time_unix_nano=at,
    )


OSLO, ROME = "Oslo: rain, 9°C", "Rome: sun, 24°C"
REPLY = says("Oslo has rain at 9°C; Rome is sunny at 24°C.")


@pytest.mark.parametrize(
    ("inputs", "continues"),
    [
        pytest.param((), True, id="no-input-recorded"),
        pytest.param((answer("c1", OSLO),), True, id="only-tool-results"),
        pytest.param((says("", asks("c1", "Oslo")), answer("c1", OSLO)), True, id="no-request"),
        pytest.param((ASK,), False, id="user-request"),
        pytest.param((SYSTEM,), False, id="system-prompt-alone"),
    ],
)
def test_a_call_continues_a_turn_when_its_input_opens_no_request(inputs, continues):
    assert continues_turn(step("s", inputs, REPLY, at=1)) is continues


def test_calls_without_recorded_input_continue_the_first_call_and_results_come_from_spans():
    # Claude Agent SDK through LangSmith: only the first call records its input, each
    # later call one output; the tool spans carry the results but no call ids.
    steps = (
        step("s1", (SYSTEM, ASK), says("Let me check both cities."), at=10),
        step("s2", (), says("", asks("toolu_1", "Oslo")), at=20),
        step("s3", (), says("", asks("toolu_2", "Rome")), at=30),
        step("s4", (), REPLY, at=60),
    )
    tools = (ran("t2", "Rome", ROME, at=45), ran("t1", "Oslo", OSLO, at=40))
    [(grouped, owned)] = split_turns(steps, tools)
    assert [s.span_id for s in grouped] == ["s1", "s2", "s3", "s4"]
    assert not awaits_tools(grouped)
    turn = build_turn(TurnSpans(steps=grouped, tools=owned))
    assert (turn.user_message, turn.reply) == (ASK.text, REPLY.text)
    assert turn.system_prompt == SYSTEM.text
    assert turn.steps == ("Let me check both cities.", "", "")
    assert [(c.call_id, c.result, c.span_id, c.step) for c in turn.tool_calls] == [
        ("toolu_1", OSLO, "t1", 1),
        ("toolu_2", ROME, "t2", 2),
    ]
    assert default_runner().validate(turn).outcome == "pass"


def test_call_handing_back_only_tool_results_continues_the_call_that_asked():
    # Responses API: the second call's input is the tool result alone. A side call with
    # its own request started in between must not capture it.
    first = step("s1", (ASK,), says("", asks("call_oslo", "Oslo")), at=10)
    side = step("s2", (ChatMessage("user", "Title this chat."),), says("Weather"), at=20)
    second = step("s3", (answer("call_oslo", OSLO),), says("Oslo has rain at 9°C."), at=30)
    turns = split_turns([second, side, first])
    assert [[s.span_id for s in g] for g, _ in turns] == [["s1", "s3"], ["s2"]]
    turn = build_turn(TurnSpans(steps=turns[0][0]))
    assert (turn.user_message, turn.reply) == (ASK.text, "Oslo has rain at 9°C.")
    assert [(c.call_id, c.result) for c in turn.tool_calls] == [("call_oslo", OSLO)]


def test_a_new_request_after_a_continuation_is_still_a_new_turn():
    first = step("s1", (ASK,), says("", asks("c1", "Oslo")), at=10)
    done = step("s2", (answer("c1", OSLO),), says("Rain in Oslo."), at=20)
    again = (ASK, says("", asks("c1", "Oslo")), answer("c1", OSLO), says("Rain in Oslo."))
    follow_up = step("s3", (*again, ChatMessage("user", "And Rome?")), says("Sunny."), at=30)
    turns = split_turns([first, done, follow_up])
    assert [[s.span_id for s in g] for g, _ in turns] == [["s1", "s2"], ["s3"]]


ID_LESS = (
    ASK,
    says("", ToolCallPart("", "get_weather", '{"city": "Oslo"}')),
    says("", ToolCallPart("", "get_weather", '{"city": "Rome"}')),
    ChatMessage("tool", OSLO),
    ChatMessage("tool", ROME),
)


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        pytest.param(
            (),
            [(f"{ANONYMOUS_CALL_PREFIX}1", OSLO, None), (f"{ANONYMOUS_CALL_PREFIX}2", ROME, None)],
            id="results-answer-id-less-calls-in-order",
        ),
        pytest.param(
            (
                ran("t2", "Rome", "Rome: sun", at=2, call_id="adk-2"),
                ran("t1", "Oslo", "Oslo: rain", at=1, call_id="adk-1"),
            ),
            [("adk-1", "Oslo: rain", "t1"), ("adk-2", "Rome: sun", "t2")],
            id="calls-take-the-ids-of-their-tool-spans",
        ),
    ],
)
def test_tool_calls_without_ids_get_their_results(tools, expected):
    final = step("s2", ID_LESS, REPLY, at=10)
    turn = build_turn(TurnSpans(steps=(final,), tools=tools))
    assert [(c.call_id, c.result, c.span_id) for c in turn.tool_calls] == expected


def test_spans_without_call_ids_match_the_call_with_the_same_arguments():
    # Parallel calls of one tool can finish in any order: Rome's span starts first.
    final = step(
        "s2",
        (ASK, says("", asks("c1", "Oslo"), asks("c2", "Rome"))),
        REPLY,
        at=10,
    )
    tools = (ran("t1", "Oslo", OSLO, at=2), ran("t2", "Rome", ROME, at=1))
    turn = build_turn(TurnSpans(steps=(final,), tools=tools))
    assert [(c.call_id, c.result) for c in turn.tool_calls] == [("c1", OSLO), ("c2", ROME)]
