"""Replay's span emission for one record, recorded with the SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, Tracer

from factledger.evaluation import read_cases
from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.errors import TranscriptError
from factledger.processors.model import ToolCall, Turn
from factledger.replay import traces_url, transcript_spans

CORPUS = Path(__file__).parents[1] / "corpus"

TOOLS = [
    {"type": "function", "function": {"name": "gh_put_file", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "gh_list_commits", "parameters": {}}},
]


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


TRANSCRIPT: dict[str, Any] = {
    "model": "gpt-4o",
    "tools": TOOLS,
    "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "List the commits."},
        {"role": "assistant", "content": None, "tool_calls": [call("h1", "gh_list_commits", "{}")]},
        {"role": "tool", "tool_call_id": "h1", "content": '[{"sha": "1a2b3c4d5e6f"}]'},
        {"role": "assistant", "content": "Latest is 1a2b3c4d5e6f."},
        {"role": "user", "content": "Push README.md."},
        {
            "role": "assistant",
            "content": "Pushing.",
            "tool_calls": [call("c1", "gh_put_file", '{"path": "README.md"}')],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "Error: branch main is protected",
            "is_error": True,
        },
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "gh_put_file", "{}")]},
        {"role": "tool", "tool_call_id": "c2", "content": '{"commit": "9f8e7d6c5b4a"}'},
        {"role": "assistant", "content": "Pushed as 9f8e7d6c5b4a after a protected-branch error."},
    ],
}


@pytest.fixture(scope="module")
def recorder() -> Iterator[tuple[Tracer, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter
    provider.shutdown()


def emit(recorder, transcript, **kwargs: Any) -> tuple[int, list[ReadableSpan]]:
    tracer, exporter = recorder
    exporter.clear()
    count = transcript_spans(transcript, tracer, **kwargs)
    return count, sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_a_turn_with_history_becomes_one_trace_of_chat_and_tool_spans(recorder):
    count, spans = emit(recorder, TRANSCRIPT, conversation_id="case-7")
    assert count == len(spans) == 6
    assert [s.name for s in spans] == [
        "invoke_agent factledger-replay",
        "chat gpt-4o",
        "execute_tool gh_put_file",
        "chat gpt-4o",
        "execute_tool gh_put_file",
        "chat gpt-4o",
    ]
    root = spans[0]
    assert root.parent is None
    assert attrs(root)["gen_ai.conversation.id"] == "case-7"
    assert attrs(root)["gen_ai.request.model"] == "gpt-4o"
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    assert all(s.parent and s.parent.span_id == root.context.span_id for s in spans[1:])


def test_each_chat_span_gets_every_message_before_its_output(recorder):
    _, spans = emit(recorder, TRANSCRIPT)
    chats = [attrs(s) for s in spans if s.name.startswith("chat")]
    # History (before the last user message) is input, never a chat span of its own.
    assert [len(json.loads(c["gen_ai.input.messages"])) for c in chats] == [5, 7, 9]
    assert all(
        json.loads(c["gen_ai.system_instructions"])
        == [{"type": "text", "content": "You are a coding agent."}]
        for c in chats
    )
    assert json.loads(chats[1]["gen_ai.input.messages"])[-2:] == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Pushing."},
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "gh_put_file",
                    "arguments": {"path": "README.md"},
                },
            ],
        },
        {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": "c1",
                    "response": "Error: branch main is protected",
                    "is_error": True,
                }
            ],
        },
    ]
    assert json.loads(chats[0]["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Pushing."},
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "gh_put_file",
                    "arguments": {"path": "README.md"},
                },
            ],
            "finish_reason": "tool_call",
        }
    ]
    assert json.loads(chats[2]["gen_ai.output.messages"])[0]["parts"] == [
        {"type": "text", "content": "Pushed as 9f8e7d6c5b4a after a protected-branch error."}
    ]
    assert all(json.loads(c["gen_ai.tool.definitions"])[0]["name"] == "gh_put_file" for c in chats)


@pytest.mark.parametrize(
    ("index", "call_id", "arguments", "result", "status"),
    [
        (2, "c1", {"path": "README.md"}, "Error: branch main is protected", StatusCode.ERROR),
        (4, "c2", {}, '{"commit": "9f8e7d6c5b4a"}', StatusCode.UNSET),
    ],
    ids=["an is_error result marks its span error", "a good result leaves the status unset"],
)
def test_tool_results_become_execute_tool_spans(
    recorder, index, call_id, arguments, result, status
):
    _, spans = emit(recorder, TRANSCRIPT)
    span = spans[index]
    a = attrs(span)
    assert a["gen_ai.tool.call.id"] == call_id
    assert a["gen_ai.tool.name"] == "gh_put_file"
    assert json.loads(a["gen_ai.tool.call.arguments"]) == arguments
    assert a["gen_ai.tool.call.result"] == result
    assert span.status.status_code is status


@pytest.mark.parametrize(
    ("transcript", "names"),
    [
        (
            {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                ]
            },
            ["invoke_agent factledger-replay", "chat unknown"],
        ),
        (
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": None, "tool_calls": [call("x", "ls", "{}")]},
                    {"role": "tool", "tool_call_id": "orphan", "content": "not ours"},
                    {"role": "assistant", "content": "ok"},
                ],
            },
            ["invoke_agent factledger-replay", "chat m", "chat m"],
        ),
        (
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": "done"},
                    {"role": "user", "content": "trailing question"},
                ],
            },
            ["invoke_agent factledger-replay", "chat m"],
        ),
    ],
    ids=[
        "no model and no tools still replays",
        "a tool result answering no call of the turn gets no tool span",
        "messages after the reply are not replayed",
    ],
)
def test_span_shapes(recorder, transcript, names):
    _, spans = emit(recorder, transcript)
    assert [s.name for s in spans] == names


@pytest.mark.parametrize(
    "transcript",
    [
        {"messages": [{"role": "user", "content": "only a question"}]},
        {"messages": []},
        {"messages": [{"role": "robot", "content": "?"}]},
        {"messages": [{"role": "assistant", "tool_calls": "[{broken"}]},
    ],
    ids=["no assistant message", "no messages", "unknown role", "unreadable tool calls"],
)
def test_malformed_transcripts_raise_before_emitting(recorder, transcript):
    tracer, exporter = recorder
    exporter.clear()
    with pytest.raises(TranscriptError):
        transcript_spans(transcript, tracer)
    assert exporter.get_finished_spans() == ()


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
        ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
        ("https://collector.example/otlp", "https://collector.example/otlp/v1/traces"),
    ],
    ids=["base url", "trailing slash stripped", "path prefix kept"],
)
def test_traces_url_follows_otlp_endpoint_semantics(endpoint, url):
    assert traces_url(endpoint) == url


# ---- round trip: the spans rebuild exactly the transcript's turn ----------------------


def openai_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Parts format back to OpenAI style (a tool message per response part)."""
    role = message["role"]
    texts = [p["content"] for p in message["parts"] if p["type"] == "text"]
    calls = [
        call(
            p["id"],
            p["name"],
            p["arguments"]
            if isinstance(p["arguments"], str)
            else json.dumps(p["arguments"], ensure_ascii=False),
        )
        for p in message["parts"]
        if p["type"] == "tool_call"
    ]
    if role == "tool":
        return [
            {
                "role": "tool",
                "tool_call_id": p["id"],
                "content": p["response"],
                "is_error": p.get("is_error", False),
            }
            for p in message["parts"]
        ]
    out: dict[str, Any] = {"role": role, "content": "\n".join(texts)}
    if calls:
        out["tool_calls"] = calls
    if message.get("name"):
        out["name"] = message["name"]
    return [out]


def rebuilt_transcript(spans: list[ReadableSpan]) -> dict[str, Any]:
    last = attrs([s for s in spans if s.name.startswith("chat")][-1])
    system = json.loads(last.get("gen_ai.system_instructions", "[]"))
    messages: list[dict[str, Any]] = [{"role": "system", "content": p["content"]} for p in system]
    for m in json.loads(last["gen_ai.input.messages"]) + json.loads(last["gen_ai.output.messages"]):
        messages.extend(openai_message(m))
    tools = last.get("gen_ai.tool.definitions")
    return {
        "model": last["gen_ai.request.model"],
        "tools": None if tools is None else json.loads(tools),
        "messages": messages,
    }


def corpus_cases() -> list[Any]:
    return [case for path in sorted(CORPUS.glob("*.jsonl")) for case in read_cases(path)]


def test_every_corpus_case_rebuilds_to_the_same_turn(recorder):
    cases = corpus_cases()
    assert len(cases) > 200
    for case in cases:
        _, spans = emit(recorder, case.transcript)
        original = turn_from_transcript(case.transcript, turn_id=case.id)
        rebuilt = turn_from_transcript(rebuilt_transcript(spans), turn_id=case.id)
        if original.model == "":
            rebuilt = _with_model(rebuilt, "")
        assert canonical(rebuilt) == canonical(original), case.id
        tool_spans = [s for s in spans if s.name.startswith("execute_tool")]
        errors = {
            attrs(s)["gen_ai.tool.call.id"]
            for s in tool_spans
            if s.status.status_code is StatusCode.ERROR
        }
        assert errors == {
            c.call_id for c in original.tool_calls if c.error and c.result is not None
        }, case.id


def _with_model(turn: Turn, model: str) -> Turn:
    return replace(turn, model=model)


def canonical(turn: Turn) -> Turn:
    """The turn with argument texts in one JSON spelling: parts carry arguments as JSON
    values, so spacing and escapes of the original text are not preserved."""

    def spelled(call: ToolCall) -> ToolCall:
        try:
            text = json.dumps(json.loads(call.arguments_text), ensure_ascii=False)
        except ValueError:
            text = call.arguments_text
        return replace(call, arguments_text=text)

    return replace(
        turn,
        tool_calls=tuple(map(spelled, turn.tool_calls)),
        history_tool_calls=tuple(map(spelled, turn.history_tool_calls)),
    )
