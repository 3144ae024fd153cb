"""What every real trace in `otel_trace_examples/` holds, read by hand, and the checks
that its normalized spans say the same.

The expectations below were read by hand from the files (model, user request, the tool
calls with their arguments, what each tool returned, the replies). Spans are compared in
start-time order (ties in file order). Turn reconstruction builds on exactly these facts
(`trace_example_turns`); `python -m benchmarks.trace_examples` runs both over the files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factledger.processors.normalize.base import (
    AgentInvocation,
    LlmStep,
    NormalizedSpan,
    ToolExecution,
)
from factledger.processors.normalize.dispatch import convention_of, normalize
from factledger.processors.normalize.fixtures import load_example
from factledger.processors.spans import SpanRecord


@dataclass(frozen=True)
class Mismatch:
    """One fact of a file that differs from what was read by hand."""

    what: str
    got: Any
    want: Any


def compare(what: str, got: Any, want: Any) -> list[Mismatch]:
    """No mismatch when `got == want`, else one naming `what`."""
    return [] if got == want else [Mismatch(what, got, want)]


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
    """A file's spans in start-time order, each with what the normalizer made of it."""

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


def normalized(path: Path) -> Normalized:
    """Load an example file and normalize each of its spans."""
    loaded = load_example(path)
    order = sorted(range(len(loaded)), key=lambda i: (loaded[i].start_time_unix_nano, i))
    spans = tuple(loaded[i] for i in order)
    return Normalized(spans, tuple(normalize(s) for s in spans))


# --- the checks: each compares one group of facts --------------------------------------------


def conventions_and_span_kinds(got: Normalized, want: Expected) -> list[Mismatch]:
    conventions: dict[str, int] = {}
    for s in got.spans:
        name = convention_of(s) or "-"
        conventions[name] = conventions.get(name, 0) + 1
    return [
        *compare("conventions", conventions, dict(want.conventions)),
        *compare("span kinds", tuple(_kind(r) for r in got.results), want.kinds),
    ]


def models_and_user_request(got: Normalized, want: Expected) -> list[Mismatch]:
    steps = got.of(LlmStep)
    users = [m.text for s in steps for m in s.input_messages if m.role == "user" and m.text]
    return [
        *compare("models", tuple(s.model for s in steps), want.models),
        *compare("last user message", users[-1] if users else "", want.user),
    ]


def tool_calls_requested_by_the_model(got: Normalized, want: Expected) -> list[Mismatch]:
    seen: list[tuple[str, str, Any]] = []
    for step in got.of(LlmStep):
        for message in (*step.input_messages, *step.output_messages):
            for call in message.tool_calls if message.role == "assistant" else ():
                entry = (call.call_id, call.name, _arguments(call.arguments))
                if entry not in seen:
                    seen.append(entry)
    return compare("tool calls requested", tuple(seen), want.calls)


def tool_executions_and_their_results(got: Normalized, want: Expected) -> list[Mismatch]:
    executions = got.of(ToolExecution)
    facts = tuple((e.name, e.call_id, _arguments(e.arguments), e.result) for e in executions)
    return [
        *compare("tool executions", facts, want.executions),
        *compare("failed tool executions", tuple(e.name for e in executions if e.error), ()),
    ]


def tool_results_handed_back_to_the_model(got: Normalized, want: Expected) -> list[Mismatch]:
    seen: list[tuple[str, str]] = []
    for step in got.of(LlmStep):
        for message in step.input_messages:
            if message.role == "tool" and (message.tool_call_id, message.text) not in seen:
                seen.append((message.tool_call_id, message.text))
    return compare("tool messages", tuple(seen), want.tool_messages)


def replies_and_the_final_reply(got: Normalized, want: Expected) -> list[Mismatch]:
    steps = got.of(LlmStep)
    replies = tuple(
        "\n".join(m.text for m in s.output_messages if m.role == "assistant" and m.text)
        for s in steps
    )
    found = compare("replies", replies, want.replies)
    if steps:
        final = steps[-1].output_messages
        last = want.replies[-1] if want.replies else ""
        found += compare("final output message", final[-1].text if final else "", last)
    return found


def agent_runs_and_offered_tools(got: Normalized, want: Expected) -> list[Mismatch]:
    agents = tuple((a.agent_name, a.output_text) for a in got.of(AgentInvocation))
    steps = got.of(LlmStep)
    tools = steps[-1].tools if steps else None
    names = None if tools is None else tuple(t.name for t in tools)
    return [
        *compare("agent runs", agents, want.agents),
        *compare("offered tools", names, want.tools),
    ]


def ids_are_hex_and_parents_resolve(got: Normalized, want: Expected) -> list[Mismatch]:
    ids = {s.span_id for s in got.spans}

    def hex_of(text: str, length: int) -> bool:
        return len(text) == length and all(c in "0123456789abcdefABCDEF" for c in text)

    bad = tuple(
        s.span_id
        for s in got.spans
        if not (hex_of(s.trace_id, 32) and hex_of(s.span_id, 16))
        or s.parent_span_id not in (*ids, "")
    )
    return [
        *compare("spans with a bad id or an unknown parent", bad, ()),
        *compare("distinct span ids", len(ids), len(got.spans)),
    ]


SpanCheck = Callable[[Normalized, Expected], list[Mismatch]]

SPAN_CHECKS: tuple[SpanCheck, ...] = (
    conventions_and_span_kinds,
    models_and_user_request,
    tool_calls_requested_by_the_model,
    tool_executions_and_their_results,
    tool_results_handed_back_to_the_model,
    replies_and_the_final_reply,
    agent_runs_and_offered_tools,
    ids_are_hex_and_parents_resolve,
)


def check_spans(got: Normalized, want: Expected) -> list[Mismatch]:
    """Every span check of one file; empty when its spans say what was read by hand."""
    return [m for check in SPAN_CHECKS for m in check(got, want)]
