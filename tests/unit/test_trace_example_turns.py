"""Acceptance: every real trace in `otel_trace_examples/` assembles into the right turns.

`test_trace_examples.py` checks what each span says; this checks what the validators
judge: all spans of a file go through a `TurnAssembler` (fake clock), and the turns that
come out must carry the user's request, the model, the tool calls with the results and
status the system recorded, and the final reply. These are presumed-clean runs, so the
default validator suite must pass every turn; a finding that a validator (not turn
reconstruction) gets wrong is listed under `findings`, with the reason beside it.

The final turn of a file is the one that ended last.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from factledger.processors.assembler import AssembledTurn, TurnAssembler
from factledger.processors.model import Turn
from factledger.processors.normalize.fixtures import load_example
from factledger.processors.runner import default_runner

from .test_trace_examples import (
    ADK_CALL_ID,
    ADK_REPLY,
    AGENTS_CALL,
    AGENTS_REPLY,
    CLAUDE_REPLY,
    CREW_HTML,
    CREW_TASK,
    DAD,
    DAD_IDEA,
    EXAMPLE_PARAMS,
    FILES,
    HAIKU,
    JOKE,
    JOKE_IDEAS,
    MISSING,
    ONE_LINER,
    ONE_LINER_IDEA,
    PARIS_REPLY,
    POEM,
    PUN,
    PUN_IDEA,
    RECIPE,
    SEARCH_REPLY,
    SEARCH_RESULT,
    SF_CALL,
    TOKYO,
    TOKYO_CALL,
    TOKYO_REPLY,
    TOPIC,
    VERDICT,
)

GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class Call:
    """A tool call of the final turn as the validators see it."""

    name: str
    call_id: str
    arguments: Mapping[str, Any]
    result: str | None
    error: bool = False
    from_tool_span: bool = True
    """The result and status came from a tool execution span (not only from messages)."""


@dataclass(frozen=True)
class Expected:
    turns: tuple[tuple[str, str], ...]
    """(user message, reply) of every turn, in the order they ended."""
    model: str = ""
    agent: str = ""
    calls: tuple[Call, ...] = ()
    steps: tuple[str, ...] = ()
    """The final turn's LLM outputs before the reply ("" for a step that only used tools)."""
    tools: tuple[str, ...] | None = None
    """Names of the tools offered in the final turn (None: the spans do not say)."""
    findings: tuple[str, ...] = ()
    """Finding kinds over all turns that are validator false positives (none so far)."""
    drops: Mapping[str, int] = field(default_factory=dict)


PARIS_ASK = "Weather in Paris?"
PARIS = Expected(
    turns=((PARIS_ASK, PARIS_REPLY),),
    model="gpt-4-0613",
    # Single LLM spans: the result is the tool message of the span's own input.
    calls=(
        Call("get_weather", "1234", {"location": "Paris"}, "rainy, 57°F", from_tool_span=False),
    ),
    steps=("Absolutely! Let me check the weather for you.",),
)
CLAUDE_ASK = "What's the weather like in Berlin and New York?"
TOKYO_ASK = "What's the weather in Tokyo?"
JOKE_ASK = (
    "Select and call THREE of the available tools to get joke suggestions about 'programming'."
)
JOKE_AGAIN = (
    "Now write a funny joke about 'programming' based on the suggestions you received. "
    "Just output the joke, nothing else."
)
RATE = f"Rate this joke:\n\n{JOKE}"
HAIKU_ASK = "Write a haiku about programming."
SUM_ASK = "And what is 3 + 3?"
RECIPE_ASK = "Generate a simple recipe for scrambled eggs."
POEM_ASK = "Write a short poem about TypeScript."

EXPECTED: dict[str, Expected] = {
    # --- openinference/: one weather conversation as single spans, and AI SDK v6 runs
    "openinference_client_span_input_output_only.json": PARIS,
    "openinference_client_span_tool_calls.json": PARIS,
    "otel_genai_client_span_tool_calls.json": PARIS,
    "otel_genai_deprecated_client_span_tool_calls.json": PARIS,
    # A lone execute_tool span: no LLM call and no agent span, so nothing to judge. The
    # assembler says so rather than dropping it silently.
    "otel_genai_tool_execution_span.json": Expected(turns=(), drops={"no_turn_root": 1}),
    # The fixture lost the parent links: every span is its own trace. So each of the four
    # runs is seen twice, once from its LLM span and once from its agent span (whose model
    # is the requested one, without the date suffix), and neither can tell they belong
    # together. The final turn is the streamText agent span.
    "vercel_ai_sdk_v6_all-spans.json": Expected(
        turns=(
            (HAIKU_ASK, HAIKU),
            (HAIKU_ASK, HAIKU),
            (SUM_ASK, "3 + 3 equals 6."),
            (SUM_ASK, "3 + 3 equals 6."),
            (RECIPE_ASK, RECIPE),
            (RECIPE_ASK, RECIPE),
            (POEM_ASK, POEM),
            (POEM_ASK, POEM),
        ),
        model="gpt-4o-mini",
        agent="test-stream-text",
    ),
    # --- langfuse_framework_traces/: whole agent runs
    # Claude Agent SDK through LangSmith: only the first LLM span records its input; the
    # later ones continue it, and the results exist only on the tool spans (no call ids).
    "claude-agent-2025-12-22.trace.json": Expected(
        turns=((CLAUDE_ASK, CLAUDE_REPLY),),
        model="claude-sonnet-4-5-20250929",
        calls=(
            Call(
                "mcp__weather__get_weather",
                "toolu_01TKoqQLvY2UWuC49qnD48y7",
                {"city": "Berlin"},
                "Weather in Berlin: Cloudy, 59°F",
            ),
            Call(
                "mcp__weather__get_weather",
                "toolu_01NtVat4vJLFfVd5TqdLHcA7",
                {"city": "New York"},
                "Weather in New York: Sunny, 75°F",
            ),
        ),
        steps=("I'll check the weather in both Berlin and New York for you.", "", ""),
    ),
    # CrewAI answers in its ReAct format; the reply is the model's text as it came back.
    "crewai-2025-07-11.trace.json": Expected(
        turns=((CREW_TASK, f"I now can give a great answer  \nFinal Answer: \n{CREW_HTML}"),),
        model="gpt-4o-mini",
        agent="Task._execute_core",
    ),
    # Gemini function calls carry no id: the call takes the id of the execute_tool span
    # it was matched to by name, and that span's result (ADK's wrapped response) wins
    # over the function response in the next LLM input.
    "google-adk-2025-08-28.trace.json": Expected(
        turns=(("hi", ADK_REPLY),),
        model="gemini-2.0-flash",
        agent="invocation [hello_app]",
        calls=(
            Call(
                "say_hello",
                ADK_CALL_ID,
                {},
                f'{{"id":"{ADK_CALL_ID}","name":"say_hello",'
                '"response":{"greeting":"Hello Langfuse 👋"}}',
            ),
        ),
        steps=("",),
        tools=("say_hello",),
    ),
    "langgraph-python-2025-08-22.trace.json": Expected(
        turns=(("Search the web for 'example' and summarize.", SEARCH_REPLY),),
        model="gpt-4o-2024-08-06",
        calls=(
            Call(
                "Web-Search", "call_1oGK863sxQHlPreFhDdEs3yl", {"query": "example"}, SEARCH_RESULT
            ),
        ),
        steps=("",),
        tools=("Web-Search",),
    ),
    # The second LLM call only hands back the tool result (Responses API): it continues
    # the first one, which carries the request.
    "microsoft-agent-2025-12-17.trace.json": Expected(
        turns=((TOKYO_ASK, TOKYO_REPLY),),
        model="gpt-5-mini-2025-08-07",
        agent="171105b7-59dd-49c0-9677-0b95395aa46a",
        calls=(Call("get_weather", TOKYO_CALL, {"location": "Tokyo, Japan"}, TOKYO),),
        steps=("",),
        tools=("get_weather",),
    ),
    # The tool span has no call id: matched to the model's call by name.
    "openai-agents-2025-09-30.trace.json": Expected(
        turns=((TOKYO_ASK, AGENTS_REPLY),),
        model="gpt-4.1-2025-04-14",
        agent="Agent workflow",
        calls=(
            Call("get_weather", AGENTS_CALL, {"city": "Tokyo"}, "The weather in Tokyo is sunny."),
        ),
        steps=("",),
        tools=("get_weather",),
    ),
    # Three agent runs, three turns. The evaluator answers through pydantic-ai's output
    # tool `final_result`, which never runs as a tool: the reply is the agent's output.
    "pydantic-ai-tools-2025-12-04.trace.json": Expected(
        turns=(
            (JOKE_ASK, JOKE_IDEAS),
            (JOKE_AGAIN, JOKE),
            (RATE, json.dumps(VERDICT, ensure_ascii=False)),
        ),
        model="gpt-4o-mini-2024-07-18",
        agent="evaluator_agent",
        calls=(
            Call(
                "final_result",
                "call_ZuzwalMMtvv9BC6xlVe3fiBP",
                VERDICT,
                None,
                from_tool_span=False,
            ),
        ),
        steps=("",),
        tools=("final_result",),
    ),
    # The exported run stops after the tool call: no final text, judged with none.
    "vercel-aisdk-2025-11-17.trace.json": Expected(
        turns=(("What is the weather like today in San Francisco?", ""),),
        model="gpt-5-2025-08-07",
        agent="ai.generateText",
        calls=(
            Call(
                "getWeather",
                SF_CALL,
                {"location": "San Francisco"},
                '{"location":"San Francisco","temperature":64}',
            ),
        ),
        steps=("",),
        tools=("getWeather",),
    ),
}

# The joke agent's first run, checked too: three parallel calls, each result from its span.
JOKE_CALLS = (
    Call(PUN[1], PUN[0], TOPIC, PUN_IDEA),
    Call(DAD[1], DAD[0], TOPIC, DAD_IDEA),
    Call(ONE_LINER[1], ONE_LINER[0], TOPIC, ONE_LINER_IDEA),
)


# --- assembling a file ---------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Assembled:
    turns: tuple[AssembledTurn, ...]
    """By end time (then start time)."""
    late: int
    """Turns that were not complete after the grace period and came only from flush_all."""
    drops: Mapping[str, int]

    @property
    def final(self) -> Turn | None:
        return self.turns[-1].turn if self.turns else None


@functools.cache
def assembled(path: Path | None) -> Assembled:
    assert path is not None, MISSING
    clock = FakeClock()
    assembler = TurnAssembler(clock, grace_seconds=GRACE_SECONDS)
    for span in load_example(path):
        assembler.add(span)
    clock.now = GRACE_SECONDS
    due = assembler.due()
    late = assembler.flush_all()
    turns = sorted([*due, *late], key=lambda t: (t.ended_at_ns, t.started_at_ns))
    return Assembled(tuple(turns), len(late), assembler.drops)


def expected(path: Path | None) -> Expected:
    assert path is not None, MISSING
    assert path.name in EXPECTED, f"{path.name}: add its hand-checked turn facts to EXPECTED"
    return EXPECTED[path.name]


def call_facts(turn: Turn) -> tuple[Call, ...]:
    return tuple(
        Call(c.name, c.call_id, dict(c.arguments), c.result, c.error, c.span_id is not None)
        for c in turn.tool_calls
    )


# --- the tests -----------------------------------------------------------------------------


def test_every_example_file_has_turn_expectations():
    assert FILES, MISSING
    assert {p.name for p in FILES} == set(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_turns_are_complete_once_quiet_with_their_requests_and_replies(path):
    got = assembled(path)
    assert [(t.turn.user_message, t.turn.reply) for t in got.turns] == list(expected(path).turns)
    assert got.late == 0, "every run ends (agent span or reply) before the grace period"
    assert got.drops == expected(path).drops
    assert len({t.turn.turn_id for t in got.turns}) == len(got.turns)


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_final_turn_model_agent_steps_and_offered_tools(path):
    final, want = assembled(path).final, expected(path)
    if final is None:
        assert (want.turns, want.model, want.calls) == ((), "", ())
        return
    assert (final.model, final.agent, final.steps) == (want.model, want.agent, want.steps)
    tools = None if final.tools is None else tuple(t.name for t in final.tools)
    assert tools == want.tools


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_final_turn_tool_calls_carry_arguments_results_and_status(path):
    final = assembled(path).final
    assert (call_facts(final) if final is not None else ()) == expected(path).calls
    if final is not None:
        assert all(c.origin == "structured" for c in final.tool_calls), "no prose calls"


def test_parallel_calls_of_one_turn_each_get_their_own_tool_span_result():
    [path] = [p for p in FILES if p.name == "pydantic-ai-tools-2025-12-04.trace.json"]
    first = assembled(path).turns[0].turn
    assert call_facts(first) == JOKE_CALLS
    assert len({c.span_id for c in first.tool_calls}) == len(JOKE_CALLS)


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_default_validators_pass_every_presumed_clean_turn(path):
    runner = default_runner()
    verdicts = [runner.validate(t.turn) for t in assembled(path).turns]
    found = tuple(k for v in verdicts for k in v.kinds)
    assert found == expected(path).findings, [
        (f.kind.value, f.token, f.message) for v in verdicts for f in v.findings
    ]
    if not expected(path).findings:
        assert {v.outcome for v in verdicts} <= {"pass"}
