"""Span normalization: each attribute convention, table-driven, on small literal spans."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factledger.processors.model import ToolDefinition
from factledger.processors.normalize import genai, langfuse, openinference, traceloop, vercel
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    NormalizedSpan,
    ToolCallPart,
    ToolExecution,
)
from factledger.processors.normalize.dispatch import convention_of, normalize
from factledger.processors.normalize.messages import (
    read_messages,
    reply_text,
    request_text,
    tool_result,
)
from factledger.processors.normalize.values import load_json, tool_definitions, unflatten
from factledger.processors.spans import STATUS_ERROR, SpanEvent, SpanRecord

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
PARENT = "00f067aa0ba902b7"


def span(
    attributes: Mapping[str, Any],
    *,
    name: str = "span",
    events: tuple[SpanEvent, ...] = (),
    status: int = 0,
    parent: str = "",
) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=SPAN,
        name=name,
        parent_span_id=parent,
        status_code=status,
        attributes=dict(attributes),
        events=events,
        start_time_unix_nano=1_000,
        end_time_unix_nano=2_000,
    )


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", text=text)


def assistant(text: str = "", *calls: ToolCallPart) -> ChatMessage:
    return ChatMessage(role="assistant", text=text, tool_calls=calls)


def tool(call_id: str, text: str, *, error: bool = False) -> ChatMessage:
    return ChatMessage(role="tool", text=text, tool_call_id=call_id, is_error=error)


def call(call_id: str, name: str, arguments: str) -> ToolCallPart:
    return ToolCallPart(call_id=call_id, name=name, arguments=arguments)


def normalized(s: SpanRecord, kind: type[Any]) -> Any:
    result = normalize(s)
    assert isinstance(result, kind), result
    return result


def check(result: NormalizedSpan, expected: Mapping[str, Any]) -> None:
    for field, value in expected.items():
        assert getattr(result, field) == value, field


WEATHER_CALL = {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"q": "Paris"}}
WEATHER_RESULT = {"type": "tool_call_response", "id": "c1", "response": "rainy, 57°F"}
WEATHER_MESSAGES = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {"role": "assistant", "parts": [{"type": "text", "content": "Checking."}, WEATHER_CALL]},
    {"role": "tool", "parts": [WEATHER_RESULT]},
]
WEATHER_INPUT = (
    user("Weather in Paris?"),
    assistant("Checking.", call("c1", "get_weather", '{"q": "Paris"}')),
    tool("c1", "rainy, 57°F"),
)
REPLY = [{"role": "assistant", "parts": [{"type": "text", "content": "Rainy."}]}]

# --- GenAI semantic conventions: LLM calls ------------------------------------------------

GENAI_LLM_CASES = [
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(WEATHER_MESSAGES),
            "gen_ai.output.messages": json.dumps([{**REPLY[0], "finish_reason": "stop"}]),
        },
        (),
        {"input_messages": WEATHER_INPUT, "output_messages": (assistant("Rainy."),)},
        id="json-messages-with-tool-call-and-response",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": WEATHER_MESSAGES,
            "gen_ai.output.messages": REPLY,
        },
        (),
        {"input_messages": WEATHER_INPUT, "output_messages": (assistant("Rainy."),)},
        id="already-structured-messages",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [
                            {"type": "tool_call", "id": "c1", "name": "f", "arguments": '{"a":1}'}
                        ],
                    },
                    {
                        "role": "tool",
                        "parts": [{"type": "tool_call_response", "id": "c1", "result": {"n": 2}}],
                    },
                ]
            ),
        },
        (),
        {"input_messages": (assistant("", call("c1", "f", '{"a":1}')), tool("c1", '{"n": 2}'))},
        id="string-arguments-kept-verbatim-and-result-key-read",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "generate_content",
            "gen_ai.input.messages": json.dumps(
                [
                    {
                        "role": "user",
                        "parts": [
                            {"type": "tool_call_response", "id": "a", "result": "one"},
                            {"type": "tool_call_response", "id": "b", "result": "two"},
                        ],
                    }
                ]
            ),
        },
        (),
        {"input_messages": (tool("a", "one"), tool("b", "two"))},
        id="tool-results-in-a-user-message-become-tool-messages",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [
                            {"type": "reasoning", "content": "hidden"},
                            {"type": "thinking", "content": "hidden"},
                            {"type": "text", "content": "Visible."},
                        ],
                    }
                ]
            ),
        },
        (),
        {"output_messages": (assistant("Visible."),)},
        id="reasoning-and-thinking-parts-ignored",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
        },
        (),
        {"system_instructions": "Be brief."},
        id="system-instructions-as-json-parts",
    ),
    pytest.param(
        {"gen_ai.operation.name": "chat", "gen_ai.system_instructions": "Be brief."},
        (),
        {"system_instructions": "Be brief."},
        id="system-instructions-as-plain-string",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.tool.definitions": json.dumps(
                [
                    {"type": "function", "name": "a", "description": "A", "parameters": {"x": 1}},
                    {"type": "function", "function": {"name": "b", "parameters": {"y": 2}}},
                ]
            ),
        },
        (),
        {"tools": (ToolDefinition("a", {"x": 1}, "A"), ToolDefinition("b", {"y": 2}))},
        id="tool-definitions-flat-and-nested",
    ),
    pytest.param(
        {"gen_ai.operation.name": "chat"},
        (),
        {"tools": None, "input_messages": (), "output_messages": ()},
        id="no-tool-definitions-means-unknown",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4",
            "gen_ai.response.model": "gpt-4-0613",
            "gen_ai.system": "openai",
            "gen_ai.conversation.id": "conv-1",
            "gen_ai.agent.name": "helper",
        },
        (),
        {
            "model": "gpt-4-0613",
            "provider": "openai",
            "conversation_id": "conv-1",
            "agent_name": "helper",
        },
        id="response-model-and-older-system-attribute",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4",
            "gen_ai.provider.name": "azure.ai.openai",
            "gen_ai.system": "openai",
        },
        (),
        {"model": "gpt-4", "provider": "azure.ai.openai"},
        id="request-model-when-no-response-model-and-provider-name-first",
    ),
    pytest.param(
        {"gen_ai.operation.name": "chat"},
        (
            SpanEvent(
                "gen_ai.client.inference.operation.details",
                attributes={
                    "gen_ai.input.messages": json.dumps(WEATHER_MESSAGES),
                    "gen_ai.output.messages": json.dumps(REPLY),
                },
            ),
        ),
        {"input_messages": WEATHER_INPUT, "output_messages": (assistant("Rainy."),)},
        id="messages-on-the-operation-details-event",
    ),
    pytest.param(
        {"gen_ai.operation.name": "chat"},
        (
            SpanEvent("gen_ai.system.message", attributes={"content": "Be brief."}),
            SpanEvent("gen_ai.user.message", attributes={"content": "Weather in Paris?"}),
            SpanEvent(
                "gen_ai.assistant.message",
                attributes={
                    "tool_calls": json.dumps(
                        [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"q": "Paris"}'},
                            }
                        ]
                    )
                },
            ),
            SpanEvent("gen_ai.tool.message", attributes={"id": "c1", "content": "rainy"}),
            SpanEvent(
                "gen_ai.choice",
                attributes={
                    "index": 0,
                    "finish_reason": "stop",
                    "message": json.dumps({"role": "assistant", "content": "Rainy."}),
                },
            ),
        ),
        {
            "input_messages": (
                ChatMessage(role="system", text="Be brief."),
                user("Weather in Paris?"),
                assistant("", call("c1", "get_weather", '{"q": "Paris"}')),
                tool("c1", "rainy"),
            ),
            "output_messages": (assistant("Rainy."),),
        },
        id="deprecated-message-events",
    ),
    pytest.param(
        {
            "llm.request.type": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Weather in Paris?",
            "gen_ai.prompt.1.role": "assistant",
            "gen_ai.prompt.1.tool_calls.0.id": "c1",
            "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
            "gen_ai.prompt.1.tool_calls.0.arguments": '{"q": "Paris"}',
            "gen_ai.prompt.2.role": "tool",
            "gen_ai.prompt.2.content": "rainy",
            "gen_ai.prompt.2.tool_call_id": "c1",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Rainy.",
            "gen_ai.completion.0.finish_reason": "stop",
            "llm.request.functions.0.name": "get_weather",
            "llm.request.functions.0.description": "Weather",
            "llm.request.functions.0.parameters": '{"type": "object"}',
        },
        (),
        {
            "input_messages": (
                user("Weather in Paris?"),
                assistant("", call("c1", "get_weather", '{"q": "Paris"}')),
                tool("c1", "rainy"),
            ),
            "output_messages": (assistant("Rainy."),),
            "tools": (ToolDefinition("get_weather", {"type": "object"}, "Weather"),),
            "model": "gpt-4o",
        },
        id="deprecated-flattened-prompt-and-completion-without-operation-name",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.tool_calls.0.id": "c9",
            "gen_ai.completion.0.tool_calls.0.name": "lookup",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"id": 7}',
            "gen_ai.completion.0.finish_reason": "tool_calls",
        },
        (),
        {"output_messages": (assistant("", call("c9", "lookup", '{"id": 7}')),)},
        id="deprecated-flattened-completion-tool-calls",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.prompt": json.dumps({"content": "Hi there", "role": "user"}),
            "gen_ai.completion": json.dumps(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
                    ],
                }
            ),
        },
        (),
        {
            "input_messages": (user("Hi there"),),
            "output_messages": (assistant("Looking.", call("t1", "f", '{"a": 1}')),),
        },
        id="whole-value-prompt-and-completion-with-anthropic-blocks",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(WEATHER_MESSAGES)[:-40],
        },
        (),
        {"input_messages": WEATHER_INPUT[:2]},
        id="truncated-messages-keep-the-complete-leading-ones",
    ),
    pytest.param(
        {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "{not json"},
        (),
        {"input_messages": (user("{not json"),)},
        id="unparseable-messages-kept-as-text",
    ),
]


@pytest.mark.parametrize(("attributes", "events", "expected"), GENAI_LLM_CASES)
def test_genai_llm_call(attributes, events, expected):
    result = normalized(span(attributes, events=events), LlmStep)
    check(result, expected)
    assert (result.span_id, result.start_time_unix_nano, result.end_time_unix_nano) == (
        SPAN,
        1_000,
        2_000,
    )


# --- GenAI: tool executions ---------------------------------------------------------------

GENAI_TOOL_CASES = [
    pytest.param(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": {"city": "Zürich"},
            "gen_ai.tool.call.result": "sunny",
        },
        0,
        "span",
        {"name": "get_weather", "call_id": "c1", "arguments": '{"city": "Zürich"}'},
        id="object-arguments-as-json-text-without-ascii-escapes",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "f",
            "gen_ai.tool.call.arguments": '{"a":1}',
            "gen_ai.tool.call.result": '"The weather is 23\\u00b0C."',
        },
        0,
        "span",
        {"arguments": '{"a":1}', "result": "The weather is 23°C.", "error": False},
        id="string-arguments-verbatim-json-string-result-unquoted",
    ),
    pytest.param(
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f"},
        STATUS_ERROR,
        "span",
        {"error": True, "result": None, "arguments": ""},
        id="span-status-error-marks-the-call-failed",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "f",
            "error.type": "TimeoutError",
        },
        0,
        "span",
        {"error": True},
        id="error-type-attribute-marks-the-call-failed",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "f",
            "gen_ai.tool.call.result": json.dumps(
                {"content": [{"type": "text", "text": "denied"}], "isError": True}
            ),
        },
        0,
        "span",
        {"error": True, "result": "denied"},
        id="mcp-result-flagged-as-error",
    ),
    pytest.param(
        {"gen_ai.operation.name": "execute_tool"},
        0,
        "execute_tool search_docs",
        {"name": "search_docs"},
        id="tool-name-from-the-span-name",
    ),
    pytest.param(
        {
            "gen_ai.tool.name": "get_pun",
            "gen_ai.tool.call.id": "c2",
            "tool_arguments": {"topic": "code"},
            "tool_response": "a pun",
        },
        0,
        "running tool: get_pun",
        {"name": "get_pun", "call_id": "c2", "arguments": '{"topic": "code"}', "result": "a pun"},
        id="pydantic-ai-tool-span-without-operation-name",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "execute_tool",
            "langsmith.span.kind": "tool",
            "gen_ai.prompt": '{"input": {"city": "Berlin"}}',
            "gen_ai.completion": '{"content": [{"type": "text", "text": "Cloudy"}]}',
        },
        0,
        "mcp__weather__get_weather",
        {
            "name": "mcp__weather__get_weather",
            "arguments": '{"city": "Berlin"}',
            "result": "Cloudy",
        },
        id="langsmith-prompt-and-completion-unwrapped",
    ),
    pytest.param(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "echo",
            "input": '{"input": "hello"}',
            "output": "hello",
        },
        0,
        "span",
        {"arguments": '{"input": "hello"}', "result": "hello"},
        id="a-parameter-called-input-is-not-unwrapped",
    ),
]


@pytest.mark.parametrize(("attributes", "status", "name", "expected"), GENAI_TOOL_CASES)
def test_genai_tool_execution(attributes, status, name, expected):
    check(normalized(span(attributes, status=status, name=name), ToolExecution), expected)


# --- GenAI: agent runs and spans that say nothing about a turn ----------------------------


def test_genai_invoke_agent_is_an_agent_run():
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "gen_ai.agent.id": "agent-7",
        "gen_ai.request.model": "gpt-5-mini",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.input.messages": json.dumps(WEATHER_MESSAGES[:1]),
        "gen_ai.output.messages": json.dumps([*WEATHER_MESSAGES[1:], *REPLY]),
        "gen_ai.tool.definitions": json.dumps([{"type": "function", "name": "get_weather"}]),
    }
    result = normalized(span(attributes), AgentInvocation)
    check(
        result,
        {
            "agent_name": "weather",
            "model": "gpt-5-mini",
            "conversation_id": "conv-1",
            "input_text": "Weather in Paris?",
            "output_text": "Rainy.",
            "tools": (ToolDefinition("get_weather"),),
            "extra": {"agent_id": "agent-7"},
        },
    )


def test_pydantic_ai_agent_run_without_operation_name():
    attributes = {
        "gen_ai.agent.name": "joker",
        "model_name": "gpt-4o-mini",
        "final_result": {"quality": "good"},
        "pydantic_ai.all_messages": [
            {"role": "user", "parts": [{"type": "text", "content": "Rate it"}]},
        ],
    }
    check(
        normalized(span(attributes), AgentInvocation),
        {
            "agent_name": "joker",
            "model": "gpt-4o-mini",
            "input_text": "Rate it",
            "output_text": '{"quality": "good"}',
        },
    )


@pytest.mark.parametrize(
    "attributes",
    [
        pytest.param({"gen_ai.operation.name": "embeddings"}, id="embeddings"),
        pytest.param({"gen_ai.operation.name": "create_agent"}, id="create-agent"),
        pytest.param({"gen_ai.operation.name": "chain", "gen_ai.system": "x"}, id="chain"),
        pytest.param({"http.method": "GET", "url.full": "https://x"}, id="http-span"),
        pytest.param({}, id="no-attributes"),
    ],
)
def test_spans_without_turn_meaning_normalize_to_none(attributes):
    assert normalize(span(attributes)) is None


# --- OpenInference --------------------------------------------------------------------------

OI_MESSAGES = {
    "llm.input_messages.0.message.role": "system",
    "llm.input_messages.0.message.content": "Be brief.",
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.contents.0.message_content.type": "text",
    "llm.input_messages.1.message.contents.0.message_content.text": "Weather in Paris?",
    "llm.input_messages.2.message.role": "assistant",
    "llm.input_messages.2.message.tool_calls.0.tool_call.id": "c1",
    "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_weather",
    "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"q":"Paris"}',
    "llm.input_messages.10.message.role": "tool",
    "llm.input_messages.10.message.content": "rainy",
    "llm.input_messages.10.message.tool_call_id": "c1",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.content": "Rainy.",
}

OPENINFERENCE_CASES = [
    pytest.param(
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.provider": "openai",
            "session.id": "s-1",
            **OI_MESSAGES,
            "llm.tools.0.tool.json_schema": json.dumps(
                {"type": "function", "function": {"name": "get_weather", "parameters": {"a": 1}}}
            ),
        },
        "",
        LlmStep,
        {
            "input_messages": (
                ChatMessage(role="system", text="Be brief."),
                user("Weather in Paris?"),
                assistant("", call("c1", "get_weather", '{"q":"Paris"}')),
                tool("c1", "rainy"),
            ),
            "output_messages": (assistant("Rainy."),),
            "model": "gpt-4o",
            "provider": "openai",
            "conversation_id": "s-1",
            "tools": (ToolDefinition("get_weather", {"a": 1}),),
        },
        id="llm-flattened-messages-in-index-order-with-tools",
    ),
    pytest.param(
        {
            "openinference.span.kind": "LLM",
            "llm.system": "openai",
            "input.value": json.dumps({"messages": [{"role": "user", "content": "Hi"}]}),
            "output.value": json.dumps({"text": "Hello!", "finish_reason": "stop"}),
        },
        "",
        LlmStep,
        {"input_messages": (user("Hi"),), "output_messages": (assistant("Hello!"),)},
        id="llm-messages-from-input-and-output-values",
    ),
    pytest.param(
        {
            "openinference.span.kind": "LLM",
            "output.value": json.dumps(
                {
                    "object": "response",
                    "output": [
                        {"type": "reasoning", "summary": []},
                        {
                            "type": "function_call",
                            "call_id": "c1",
                            "name": "f",
                            "arguments": "{}",
                        },
                    ],
                }
            ),
        },
        "",
        LlmStep,
        {"output_messages": (assistant("", call("c1", "f", "{}")),)},
        id="llm-responses-api-output-items",
    ),
    pytest.param(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "get_weather",
            "tool_call.id": "c1",
            "input.value": '{"city":"Tokyo"}',
            "output.value": "sunny",
        },
        "",
        ToolExecution,
        {
            "name": "get_weather",
            "call_id": "c1",
            "arguments": '{"city":"Tokyo"}',
            "result": "sunny",
        },
        id="tool-span",
    ),
    pytest.param(
        {
            "openinference.span.kind": "TOOL",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.id": "adk-1",
            "tool.name": "say_hello",
        },
        "",
        ToolExecution,
        {"name": "say_hello", "call_id": "adk-1", "result": None},
        id="tool-span-call-id-from-genai-attributes",
    ),
    pytest.param(
        {
            "openinference.span.kind": "AGENT",
            "agent.name": "planner",
            "input.value": "Plan my trip",
            "output.value": json.dumps(
                {"content": {"parts": [{"text": "Done."}], "role": "model"}}
            ),
        },
        "",
        AgentInvocation,
        {"agent_name": "planner", "input_text": "Plan my trip", "output_text": "Done."},
        id="agent-span-with-gemini-shaped-output",
    ),
    pytest.param(
        {"openinference.span.kind": "AGENT"},
        "",
        AgentInvocation,
        {"agent_name": "span", "input_text": "", "output_text": ""},
        id="agent-name-from-span-name",
    ),
    pytest.param(
        {"openinference.span.kind": "CHAIN", "output.value": '{"raw": "final"}'},
        "",
        AgentInvocation,
        {"output_text": "final"},
        id="root-chain-is-an-agent-run",
    ),
]


@pytest.mark.parametrize(("attributes", "parent", "kind", "expected"), OPENINFERENCE_CASES)
def test_openinference(attributes, parent, kind, expected):
    check(normalized(span(attributes, parent=parent), kind), expected)


@pytest.mark.parametrize(
    ("kind", "parent"),
    [
        pytest.param("CHAIN", PARENT, id="inner-chain"),
        pytest.param("RETRIEVER", "", id="retriever"),
        pytest.param("EMBEDDING", "", id="embedding"),
        pytest.param("GUARDRAIL", "", id="guardrail"),
    ],
)
def test_openinference_kinds_without_turn_meaning(kind, parent):
    assert normalize(span({"openinference.span.kind": kind}, parent=parent)) is None


# --- Traceloop / OpenLLMetry --------------------------------------------------------------

TOOL_MESSAGE = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "ToolMessage"],
    "kwargs": {"content": "42 results", "tool_call_id": "call_9", "status": "success"},
}

TRACELOOP_CASES = [
    pytest.param(
        {
            "traceloop.span.kind": "workflow",
            "traceloop.workflow.name": "support",
            "traceloop.entity.input": json.dumps({"args": ["Where is my order?"], "kwargs": {}}),
            "traceloop.entity.output": json.dumps("It ships today."),
            "traceloop.association.properties.session_id": "sess-3",
        },
        "support.workflow",
        AgentInvocation,
        {
            "agent_name": "support",
            "conversation_id": "sess-3",
            "output_text": "It ships today.",
        },
        id="workflow-is-an-agent-run",
    ),
    pytest.param(
        {
            "traceloop.span.kind": "agent",
            "traceloop.entity.name": "researcher",
            "traceloop.entity.input": json.dumps(
                {"inputs": {"messages": [{"role": "user", "content": "Find X"}]}}
            ),
            "traceloop.entity.output": json.dumps(
                {"outputs": {"messages": [{"role": "assistant", "content": "Found X."}]}}
            ),
        },
        "researcher.agent",
        AgentInvocation,
        {"agent_name": "researcher", "input_text": "Find X", "output_text": "Found X."},
        id="agent-with-langchain-inputs-and-outputs",
    ),
    pytest.param(
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"city": "Oslo"}}),
            "traceloop.entity.output": json.dumps({"temp": 3}),
        },
        "get_weather.tool",
        ToolExecution,
        {"name": "get_weather", "arguments": '{"city": "Oslo"}', "result": '{"temp": 3}'},
        id="decorated-tool-kwargs-and-result",
    ),
    pytest.param(
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "search",
            "traceloop.entity.input": json.dumps({"inputs": "{'q': 'x'}", "tags": []}),
            "traceloop.entity.output": json.dumps({"outputs": TOOL_MESSAGE, "kwargs": {}}),
        },
        "search.tool",
        ToolExecution,
        {"name": "search", "call_id": "call_9", "arguments": "{'q': 'x'}", "result": "42 results"},
        id="langchain-tool-with-serialized-tool-message",
    ),
]


@pytest.mark.parametrize(("attributes", "name", "kind", "expected"), TRACELOOP_CASES)
def test_traceloop(attributes, name, kind, expected):
    check(normalized(span(attributes, name=name), kind), expected)


def test_traceloop_task_normalizes_to_none():
    assert normalize(span({"traceloop.span.kind": "task"}, name="fetch.task")) is None


# --- Vercel AI SDK ------------------------------------------------------------------------

VERCEL_CASES = [
    pytest.param(
        {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "gpt-4o-mini",
            "ai.model.provider": "openai.chat",
            "ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.system": "openai.chat",
            "ai.prompt.messages": json.dumps(
                [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool-call",
                                "toolCallId": "c1",
                                "toolName": "w",
                                "input": {"q": "x"},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": "c1",
                                "toolName": "w",
                                "output": {"type": "error-text", "value": "boom"},
                            }
                        ],
                    },
                ]
            ),
            "ai.response.text": "Retrying.",
            "ai.response.toolCalls": json.dumps(
                [{"toolCallType": "function", "toolCallId": "c2", "toolName": "w", "args": "{}"}]
            ),
            "ai.prompt.tools": [
                json.dumps({"type": "function", "name": "w", "inputSchema": {"type": "object"}})
            ],
        },
        "ai.generateText.doGenerate",
        LlmStep,
        {
            "input_messages": (
                ChatMessage(role="system", text="Be brief."),
                user("Weather?"),
                assistant("", call("c1", "w", '{"q": "x"}')),
                tool("c1", "boom", error=True),
            ),
            "output_messages": (assistant("Retrying.", call("c2", "w", "{}")),),
            "model": "gpt-4o-mini-2024-07-18",
            "provider": "openai.chat",
            "tools": (ToolDefinition("w", {"type": "object"}),),
        },
        id="do-generate-step-with-tool-call-and-error-result",
    ),
    pytest.param(
        {
            "operation.name": "ai.streamText.doStream my-fn",
            "ai.model.id": "claude",
            "ai.response.text": "Streamed.",
        },
        "ai.streamText.doStream",
        LlmStep,
        {"output_messages": (assistant("Streamed."),), "model": "claude"},
        id="stream-step-known-by-operation-name",
    ),
    pytest.param(
        {
            "ai.operationId": "ai.toolCall",
            "ai.toolCall.name": "w",
            "ai.toolCall.id": "c1",
            "ai.toolCall.args": '{"q":"x"}',
            "ai.toolCall.result": '{"t":64}',
        },
        "ai.toolCall",
        ToolExecution,
        {"name": "w", "call_id": "c1", "arguments": '{"q":"x"}', "result": '{"t":64}'},
        id="tool-call",
    ),
    pytest.param(
        {
            "ai.operationId": "ai.generateText",
            "ai.telemetry.functionId": "weather-bot",
            "ai.model.id": "gpt-4o-mini",
            "ai.prompt": json.dumps({"prompt": "Weather?"}),
            "ai.response.text": "Sunny.",
        },
        "ai.generateText",
        AgentInvocation,
        {"agent_name": "weather-bot", "input_text": "Weather?", "output_text": "Sunny."},
        id="top-level-call-is-an-agent-run",
    ),
]


@pytest.mark.parametrize(("attributes", "name", "kind", "expected"), VERCEL_CASES)
def test_vercel_ai_sdk(attributes, name, kind, expected):
    check(normalized(span(attributes, name=name), kind), expected)


def test_vercel_embedding_normalizes_to_none():
    assert normalize(span({"ai.operationId": "ai.embed.doEmbed"}, name="ai.embed")) is None


# --- Langfuse SDK ---------------------------------------------------------------------------


def test_langfuse_generation_lists_offered_tools_apart_from_messages():
    listing = {"type": "function", "function": {"name": "search", "parameters": {"a": 1}}}
    attributes = {
        "langfuse.observation.type": "generation",
        "langfuse.observation.model.name": "gpt-4o",
        "langfuse.observation.input": json.dumps(
            [{"role": "user", "content": "Find it"}, {"role": "tool", "content": listing}]
        ),
        "langfuse.observation.output": json.dumps(
            {
                "role": "assistant",
                "content": "",
                "additional_kwargs": {
                    "tool_calls": [
                        {"id": "c1", "function": {"name": "search", "arguments": '{"q":"it"}'}}
                    ]
                },
            }
        ),
        "langfuse.observation.metadata.ls_provider": "openai",
    }
    check(
        normalized(span(attributes), LlmStep),
        {
            "input_messages": (user("Find it"),),
            "output_messages": (assistant("", call("c1", "search", '{"q":"it"}')),),
            "tools": (ToolDefinition("search", {"a": 1}),),
            "model": "gpt-4o",
            "provider": "openai",
        },
    )


def test_langfuse_span_holding_a_tool_message_is_a_tool_execution():
    attributes = {
        "langfuse.observation.type": "span",
        "langfuse.observation.input": "{'q': 'x'}",
        "langfuse.observation.output": json.dumps(
            {"content": "found", "type": "tool", "name": "search", "tool_call_id": "c1"}
        ),
        "langfuse.observation.metadata.inputs": '{"q": "x"}',
        "langfuse.observation.level": "ERROR",
    }
    check(
        normalized(span(attributes, name="search"), ToolExecution),
        {
            "name": "search",
            "call_id": "c1",
            "arguments": '{"q": "x"}',
            "result": "found",
            "error": True,
        },
    )


def test_langfuse_plain_span_normalizes_to_none():
    attributes = {"langfuse.observation.type": "span", "langfuse.observation.output": "end"}
    assert normalize(span(attributes)) is None


# --- dispatch -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attributes", "convention"),
    [
        pytest.param(
            {"openinference.span.kind": "TOOL", "gen_ai.operation.name": "execute_tool"},
            "openinference",
            id="declared-openinference-kind-beats-genai",
        ),
        pytest.param(
            {"traceloop.span.kind": "tool", "gen_ai.system": "openai"},
            "traceloop",
            id="traceloop-kind",
        ),
        pytest.param(
            {"ai.operationId": "ai.toolCall", "gen_ai.system": "openai"},
            "vercel",
            id="ai-sdk-beats-its-own-genai-attributes",
        ),
        pytest.param({"gen_ai.operation.name": "chat"}, "genai", id="genai-operation"),
        pytest.param({"llm.request.type": "chat"}, "genai", id="openllmetry-llm-span"),
        pytest.param({"langfuse.observation.type": "generation"}, "langfuse", id="langfuse-sdk"),
        pytest.param({"db.system": "postgresql"}, None, id="no-convention"),
    ],
)
def test_convention_detection(attributes, convention):
    assert convention_of(span(attributes)) == convention


def test_unflatten_orders_indices_numerically_and_ignores_odd_keys():
    attributes = {
        "p.10.role": "b",
        "p.2.role": "a",
        "p.x.role": "ignored",
        "p.3": "leaf",
        "p.3.role": "ignored: 3 is already a value",
        "p.²": "not an ascii index",
        "p.4..role": "empty segment",
    }
    assert unflatten(attributes, "p") == [{"role": "a"}, "leaf", {"role": "b"}]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param('"quoted"', "quoted", id="json-string-literal"),
        pytest.param("[DRAFT] text", "[DRAFT] text", id="bracketed-text-stays-text"),
        pytest.param(b'{"a": 1}', {"a": 1}, id="bytes"),
        pytest.param(7, 7, id="non-text-as-given"),
    ],
)
def test_load_json(value, expected):
    assert load_json(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            [{"role": "model", "parts": [{"function_call": {"name": "f", "args": {"x": 1}}}]}],
            (assistant("", call("", "f", '{"x": 1}')),),
            id="gemini-function-call",
        ),
        pytest.param(
            [{"role": "user", "parts": [{"function_response": {"name": "f", "response": {}}}]}],
            (tool("", "{}"),),
            id="gemini-function-response",
        ),
        pytest.param(
            [
                {
                    "type": "ai",
                    "content": "",
                    "tool_calls": [{"name": "f", "args": {"a": 1}, "id": "c1"}],
                    "additional_kwargs": {
                        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]
                    },
                },
                {"type": "tool", "content": "ok", "tool_call_id": "c1", "status": "error"},
            ],
            (assistant("", call("c1", "f", '{"a": 1}')), tool("c1", "ok", error=True)),
            id="langchain-messages-without-duplicate-calls",
        ),
        pytest.param(
            [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": "x",
                            "is_error": True,
                        },
                        {"type": "text", "text": "continue"},
                    ],
                }
            ],
            (tool("t1", "x", error=True), user("continue")),
            id="anthropic-tool-result-then-user-text",
        ),
        pytest.param(
            [{"role": "tool", "content": '{"greeting": "hi"}'}],
            (tool("", '{"greeting": "hi"}'),),
            id="json-text-content-stays-verbatim",
        ),
        pytest.param(
            [{"role": "developer", "content": "rules"}, {"role": "assistant", "content": None}],
            (ChatMessage(role="system", text="rules"),),
            id="developer-is-system-and-empty-messages-dropped",
        ),
    ],
)
def test_read_messages_shapes(value, expected):
    assert read_messages(value) == expected


def test_tool_definitions_unreadable_is_unknown_and_empty_list_is_none_offered():
    assert tool_definitions("not json") is None
    assert tool_definitions("[]") == ()
    assert tool_definitions([{"function_declarations": [{"name": "g"}]}]) == (ToolDefinition("g"),)


# --- never raises -------------------------------------------------------------------------

_KEYS = st.sampled_from(
    [
        "gen_ai.operation.name",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.tool.name",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.agent.name",
        "gen_ai.prompt",
        "gen_ai.prompt.0.content",
        "gen_ai.prompt.0.tool_calls.0.arguments",
        "gen_ai.completion.1.role",
        "llm.request.functions.0.parameters",
        "llm.request.type",
        "model_request_parameters",
        "pydantic_ai.all_messages",
        "final_result",
        "openinference.span.kind",
        "llm.input_messages.0.message.content",
        "llm.input_messages.0.message.contents.0.message_content.text",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
        "llm.tools.0.tool.json_schema",
        "input.value",
        "output.value",
        "traceloop.span.kind",
        "traceloop.entity.input",
        "traceloop.entity.output",
        "ai.operationId",
        "ai.prompt.messages",
        "ai.response.toolCalls",
        "ai.prompt.tools",
        "ai.toolCall.result",
        "langfuse.observation.type",
        "langfuse.observation.input",
        "langfuse.observation.output",
    ]
)
_KIND_VALUES = st.sampled_from(
    ["chat", "execute_tool", "invoke_agent", "LLM", "TOOL", "AGENT", "CHAIN", "tool",
     "workflow", "ai.generateText.doGenerate", "ai.toolCall", "ai.generateText",
     "generation", "span"]
)  # fmt: skip
_SHAPE_KEYS = (
    "role", "parts", "type", "content", "text", "tool_calls", "id", "name", "arguments",
    "function", "response", "result", "messages", "output", "message", "tool_call_id",
    "kwargs", "lc", "function_call", "message_content", "input",
)  # fmt: skip
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_SHAPE_KEYS) | st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=20,
)
_VALUES = (
    _JSONISH
    | _KIND_VALUES
    | _JSONISH.map(lambda v: json.dumps(v))
    | _JSONISH.map(lambda v: json.dumps(v)[: max(1, len(json.dumps(v)) // 2)])
)
_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_READERS: list[Callable[[SpanRecord], object]] = [
    genai.normalize_genai,
    openinference.normalize_openinference,
    traceloop.normalize_traceloop,
    vercel.normalize_vercel,
    langfuse.normalize_langfuse,
]


@_PROPERTY
@given(st.dictionaries(_KEYS | st.text(max_size=12), _VALUES, max_size=8), st.booleans())
def test_random_attributes_never_raise(attributes, failed):
    record = span(attributes, status=STATUS_ERROR if failed else 0)
    normalize(record)
    convention_of(record)
    for read in _READERS:  # each reader directly: the dispatcher's guard must not be needed
        read(record)


@_PROPERTY
@given(
    st.sampled_from(["gen_ai.choice", "gen_ai.user.message", "gen_ai.tool.message", "x"]),
    st.dictionaries(
        st.sampled_from(["content", "tool_calls", "id", "message"]), _VALUES, max_size=3
    ),
)
def test_random_events_never_raise(name, body):
    genai.normalize_genai(
        span({"gen_ai.operation.name": "chat"}, events=(SpanEvent(name, 0, body),))
    )


@_PROPERTY
@given(_VALUES)
def test_random_values_never_raise_in_the_shared_readers(value):
    for role in ("user", "assistant"):
        for message in read_messages(value, role):
            assert message.role and isinstance(message.text, str)
    tool_definitions(value)
    reply_text(value)
    request_text(value)
    tool_result(value)
