"""Acceptance: every real trace in `otel_trace_examples/` normalizes to the facts it holds.

The expectations below were read by hand from the files (model, user request, the tool
calls with their arguments, what each tool returned, the replies). Spans are compared in
start-time order (ties in file order). Turn reconstruction builds on exactly these facts.

The datasets live beside the checkout (`../shared/datasets`, or $FACTLEDGER_DATASETS);
CI always has them, so a missing folder fails here rather than skipping.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from factledger.processors.normalize.base import (
    AgentInvocation,
    LlmStep,
    NormalizedSpan,
    ToolExecution,
)
from factledger.processors.normalize.dispatch import convention_of, normalize
from factledger.processors.normalize.fixtures import load_example
from factledger.processors.spans import STATUS_ERROR, STATUS_OK, SpanRecord

DATASETS = Path(
    os.environ.get("FACTLEDGER_DATASETS")
    or Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
)
EXAMPLES = DATASETS / "otel_trace_examples"
FILES = sorted(
    [
        *EXAMPLES.glob("openinference/*.json"),
        *EXAMPLES.glob("langfuse_framework_traces/*.trace.json"),
    ]
)
MISSING = (
    f"no example traces under {EXAMPLES}: the shared datasets must sit beside the checkout "
    "(../shared/datasets) or be named by FACTLEDGER_DATASETS"
)


@dataclass(frozen=True)
class Expected:
    """What one file holds. Kinds: llm, tool, agent, or - (None) per span in time order."""

    conventions: Mapping[str, int]
    kinds: tuple[str, ...]
    models: tuple[str, ...] = ()
    user: str = ""
    """The last user message seen in any LLM call's input."""
    calls: tuple[tuple[str, str, Any], ...] = ()
    """(call id, tool, parsed arguments) requested by the model, first appearance order."""
    executions: tuple[tuple[str, str, Any, str], ...] = ()
    """(tool, call id, parsed arguments, result) of the tool execution spans."""
    tool_messages: tuple[tuple[str, str], ...] = ()
    """(call id, text) of the tool-role messages in LLM inputs, distinct."""
    replies: tuple[str, ...] = ()
    """The assistant text of each LLM call's output ("" for a call that only used tools)."""
    agents: tuple[tuple[str, str], ...] = ()
    """(agent name, output text) of the agent runs."""
    tools: tuple[str, ...] | None = None
    """Names of the tools offered to the last LLM call (None: the span does not say)."""
    extra: Mapping[str, Any] = field(default_factory=dict)


PARIS_REPLY = "The weather in Paris is currently rainy with a temperature of 57°F."
PARIS: dict[str, Any] = {
    "models": ("gpt-4-0613",),
    "user": "Weather in Paris?",
    "calls": (("1234", "get_weather", {"location": "Paris"}),),
    "tool_messages": (("1234", "rainy, 57°F"),),
    "replies": (PARIS_REPLY,),
}
CREW_HTML = (
    '```html\n<!DOCTYPE html>\n<html lang="en">\n<head>\n    <meta charset="UTF-8">\n'
    '    <meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
    "    <title>Hello World</title>\n    <style>\n        body {\n"
    "            font-family: Arial, sans-serif;\n            display: flex;\n"
    "            justify-content: center;\n            align-items: center;\n"
    "            height: 100vh;\n            background-color: #f0f0f0;\n        }\n"
    "        h1 {\n            color: #333;\n        }\n    </style>\n</head>\n<body>\n"
    "    <h1>Hello World! Langfuse monitors your CrewAI agent!</h1>\n</body>\n</html>\n```"
)
CREW_TASK = (
    "\nCurrent Task: Define the HTML for making a simple website with heading- Hello World! "
    "Langfuse monitors your CrewAI agent!\n\nThis is the expected criteria for your final "
    "answer: A clear and concise HTML code\nyou MUST return the actual complete content as "
    "the final answer, not a summary.\n\nBegin! This is VERY important to you, use the tools "
    "available and give your best Final Answer, your job depends on it!\n\nThought:"
)
CLAUDE_REPLY = (
    "Great! Here's the current weather for both cities:\n\n**Berlin**: Cloudy, 59°F (15°C)\n"
    "**New York**: Sunny, 75°F (24°C)\n\nNew York is enjoying warmer, sunny weather while "
    "Berlin is a bit cooler with cloudy skies. Is there anything else you'd like to know "
    "about these destinations?"
)
ADK_REPLY = "Hello Langfuse 👋!\n"
ADK_CALL_ID = "adk-8bd8dc65-717d-4102-858b-3a1dd6b75a00"
SEARCH_RESULT = '[{"url": "https://example.com", "title": "Example Result", "q": "example"}]'
SEARCH_REPLY = (
    'The search for "example" primarily leads to the website [example.com]'
    "(https://example.com), which is often used as a placeholder or demonstration site in "
    "various contexts. It serves as a generic example for illustrating how a website might "
    "look or function."
)
TOKYO = "The weather in Tokyo, Japan is stormy with a high of 23°C."
TOKYO_CALL = "call_CwaJHuXTm9dmHFQPlVbqyzJ0"
TOKYO_REPLY = "Current conditions in Tokyo, Japan: stormy, high around 23°C."
AGENTS_CALL = "call_Kud0j0DxWSmLzv9W5m6qVqXn"
AGENTS_REPLY = (
    "The weather in Tokyo is currently sunny. If you need more details like temperature or "
    "forecast for the upcoming days, just let me know!"
)
PUN = ("call_X0OSgjUukT5inyEQvuZQnHrk", "get_pun_suggestion")
DAD = ("call_WxZcCvSDhGT4RJHlcU01k10x", "get_dad_joke_suggestion")
ONE_LINER = ("call_aRaObiWKKt6GzgDkkUl3bu1Q", "get_one_liner_suggestion")
PUN_IDEA = (
    "Pun idea: Play on words related to 'programming' - think about homophones or double meanings"
)
DAD_IDEA = (
    "Dad joke idea: Use a classic setup-punchline format about 'programming' with a "
    "groan-worthy twist"
)
ONE_LINER_IDEA = (
    "One-liner idea: Make a quick, witty observation about 'programming' in a single sentence"
)
JOKE_IDEAS = (
    "I gathered some great ideas for a programming joke! Here’s a funny joke combining those "
    "suggestions:\n\nWhy do programmers prefer dark mode?  \nBecause light attracts bugs! \n\n"
    "(It's a pun on light attracting bugs and programmers having a love-hate relationship "
    "with debugging!)"
)
JOKE = "Why do programmers hate nature?  \nIt has too many bugs!"
VERDICT = {
    "quality": "good",
    "feedback": "The joke is clever and plays on the double meaning of 'bugs' in programming "
    "and nature. It's relatable for those in the tech field, making it effective. To enhance "
    "it, consider adding a punchline that builds on the setup for an even stronger impact.",
}
TOPIC = {"topic": "programming"}
SF_CALL = "call_DgKARp7a7IhJPDczfifMp6Ra"
HAIKU = "Lines of code align,  \nLogic dances through the night—  \nDreams in data flow."
RECIPE = (
    '{"name":"Scrambled Eggs","ingredients":["2 eggs","2 tablespoons milk","Salt to taste",'
    '"Pepper to taste","1 tablespoon butter"],"steps":["Crack the eggs into a bowl and add '
    'the milk, salt, and pepper.","Whisk the mixture until well combined and slightly '
    'frothy.","Heat a non-stick skillet over medium heat and melt the butter.","Once the '
    'butter is melted and bubbling, pour in the egg mixture.","Allow the eggs to sit for a '
    "few moments, then gently stir with a spatula, pushing them from the edges towards the "
    'center.","Continue to cook until the eggs are mostly set but still slightly runny.",'
    '"Remove from heat and let the residual heat finish cooking the eggs.","Serve warm with '
    'additional salt and pepper if desired."]}'
)
POEM = (
    "In code’s embrace, where types align,  \nTypeScript dances, clear and fine.  \n"
    "With static grace, it catches errors,  \nA safety net for code creators.  \n\n"
    "No more confusion, types defined,  \nIn every function, purpose finds.  \n"
    "From JavaScript’s roots, it takes its flight,  \nEnhancing clarity, bringing light.  \n\n"
    "So write with joy, or craft with care,  \nTypeScript's here, let worries spare.  \n"
    "In every line, precision sings,  \nA language woven with bright, safe strings.  "
)

PYDANTIC_KINDS = (
    "-", "agent", "llm", "-", "tool", "tool", "tool", "llm", "agent", "llm", "agent", "llm",
)  # fmt: skip

EXPECTED: dict[str, Expected] = {
    # --- openinference/: single spans of one weather conversation, and AI SDK v6 spans
    "openinference_client_span_input_output_only.json": Expected(
        conventions={"openinference": 1}, kinds=("llm",), **PARIS
    ),
    "openinference_client_span_tool_calls.json": Expected(
        conventions={"openinference": 1}, kinds=("llm",), **PARIS
    ),
    "otel_genai_client_span_tool_calls.json": Expected(
        conventions={"genai": 1}, kinds=("llm",), **PARIS
    ),
    "otel_genai_deprecated_client_span_tool_calls.json": Expected(
        conventions={"genai": 1}, kinds=("llm",), **PARIS
    ),
    "otel_genai_tool_execution_span.json": Expected(
        conventions={"genai": 1},
        kinds=("tool",),
        executions=(
            (
                "get_weather",
                "1234",
                {"city": "New York"},
                '{"status": "success", "report": "The weather in New York is sunny with a '
                'temperature of 25 degrees Celsius (77 degrees Fahrenheit)."}',
            ),
        ),
    ),
    "vercel_ai_sdk_v6_all-spans.json": Expected(
        conventions={"vercel": 10},
        kinds=("agent", "llm", "llm", "agent", "agent", "llm", "agent", "llm", "-", "-"),
        models=("gpt-4o-mini-2024-07-18",) * 4,
        user="Write a short poem about TypeScript.",
        replies=(HAIKU, "3 + 3 equals 6.", RECIPE, POEM),
        agents=(
            ("test-generate-text", HAIKU),
            ("test-generate-text-messages", "3 + 3 equals 6."),
            ("test-generate-object", RECIPE),
            ("test-stream-text", POEM),
        ),
    ),
    # --- langfuse_framework_traces/: whole agent runs as Langfuse exported them
    "claude-agent-2025-12-22.trace.json": Expected(
        conventions={"genai": 7},
        kinds=("llm", "-", "llm", "llm", "tool", "tool", "llm"),
        models=("claude-sonnet-4-5-20250929",) * 4,
        user="What's the weather like in Berlin and New York?",
        calls=(
            ("toolu_01TKoqQLvY2UWuC49qnD48y7", "mcp__weather__get_weather", {"city": "Berlin"}),
            ("toolu_01NtVat4vJLFfVd5TqdLHcA7", "mcp__weather__get_weather", {"city": "New York"}),
        ),
        # LangSmith's tool spans carry no call id.
        executions=(
            (
                "mcp__weather__get_weather",
                "",
                {"city": "Berlin"},
                "Weather in Berlin: Cloudy, 59°F",
            ),
            (
                "mcp__weather__get_weather",
                "",
                {"city": "New York"},
                "Weather in New York: Sunny, 75°F",
            ),
        ),
        replies=(
            "I'll check the weather in both Berlin and New York for you.",
            "",
            "",
            CLAUDE_REPLY,
        ),
    ),
    "crewai-2025-07-11.trace.json": Expected(
        conventions={"openinference": 3, "langfuse": 1, "-": 2},
        kinds=("-", "-", "-", "agent", "-", "llm"),
        models=("gpt-4o-mini",),
        user=CREW_TASK,
        replies=("I now can give a great answer  \nFinal Answer: \n" + CREW_HTML,),
        agents=(("Task._execute_core", CREW_HTML),),
    ),
    "google-adk-2025-08-28.trace.json": Expected(
        conventions={"openinference": 5},
        kinds=("agent", "agent", "llm", "tool", "llm"),
        models=("gemini-2.0-flash",) * 2,
        user="hi",
        # Gemini function calls have no ids; only the execute_tool span has one.
        calls=(("", "say_hello", None),),
        executions=(
            (
                "say_hello",
                ADK_CALL_ID,
                None,
                f'{{"id":"{ADK_CALL_ID}","name":"say_hello",'
                '"response":{"greeting":"Hello Langfuse 👋"}}',
            ),
        ),
        tool_messages=(("", '{"greeting": "Hello Langfuse 👋"}'),),
        replies=("", ADK_REPLY),
        agents=(("invocation [hello_app]", ADK_REPLY), ("agent_run [hello_agent]", ADK_REPLY)),
        tools=("say_hello",),
    ),
    "langgraph-python-2025-08-22.trace.json": Expected(
        conventions={"langfuse": 9},
        kinds=("-", "-", "llm", "-", "-", "tool", "-", "llm", "-"),
        models=("gpt-4o-2024-08-06",) * 2,
        user="Search the web for 'example' and summarize.",
        calls=(("call_1oGK863sxQHlPreFhDdEs3yl", "Web-Search", {"query": "example"}),),
        executions=(
            ("Web-Search", "call_1oGK863sxQHlPreFhDdEs3yl", {"query": "example"}, SEARCH_RESULT),
        ),
        tool_messages=(("call_1oGK863sxQHlPreFhDdEs3yl", SEARCH_RESULT),),
        replies=("", SEARCH_REPLY),
        tools=("Web-Search",),
    ),
    "microsoft-agent-2025-12-17.trace.json": Expected(
        conventions={"genai": 4},
        kinds=("agent", "llm", "tool", "llm"),
        models=("gpt-5-mini-2025-08-07",) * 2,
        user="What's the weather in Tokyo?",
        calls=((TOKYO_CALL, "get_weather", {"location": "Tokyo, Japan"}),),
        executions=(("get_weather", TOKYO_CALL, {"location": "Tokyo, Japan"}, TOKYO),),
        # The framework wraps the result before handing it back to the model.
        tool_messages=(
            (
                TOKYO_CALL,
                f'{{"type": "function_result", "call_id": "{TOKYO_CALL}", "result": '
                '"The weather in Tokyo, Japan is stormy with a high of 23\\u00b0C."}',
            ),
        ),
        replies=("", TOKYO_REPLY),
        agents=(("171105b7-59dd-49c0-9677-0b95395aa46a", TOKYO_REPLY),),
        tools=("get_weather",),
    ),
    "openai-agents-2025-09-30.trace.json": Expected(
        conventions={"openinference": 5},
        kinds=("agent", "agent", "llm", "tool", "llm"),
        models=("gpt-4.1-2025-04-14",) * 2,
        user="What's the weather in Tokyo?",
        calls=((AGENTS_CALL, "get_weather", {"city": "Tokyo"}),),
        # The OpenAI Agents instrumentation does not record the call id on tool spans.
        executions=(("get_weather", "", {"city": "Tokyo"}, "The weather in Tokyo is sunny."),),
        tool_messages=((AGENTS_CALL, "The weather in Tokyo is sunny."),),
        replies=("", AGENTS_REPLY),
        agents=(("Agent workflow", ""), ("Hello world", "")),
        tools=("get_weather",),
    ),
    "pydantic-ai-tools-2025-12-04.trace.json": Expected(
        conventions={"genai": 10, "langfuse": 1, "-": 1},
        kinds=PYDANTIC_KINDS,
        models=("gpt-4o-mini-2024-07-18",) * 4,
        user="Rate this joke:\n\nWhy do programmers hate nature?  \nIt has too many bugs!",
        calls=(
            (*PUN, TOPIC),
            (*DAD, TOPIC),
            (*ONE_LINER, TOPIC),
            ("call_ZuzwalMMtvv9BC6xlVe3fiBP", "final_result", VERDICT),
        ),
        executions=(
            (PUN[1], PUN[0], TOPIC, PUN_IDEA),
            (DAD[1], DAD[0], TOPIC, DAD_IDEA),
            (ONE_LINER[1], ONE_LINER[0], TOPIC, ONE_LINER_IDEA),
        ),
        tool_messages=((PUN[0], PUN_IDEA), (DAD[0], DAD_IDEA), (ONE_LINER[0], ONE_LINER_IDEA)),
        replies=("", JOKE_IDEAS, JOKE, ""),
        agents=(
            ("joke_agent", JOKE_IDEAS),
            ("joke_agent", JOKE),
            ("evaluator_agent", json.dumps(VERDICT, ensure_ascii=False)),
        ),
        tools=("final_result",),
    ),
    "vercel-aisdk-2025-11-17.trace.json": Expected(
        conventions={"vercel": 3},
        kinds=("agent", "llm", "tool"),
        models=("gpt-5-2025-08-07",),
        user="What is the weather like today in San Francisco?",
        calls=((SF_CALL, "getWeather", {"location": "San Francisco"}),),
        executions=(
            (
                "getWeather",
                SF_CALL,
                {"location": "San Francisco"},
                '{"location":"San Francisco","temperature":64}',
            ),
        ),
        # The exported run stops after the tool call: no final text.
        replies=("",),
        agents=(("ai.generateText", ""),),
        tools=("getWeather",),
    ),
}


# --- reading the facts back out of normalized spans ---------------------------------------


@dataclass(frozen=True)
class Normalized:
    spans: tuple[SpanRecord, ...]
    results: tuple[NormalizedSpan | None, ...]

    def of(self, kind: type[Any]) -> list[Any]:
        return [r for r in self.results if isinstance(r, kind)]


def _arguments(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _kind(result: NormalizedSpan | None) -> str:
    names = {LlmStep: "llm", ToolExecution: "tool", AgentInvocation: "agent"}
    return "-" if result is None else names[type(result)]


@functools.cache
def normalized(path: Path | None) -> Normalized:
    assert path is not None, MISSING
    loaded = load_example(path)
    order = sorted(range(len(loaded)), key=lambda i: (loaded[i].start_time_unix_nano, i))
    spans = tuple(loaded[i] for i in order)
    return Normalized(spans, tuple(normalize(s) for s in spans))


def expected(path: Path | None) -> Expected:
    assert path is not None, MISSING
    assert path.name in EXPECTED, f"{path.name}: add its hand-checked facts to EXPECTED"
    return EXPECTED[path.name]


EXAMPLE_PARAMS = [pytest.param(p, id=p.name) for p in FILES] or [
    pytest.param(None, id="datasets-missing")
]


def test_every_example_file_has_expectations():
    assert FILES, MISSING
    assert {p.name for p in FILES} == set(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_conventions_and_span_kinds(path):
    got = normalized(path)
    conventions: dict[str, int] = {}
    for s in got.spans:
        name = convention_of(s) or "-"
        conventions[name] = conventions.get(name, 0) + 1
    assert conventions == dict(expected(path).conventions)
    assert tuple(_kind(r) for r in got.results) == expected(path).kinds


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_models_and_user_request(path):
    steps = normalized(path).of(LlmStep)
    assert tuple(s.model for s in steps) == expected(path).models
    users = [m.text for s in steps for m in s.input_messages if m.role == "user" and m.text]
    assert (users[-1] if users else "") == expected(path).user


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_tool_calls_requested_by_the_model(path):
    seen: list[tuple[str, str, Any]] = []
    for step in normalized(path).of(LlmStep):
        for message in (*step.input_messages, *step.output_messages):
            for call in message.tool_calls if message.role == "assistant" else ():
                entry = (call.call_id, call.name, _arguments(call.arguments))
                if entry not in seen:
                    seen.append(entry)
    assert tuple(seen) == expected(path).calls


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_tool_executions_and_their_results(path):
    executions = tuple(
        (e.name, e.call_id, _arguments(e.arguments), e.result)
        for e in normalized(path).of(ToolExecution)
    )
    assert executions == expected(path).executions
    assert not any(e.error for e in normalized(path).of(ToolExecution))


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_tool_results_handed_back_to_the_model(path):
    seen: list[tuple[str, str]] = []
    for step in normalized(path).of(LlmStep):
        for message in step.input_messages:
            if message.role == "tool" and (message.tool_call_id, message.text) not in seen:
                seen.append((message.tool_call_id, message.text))
    assert tuple(seen) == expected(path).tool_messages


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_replies_and_the_final_reply(path):
    steps = normalized(path).of(LlmStep)
    replies = tuple(
        "\n".join(m.text for m in s.output_messages if m.role == "assistant" and m.text)
        for s in steps
    )
    assert replies == expected(path).replies
    if steps:
        final = steps[-1].output_messages
        assert (final[-1].text if final else "") == expected(path).replies[-1]


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_agent_runs_and_offered_tools(path):
    got = normalized(path)
    agents = tuple((a.agent_name, a.output_text) for a in got.of(AgentInvocation))
    assert agents == expected(path).agents
    steps = got.of(LlmStep)
    tools = steps[-1].tools if steps else None
    assert (None if tools is None else tuple(t.name for t in tools)) == expected(path).tools


@pytest.mark.parametrize("path", EXAMPLE_PARAMS)
def test_ids_are_hex_and_parents_resolve(path):
    spans = normalized(path).spans
    ids = {s.span_id for s in spans}
    for s in spans:
        assert len(s.trace_id) == 32 and int(s.trace_id, 16) >= 0
        assert len(s.span_id) == 16 and int(s.span_id, 16) >= 0
        assert s.parent_span_id in ids or s.parent_span_id == ""
    assert len(ids) == len(spans)


# --- the loader on small literal files ----------------------------------------------------


def _write(tmp_path: Path, name: str, document: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_flat_attribute_file_is_one_span_with_made_up_ids(tmp_path):
    (record,) = load_example(_write(tmp_path, "one.json", {"gen_ai.operation.name": "chat"}))
    assert record.name == "one"
    assert len(record.trace_id) == 32 and len(record.span_id) == 16
    assert int(record.trace_id + record.span_id, 16) >= 0
    assert record.attributes == {"gen_ai.operation.name": "chat"}


def test_sdk_span_list_keeps_ids_times_status_events_and_parents(tmp_path):
    document = [
        {
            "name": "child",
            "spanContext": {"traceId": "A" * 32, "spanId": "b" * 16},
            "parentSpanId": "c" * 16,
            "status": {"code": 2, "message": "boom"},
            "startTime": [1_770_000_000, 5],
            "endTime": [1_770_000_001, 0],
            "events": [{"name": "e", "time": [1, 2], "attributes": {"k": "v"}}],
            "attributes": {"ai.operationId": "ai.toolCall"},
        },
        {"name": "no ids", "attributes": {}},
    ]
    child, bare = load_example(_write(tmp_path, "list.json", document))
    assert (child.trace_id, child.span_id, child.parent_span_id) == ("a" * 32, "b" * 16, "c" * 16)
    assert (child.status_code, child.status_message) == (STATUS_ERROR, "boom")
    assert child.start_time_unix_nano == 1_770_000_000_000_000_005
    assert child.end_time_unix_nano == 1_770_000_001_000_000_000
    assert child.events[0].name == "e" and child.events[0].time_unix_nano == 1_000_000_002
    assert len(bare.span_id) == 16 and bare.span_id != child.span_id


def _observation(**fields: Any) -> dict[str, Any]:
    base = {
        "id": "1" * 16,
        "traceId": "2" * 32,
        "parentObservationId": None,
        "type": "GENERATION",
        "name": "chat",
        "startTime": "2025-12-22T10:46:15.528Z",
        "endTime": "2025-12-22T10:46:18.725Z",
        "level": "DEFAULT",
        "statusMessage": None,
        "input": None,
        "output": None,
        "metadata": None,
    }
    return {**base, **fields}


def test_langfuse_export_restores_the_payload_attributes(tmp_path):
    metadata = {
        "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
        "resourceAttributes": {"service.name": "svc"},
        "scope": {"name": "agent_framework", "version": "1.0"},
    }
    observation = _observation(
        metadata=json.dumps(metadata),
        input='[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
        output='[{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]',
        level="ERROR",
        statusMessage="rate limited",
        parentObservationId="3" * 16,
    )
    (record,) = load_example(_write(tmp_path, "t.trace.json", {"observations": [observation]}))
    assert record.attributes["gen_ai.input.messages"] == observation["input"]
    assert record.attributes["gen_ai.output.messages"] == observation["output"]
    assert (record.status_code, record.status_message) == (STATUS_ERROR, "rate limited")
    assert (record.span_id, record.trace_id, record.parent_span_id) == (
        "1" * 16,
        "2" * 32,
        "3" * 16,
    )
    assert record.start_time_unix_nano == 1_766_400_375_528_000_000
    assert (record.service_name, record.scope_name, record.scope_version) == (
        "svc",
        "agent_framework",
        "1.0",
    )
    assert record.status_code != STATUS_OK


def test_langfuse_export_keeps_payload_attributes_the_span_still_has(tmp_path):
    metadata = {"attributes": {"openinference.span.kind": "TOOL", "output.value": "kept"}}
    observation = _observation(metadata=metadata, input="{}", output="from langfuse")
    (record,) = load_example(_write(tmp_path, "t.trace.json", {"observations": [observation]}))
    assert record.attributes["output.value"] == "kept"
    assert "input.value" not in record.attributes


def test_langfuse_sdk_observation_gets_its_langfuse_attributes_back(tmp_path):
    observation = _observation(
        metadata=json.dumps({"thread_id": "t-1", "inputs": {"q": 1}, "scope": {"name": "x"}}),
        input="[]",
        model="gpt-4o",
    )
    (record,) = load_example(_write(tmp_path, "t.trace.json", {"observations": [observation]}))
    assert record.attributes == {
        "langfuse.observation.type": "generation",
        "langfuse.observation.input": "[]",
        "langfuse.observation.model.name": "gpt-4o",
        "langfuse.observation.metadata.thread_id": "t-1",
        "langfuse.observation.metadata.inputs": '{"q": 1}',
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{broken", "not readable as JSON", id="invalid-json"),
        pytest.param("42", "neither a span list", id="unknown-layout"),
        pytest.param(
            json.dumps({"observations": [_observation(metadata="{bad")]}),
            "metadata is not JSON",
            id="langfuse-metadata-unreadable",
        ),
    ],
)
def test_unreadable_example_files_fail_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as excinfo:
        load_example(path)
    assert "bad.json" in str(excinfo.value)
