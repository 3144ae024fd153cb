"""What every real trace in `otel_trace_examples/` assembles into, read by hand, and the
checks that the turns it gives say the same.

`trace_example_spans` holds what each span says; this holds what the validators judge:
all spans of a file go through a `TurnAssembler` (fake clock), and the turns that come
out must carry the user's request, the model, the tool calls with the results and status
the system recorded, and the final reply. These are presumed-clean runs, so the default
validator suite must pass every turn; a finding that a validator (not turn
reconstruction) gets wrong is listed under `findings`, with the reason beside it.

The final turn of a file is the one that ended last.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factledger.processors.assembly.assembler import AssembledTurn, TurnAssembler
from factledger.processors.model import Turn, Verdict
from factledger.processors.normalize.fixtures import load_example
from factledger.processors.runner import ValidationRunner

from .trace_example_spans import (
    ADK_CALL_ID,
    ADK_REPLY,
    AGENTS_CALL,
    AGENTS_REPLY,
    CLAUDE_REPLY,
    CREW_HTML,
    CREW_TASK,
    DAD,
    DAD_IDEA,
    HAIKU,
    JOKE,
    JOKE_IDEAS,
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
    Mismatch,
    compare,
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
    first_calls: tuple[Call, ...] | None = None
    """The first turn's tool calls, where they are worth checking too (None: not checked)."""


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
    # The tool span has no call id: matched to the model's call by name. The turn's agent
    # is the agent span's ("Hello world"), not the SDK trace's span around it.
    "openai-agents-2025-09-30.trace.json": Expected(
        turns=((TOKYO_ASK, AGENTS_REPLY),),
        model="gpt-4.1-2025-04-14",
        agent="Hello world",
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
        # The joke agent's first run: three parallel calls, each result from its own span.
        first_calls=(
            Call(PUN[1], PUN[0], TOPIC, PUN_IDEA),
            Call(DAD[1], DAD[0], TOPIC, DAD_IDEA),
            Call(ONE_LINER[1], ONE_LINER[0], TOPIC, ONE_LINER_IDEA),
        ),
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

# --- assembling and judging a file ------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Judged:
    """A file's turns as the assembler gave them, with the suite's verdict on each."""

    turns: tuple[AssembledTurn, ...]
    """By end time (then start time)."""
    verdicts: tuple[Verdict, ...]
    """One per turn, in the same order."""
    late: int
    """Turns that were not complete after the grace period and came only from flush_all."""
    drops: Mapping[str, int]

    @property
    def final(self) -> Turn | None:
        return self.turns[-1].turn if self.turns else None


def judged(path: Path, runner: ValidationRunner) -> Judged:
    """Assemble every span of an example file (fake clock) and validate each turn."""
    clock = FakeClock()
    assembler = TurnAssembler(clock, grace_seconds=GRACE_SECONDS)
    for span in load_example(path):
        assembler.add(span)
    clock.now = GRACE_SECONDS
    due = assembler.due()
    late = assembler.flush_all()
    turns = tuple(sorted([*due, *late], key=lambda t: (t.ended_at_ns, t.started_at_ns)))
    verdicts = tuple(runner.validate(t.turn) for t in turns)
    return Judged(turns, verdicts, len(late), assembler.drops)


def call_facts(turn: Turn) -> tuple[Call, ...]:
    return tuple(
        Call(c.name, c.call_id, dict(c.arguments), c.result, c.error, c.span_id is not None)
        for c in turn.tool_calls
    )


# --- the checks: each compares one group of facts ----------------------------------------------


def turns_with_their_requests_and_replies(got: Judged, want: Expected) -> list[Mismatch]:
    return [
        *compare(
            "turns (request, reply)",
            [(t.turn.user_message, t.turn.reply) for t in got.turns],
            list(want.turns),
        ),
        # Every run ends (agent span or reply) before the grace period.
        *compare("turns complete only at flush", got.late, 0),
        *compare("assembler drops", dict(got.drops), dict(want.drops)),
        *compare("distinct turn ids", len({t.turn.turn_id for t in got.turns}), len(got.turns)),
    ]


def final_turn_model_agent_steps_and_offered_tools(got: Judged, want: Expected) -> list[Mismatch]:
    final = got.final
    if final is None:
        # No turn at all: the expectations must say so too.
        return compare("turns, model, calls", ((), "", ()), (want.turns, want.model, want.calls))
    tools = None if final.tools is None else tuple(t.name for t in final.tools)
    return [
        *compare("final turn (model, agent)", (final.model, final.agent), (want.model, want.agent)),
        *compare("final turn steps", final.steps, want.steps),
        *compare("final turn offered tools", tools, want.tools),
    ]


def final_turn_tool_calls(got: Judged, want: Expected) -> list[Mismatch]:
    final = got.final
    found = compare("final turn tool calls", call_facts(final) if final else (), want.calls)
    prose = tuple(c.name for c in final.tool_calls if c.origin != "structured") if final else ()
    return [*found, *compare("final turn calls read from prose", prose, ())]


def first_turn_tool_calls(got: Judged, want: Expected) -> list[Mismatch]:
    if want.first_calls is None:
        return []
    first = got.turns[0].turn if got.turns else None
    calls = call_facts(first) if first else ()
    span_ids = {c.span_id for c in first.tool_calls} if first else set()
    return [
        *compare("first turn tool calls", calls, want.first_calls),
        *compare("first turn calls with a span of their own", len(span_ids), len(calls)),
    ]


def validator_findings(got: Judged, want: Expected) -> list[Mismatch]:
    found = tuple(k for v in got.verdicts for k in v.kinds)
    outcomes = {v.outcome.value for v in got.verdicts}
    return [
        *compare("finding kinds", found, want.findings),
        *(compare("verdicts", outcomes - {"pass"}, set()) if not want.findings else []),
    ]


TurnCheck = Callable[[Judged, Expected], list[Mismatch]]

TURN_CHECKS: tuple[TurnCheck, ...] = (
    turns_with_their_requests_and_replies,
    final_turn_model_agent_steps_and_offered_tools,
    final_turn_tool_calls,
    first_turn_tool_calls,
    validator_findings,
)


def check_turns(got: Judged, want: Expected) -> list[Mismatch]:
    """Every turn check of one file; empty when its turns are what was read by hand."""
    return [m for check in TURN_CHECKS for m in check(got, want)]
