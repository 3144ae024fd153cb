"""turn_builder: which text is the reply, and a turn that has none.

The reply is the text of the turn's last LLM output. A turn whose last output is tool
calls alone (a step limit, a final hand-off) has no reply: it is stored with an empty
one, its calls are still checked, and no earlier step's text stands in for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from factledger.processors.assembly.assembler import TurnAssembler
from factledger.processors.assembly.turn_builder import TurnSpans, build_turn
from factledger.processors.kinds import Kind
from factledger.processors.model import ToolDefinition
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    NormalizedSpan,
    ToolCallPart,
)
from factledger.processors.nudges import NUDGE_MARKER
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord

SHA = "9d22a7cdeadbeef1"
ASK = (
    ChatMessage("system", "You are a coding agent."),
    ChatMessage("user", "Fix the flaky test and push it to main."),
)
NUDGE = ChatMessage("user", f"{NUDGE_MARKER} — not a user message] Verify the push first.")


def says(text: str, *calls: ToolCallPart) -> ChatMessage:
    return ChatMessage("assistant", text, tool_calls=calls)


def call(call_id: str, name: str, arguments: str = "{}") -> ToolCallPart:
    return ToolCallPart(call_id, name, arguments)


def result(call_id: str, text: str) -> ChatMessage:
    return ChatMessage("tool", text, tool_call_id=call_id)


def step(span_id: str, inputs: Sequence[ChatMessage], output: ChatMessage, at: int) -> LlmStep:
    return LlmStep(
        span_id,
        input_messages=tuple(inputs),
        output_messages=(output,),
        start_time_unix_nano=at,
        end_time_unix_nano=at + 5,
    )


RUN = says("", call("c1", "run_tests"))
PASSED = result("c1", "48 passed")
PUSH = says("", call("c2", "git_push", '{"branch": "main"}'))
PUSHED = result("c2", f"pushed {SHA} to main")
CLAIM = says(f"I pushed the fix, commit {SHA}.")
CHECKING = says("Let me run the tests first.")  # a step that wrote text and called nothing
REPORT_AND_RUN = says(f"Pushed {SHA}; running the tests again.", call("c3", "run_tests"))
HAND_OFF = says("", call("c9", "transfer_to_release_agent"))
FINAL_ANSWER = says("", call("c9", "final_answer", '{"answer": "All tests pass."}'))


@pytest.mark.parametrize(
    ("steps", "agent_output", "reply", "calls"),
    [
        pytest.param(
            [step("s1", ASK, RUN, 10), step("s2", (*ASK, RUN, PASSED), CLAIM, 20)],
            None,
            CLAIM.text,
            [("run_tests", 0)],
            id="answer-after-the-tools-is-the-reply",
        ),
        pytest.param(
            # Claude Agent SDK shape: later calls record no input of their own.
            [step("s1", ASK, CHECKING, 10), step("s2", (), RUN, 20)],
            None,
            "",
            [("run_tests", 1)],
            id="tool-calls-alone-after-a-text-step-leave-no-reply",
        ),
        pytest.param(
            [step("s1", ASK, CLAIM, 10), step("s2", (*ASK, CLAIM, NUDGE), PUSH, 20)],
            None,
            "",
            [("git_push", 1)],
            id="nudged-answer-then-a-step-limit-leaves-no-reply",
        ),
        pytest.param(
            [step("s1", ASK, PUSH, 10), step("s2", (*ASK, PUSH, PUSHED), REPORT_AND_RUN, 20)],
            None,
            REPORT_AND_RUN.text,
            [("git_push", 0), ("run_tests", 1)],
            id="text-beside-the-last-tool-calls-is-the-reply",
        ),
        pytest.param(
            [step("s1", ASK, RUN, 10), step("s2", (*ASK, RUN, PASSED), HAND_OFF, 20)],
            None,
            "",
            [("run_tests", 0), ("transfer_to_release_agent", 1)],
            id="final-hand-off-leaves-no-reply",
        ),
        pytest.param(
            [step("s1", ASK, FINAL_ANSWER, 10)],
            "All tests pass.",
            "All tests pass.",
            [("final_answer", 0)],
            id="agent-output-in-words-no-step-wrote-is-the-reply",
        ),
        pytest.param(
            [step("s1", ASK, CHECKING, 10), step("s2", (*ASK, CHECKING, NUDGE), RUN, 20)],
            CHECKING.text,
            "",
            [("run_tests", 1)],
            id="agent-output-repeating-an-earlier-step-is-no-reply",
        ),
    ],
)
def test_the_reply_is_the_last_outputs_text_or_nothing(steps, agent_output, reply, calls):
    agent = None if agent_output is None else AgentInvocation("g1", output_text=agent_output)
    turn = build_turn(TurnSpans(steps=tuple(steps), agent=agent))
    assert turn.reply == reply
    assert [(c.name, c.step) for c in turn.tool_calls] == calls


# --- validating a turn without a reply --------------------------------------------------------

TOOLS = (
    ToolDefinition(
        "git_push",
        {
            "type": "object",
            "properties": {"branch": {"type": "string"}, "remote": {"type": "string"}},
            "required": ["branch", "remote"],
        },
    ),
    ToolDefinition("run_tests", {"type": "object", "properties": {}}),
)


def test_turn_without_reply_gets_argument_findings_and_none_about_a_reply():
    # The earlier step's text fabricates a commit and a success; the last call pushes
    # without its required remote and the loop stops there. Nothing was answered, so
    # only the call is judged.
    bare_push = says("", call("c2", "git_push", '{"branch": "main"}'))
    fabricated = says(f"Done! I pushed commit {SHA} to main.")
    steps = (
        step("s1", ASK, RUN, 10),
        step("s2", (*ASK, RUN, PASSED), fabricated, 20),
        step("s3", (*ASK, RUN, PASSED, fabricated, NUDGE), bare_push, 30),
    )
    turn = replace(build_turn(TurnSpans(steps=steps)), tools=TOOLS)
    assert turn.reply == ""
    verdict = default_runner().validate(turn)
    assert {f.kind for f in verdict.findings} == {Kind.MISSING_TOOL_ARGUMENTS}
    assert verdict.outcome != "pass"


# --- the assembler judges such a turn, never an earlier text ------------------------------------


def carried(span: SpanRecord) -> NormalizedSpan | None:
    value = span.attributes.get("value")
    assert value is None or isinstance(value, LlmStep | AgentInvocation)
    return value


def record(value: LlmStep | AgentInvocation, parent: str = "") -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32,
        span_id=value.span_id,
        name="span",
        parent_span_id=parent,
        start_time_unix_nano=value.start_time_unix_nano,
        end_time_unix_nano=value.end_time_unix_nano,
        attributes={"value": value},
    )


STOPPED = [step("s1", ASK, CHECKING, 10), step("s2", (*ASK, CHECKING, NUDGE), RUN, 20)]


@pytest.mark.parametrize(
    ("spans", "due_at"),
    [
        pytest.param([record(s) for s in STOPPED], 60.0, id="agentless-waits-then-no-reply"),
        pytest.param(
            [
                *(record(s, parent="g1") for s in STOPPED),
                record(
                    AgentInvocation(
                        "g1",
                        output_text=CHECKING.text,
                        start_time_unix_nano=5,
                        end_time_unix_nano=40,
                    )
                ),
            ],
            2.0,
            id="agent-end-decides-and-its-echo-is-no-reply",
        ),
    ],
)
def test_turn_stopped_on_tool_calls_is_judged_without_a_reply(spans, due_at):
    asm = TurnAssembler(lambda: 0.0, normalizer=carried)
    for span in spans:
        asm.add(span)
    assert asm.due(due_at - 0.5) == []
    [done] = asm.due(due_at)
    assert (done.turn.reply, [c.name for c in done.turn.tool_calls]) == ("", ["run_tests"])


def _bare(span_id: str, at: int) -> LlmStep:
    """An LLM call whose content went elsewhere (Semantic Kernel writes it to OTel logs):
    no input, no output."""
    return LlmStep(span_id, start_time_unix_nano=at, end_time_unix_nano=at + 5)


def _sk_agent(input_text: str, output_text: str) -> AgentInvocation:
    return AgentInvocation(
        "agent",
        agent_name="release_engineer",
        input_text=input_text,
        output_text=output_text,
        start_time_unix_nano=0,
        end_time_unix_nano=100,
    )


def test_a_last_call_without_output_takes_the_agent_spans_output_and_input() -> None:
    spans = TurnSpans(
        steps=(_bare("s1", 10), _bare("s2", 20)),
        agent=_sk_agent("Push branch main.", "Pushed main."),
        trace_id="t" * 32,
    )
    turn = build_turn(spans)
    assert (turn.user_message, turn.reply) == ("Push branch main.", "Pushed main.")


def test_the_agent_output_does_not_replace_a_last_call_that_wrote_its_own() -> None:
    spans = TurnSpans(
        steps=(step("s1", ASK, CLAIM, 10),),
        agent=_sk_agent("something else", "Other words."),
        trace_id="t" * 32,
    )
    turn = build_turn(spans)
    assert (turn.user_message, turn.reply) == (ASK[1].text, CLAIM.text)


def test_the_agent_output_fills_a_last_call_without_output_after_tool_calls() -> None:
    spans = TurnSpans(
        steps=(step("s1", ASK, PUSH, 10), _bare("s2", 20)),
        agent=_sk_agent(ASK[1].text, "Pushed it."),
        trace_id="t" * 32,
    )
    turn = build_turn(spans)
    assert (turn.user_message, turn.reply) == (ASK[1].text, "Pushed it.")
