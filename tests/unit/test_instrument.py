"""The GenAI span helpers, recorded with the SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from factledger.instrument import (
    chat,
    execute_tool,
    invoke_agent,
    semconv_messages,
    tool_definition,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "gh_put_file",
            "description": "Commit a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Add README.md"},
    {
        "role": "assistant",
        "content": "Committing it.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "gh_put_file", "arguments": '{"path": "README.md"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"commit": "abc"}'},
]


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {s.name: s for s in exporter.get_finished_spans()}


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_agent_chat_and_tool_spans_nest_and_carry_semconv_attributes(spans):
    provider, exporter = spans
    with invoke_agent("coder", conversation_id="conv-1", model="gpt-4o", tracer_provider=provider):
        with chat(
            "gpt-4o",
            provider="openai",
            input_messages=MESSAGES,
            tools=TOOLS,
            tracer_provider=provider,
        ) as llm:
            llm.set_output(text="Done: commit abc.")
        with execute_tool(
            "gh_put_file",
            call_id="call_1",
            arguments={"path": "README.md"},
            tracer_provider=provider,
        ) as tool:
            tool.set_result({"commit": "abc"})

    found = by_name(exporter)
    agent = found["invoke_agent coder"]
    llm_span = found["chat gpt-4o"]
    tool_span = found["execute_tool gh_put_file"]
    assert attrs(agent) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "coder",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.request.model": "gpt-4o",
    }
    assert agent.parent is None
    for child in (llm_span, tool_span):
        assert child.parent is not None
        assert child.parent.span_id == agent.context.span_id
        assert child.context.trace_id == agent.context.trace_id
    assert llm_span.kind is SpanKind.CLIENT

    a = attrs(llm_span)
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == "gpt-4o"
    assert a["gen_ai.provider.name"] == "openai"
    assert json.loads(a["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "You are a coding agent."}
    ]
    assert json.loads(a["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Add README.md"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Committing it."},
                {
                    "type": "tool_call",
                    "id": "call_1",
                    "name": "gh_put_file",
                    "arguments": {"path": "README.md"},
                },
            ],
        },
        {
            "role": "tool",
            "parts": [
                {"type": "tool_call_response", "id": "call_1", "response": '{"commit": "abc"}'}
            ],
        },
    ]
    assert json.loads(a["gen_ai.tool.definitions"]) == [
        {
            "type": "function",
            "name": "gh_put_file",
            "description": "Commit a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]
    assert json.loads(a["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Done: commit abc."}],
            "finish_reason": "stop",
        }
    ]
    assert a["gen_ai.response.finish_reasons"] == ("stop",)

    t = attrs(tool_span)
    assert t["gen_ai.operation.name"] == "execute_tool"
    assert t["gen_ai.tool.name"] == "gh_put_file"
    assert t["gen_ai.tool.call.id"] == "call_1"
    assert json.loads(t["gen_ai.tool.call.arguments"]) == {"path": "README.md"}
    assert json.loads(t["gen_ai.tool.call.result"]) == {"commit": "abc"}
    assert tool_span.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize(
    ("text", "tool_calls", "finish_reason", "parts", "reason"),
    [
        (
            None,
            [{"id": "c1", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}],
            None,
            [
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "get_weather",
                    "arguments": {"city": "Oslo"},
                }
            ],
            "tool_call",
        ),
        (
            "Checking.",
            [{"id": "c2", "name": "fetch", "arguments": "not json"}],
            None,
            [
                {"type": "text", "content": "Checking."},
                {"type": "tool_call", "id": "c2", "name": "fetch", "arguments": "not json"},
            ],
            "tool_call",
        ),
        ("Cut off", None, "length", [{"type": "text", "content": "Cut off"}], "length"),
    ],
    ids=[
        "openai-style tool call becomes a tool_call part with parsed arguments",
        "text plus a flat call whose arguments are not json keeps the text",
        "an explicit finish reason is kept",
    ],
)
def test_set_output_writes_parts_and_finish_reason(
    spans, text, tool_calls, finish_reason, parts, reason
):
    provider, exporter = spans
    with chat("m", tracer_provider=provider) as llm:
        llm.set_output(text=text, tool_calls=tool_calls, finish_reason=finish_reason)
    a = attrs(exporter.get_finished_spans()[0])
    assert json.loads(a["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": parts, "finish_reason": reason}
    ]
    assert a["gen_ai.response.finish_reasons"] == (reason,)


def test_capture_content_off_keeps_structure_and_drops_text(spans):
    provider, exporter = spans
    with chat(
        "gpt-4o",
        input_messages=MESSAGES,
        tools=TOOLS,
        capture_content=False,
        tracer_provider=provider,
    ) as llm:
        llm.set_output(text="secret reply")
    with execute_tool(
        "gh_put_file",
        call_id="call_1",
        arguments={"path": "x"},
        capture_content=False,
        tracer_provider=provider,
    ) as tool:
        tool.set_result("secret result")
    found = by_name(exporter)
    a = attrs(found["chat gpt-4o"])
    t = attrs(found["execute_tool gh_put_file"])
    for key in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"):
        assert key not in a
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert "gen_ai.tool.definitions" in a
    assert "gen_ai.tool.call.arguments" not in t
    assert "gen_ai.tool.call.result" not in t
    assert t["gen_ai.tool.call.id"] == "call_1"
    assert "secret" not in json.dumps({**a, **t}, default=str)


def test_set_error_marks_the_tool_span_error(spans):
    provider, exporter = spans
    with execute_tool("send_email", tracer_provider=provider) as tool:
        tool.set_result('{"ok": false}')
        tool.set_error("recipient rejected")
    span = exporter.get_finished_spans()[0]
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "recipient rejected"
    assert attrs(span)["error.type"] == "tool_error"
    assert attrs(span)["gen_ai.tool.call.result"] == '{"ok": false}'


@pytest.mark.parametrize(
    "helper",
    [
        lambda p: execute_tool("boom", tracer_provider=p),
        lambda p: chat("m", tracer_provider=p),
        lambda p: invoke_agent("a", tracer_provider=p),
    ],
    ids=["tool", "chat", "agent"],
)
def test_exception_escaping_a_block_marks_error_and_is_reraised(spans, helper):
    provider, exporter = spans
    with pytest.raises(KeyError), helper(provider):
        raise KeyError("missing")
    span = exporter.get_finished_spans()[0]
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"] == "KeyError"
    assert [e.name for e in span.events] == ["exception"]


def test_default_tracer_provider_is_the_global_one(spans, monkeypatch):
    provider, exporter = spans
    monkeypatch.setattr("opentelemetry.trace.get_tracer_provider", lambda: provider)
    with invoke_agent("global"):
        pass
    assert [s.name for s in exporter.get_finished_spans()] == ["invoke_agent global"]


@pytest.mark.parametrize(
    ("messages", "expected", "system"),
    [
        (
            [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "hi"}],
            [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
            [{"type": "text", "content": "Be brief."}],
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                }
            ],
            [{"role": "user", "parts": [{"type": "text", "content": "a\nb"}]}],
            [],
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": '[{"function": {"name": "ls"}}]',
                }
            ],
            [
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "tool_call", "id": "call_0_0", "name": "ls", "arguments": None}
                    ],
                }
            ],
            [],
        ),
        (
            [{"role": "tool", "tool_call_id": "c9", "content": "Error: boom", "is_error": True}],
            [
                {
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool_call_response",
                            "id": "c9",
                            "response": "Error: boom",
                            "is_error": True,
                        }
                    ],
                }
            ],
            [],
        ),
        (
            [{"role": "user", "parts": [{"type": "text", "content": "already parts"}]}],
            [{"role": "user", "parts": [{"type": "text", "content": "already parts"}]}],
            [],
        ),
    ],
    ids=[
        "developer message becomes a system instruction",
        "content part lists are joined like the transcript loader joins them",
        "tool calls stored as json text get the loader's default id",
        "an is_error tool message keeps its error mark",
        "messages already in parts format pass through",
    ],
)
def test_semconv_messages_converts_openai_style(messages, expected, system):
    assert semconv_messages(messages) == (expected, system)


def test_tool_definition_accepts_flat_and_anthropic_style():
    assert tool_definition({"name": "ls", "input_schema": {"type": "object"}}) == {
        "type": "function",
        "name": "ls",
        "parameters": {"type": "object"},
    }


def test_empty_tools_list_is_recorded_as_none_offered(spans):
    provider, exporter = spans
    with chat("m", tools=[], tracer_provider=provider):
        pass
    assert attrs(exporter.get_finished_spans()[0])["gen_ai.tool.definitions"] == "[]"
