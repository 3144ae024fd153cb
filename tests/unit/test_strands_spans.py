"""Strands Agents' own spans in its default (legacy GenAI) mode, as strands-agents 1.62
writes them without `OTEL_SEMCONV_STABILITY_OPT_IN`, recorded from an `Agent` with a
`git_push` tool on its `OpenAIModel`: every message is a span event whose `content` is the
message's Bedrock Converse content blocks as JSON (`[{"text": ...}]`, `{"toolUse"}`,
`{"toolResult"}`); a tool span holds its input as a `gen_ai.tool.message` event and its
result as a `gen_ai.choice` event; the agent's answer is its `gen_ai.choice` in plain text.
"""

from __future__ import annotations

import json
from typing import Any

from factledger.processors.kinds import Kind, Outcome
from factledger.processors.normalize.base import AgentInvocation, LlmStep, ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.normalize.messages import read_messages
from factledger.processors.spans import SpanEvent, SpanRecord

from .span_turns import TRACE, only_turn

SCOPE = "strands.telemetry.tracer"
SYSTEM = "You are a release engineer. Use git_push to push branches."
USER = "Push branch main of acme/fab."
ARGUMENTS = {"repo": "acme/fab", "branch": "main"}
CALL = "call_00000002"
COMMIT = "d0ffd31a3c9f775b87ad1568fdef2947c6334a74"
RESULT = json.dumps({"ok": True, "repo": "acme/fab", "branch": "main", "commit": COMMIT})
REPLY = "Pushed main to acme/fab. The new head is commit 582760a5fa435391b2f665595bf2d0f02112bc92."
FAILURE = "push rejected: the remote has commits you do not have"

TOOL_USE = [{"toolUse": {"toolUseId": CALL, "name": "git_push", "input": ARGUMENTS}}]
TOOL_RESULT = [
    {"toolResult": {"toolUseId": CALL, "status": "success", "content": [{"text": RESULT}]}}
]


def _blocks(value: Any) -> str:
    return json.dumps(value)


def _span(
    span_id: str,
    parent: str,
    name: str,
    start: int,
    attributes: dict[str, Any],
    events: list[tuple[str, dict[str, Any]]],
    *,
    error: str = "",
    end: int = 0,
) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=end or start + 1_000,
        status_code=2 if error else 1,
        status_message=error,
        attributes={"gen_ai.system": "strands-agents", **attributes},
        events=tuple(SpanEvent(n, start + i, a) for i, (n, a) in enumerate(events)),
        scope_name=SCOPE,
    )


def _message(role: str, content: Any) -> tuple[str, dict[str, Any]]:
    return f"gen_ai.{role}.message", {"content": _blocks(content)}


def _chat(span_id: str, parent: str, start: int, history: list[Any], output: Any) -> SpanRecord:
    events = [_message("system", [{"text": SYSTEM}]), *history]
    events.append(("gen_ai.choice", {"finish_reason": "end_turn", "message": _blocks(output)}))
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "fake-gpt"}
    return _span(span_id, parent, "chat", start, attributes, events)


def _tool(start: int, arguments: dict[str, str], result: str, *, error: str = "") -> SpanRecord:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "git_push",
        "gen_ai.tool.call.id": CALL,
        "gen_ai.tool.description": "Push a branch of a repository to its remote.",
        "gen_ai.tool.status": "error" if error else "success",
    }
    events = [
        ("gen_ai.tool.message", {"role": "tool", "content": json.dumps(arguments), "id": CALL}),
        ("gen_ai.choice", {"message": _blocks([{"text": result}]), "id": CALL}),
    ]
    return _span(
        "e8704cd62e66b426",
        "a66b3d5f6c172552",
        "execute_tool git_push",
        start,
        attributes,
        events,
        error=error,
    )


def fab_run() -> list[SpanRecord]:
    """One request: a `chat` that calls `git_push`, the tool, a `chat` that answers (each
    under its `execute_event_loop_cycle`) and the `invoke_agent` around them."""
    user = _message("user", [{"text": USER}])
    agent = "6ddffeeb0a8caa29"
    cycle = {"gen_ai.operation.name": "execute_event_loop_cycle", "event_loop.cycle_id": "65a3"}
    history = [user, _message("assistant", TOOL_USE), _message("tool", TOOL_RESULT)]
    return [
        _chat("47f82ae68cf8b35b", "a66b3d5f6c172552", 10_000, [user], TOOL_USE),
        _tool(20_000, ARGUMENTS, RESULT),
        _span("a66b3d5f6c172552", agent, "execute_event_loop_cycle", 9_000, cycle, [user]),
        _chat("f14fde79c2ce2c19", "4ee6cfa740c5e4f3", 30_000, history, [{"text": REPLY}]),
        _span("4ee6cfa740c5e4f3", agent, "execute_event_loop_cycle", 29_000, cycle, history),
        _span(
            agent,
            "",
            "invoke_agent release_engineer",
            1_000,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "release_engineer",
                "gen_ai.request.model": "fake-gpt",
                "gen_ai.agent.tools": '["git_push"]',
            },
            [
                _message("system", [{"text": SYSTEM}]),
                user,
                ("gen_ai.choice", {"message": REPLY + "\n", "finish_reason": "end_turn"}),
            ],
            end=40_000,
        ),
    ]


def test_a_run_is_one_turn_with_the_request_the_call_and_the_answer() -> None:
    turn, verdict = only_turn(fab_run())
    assert turn.user_message == USER
    assert turn.reply == REPLY
    assert turn.agent == "release_engineer"
    assert turn.model == "fake-gpt"
    [call] = turn.tool_calls
    assert (call.name, dict(call.arguments), call.error) == ("git_push", ARGUMENTS, False)
    assert [t.name for t in turn.tools or ()] == ["git_push"]
    assert call.result is not None and COMMIT in call.result
    assert verdict.outcome is Outcome.REJECT
    assert Kind.FABRICATED_IDENTIFIER in {f.kind for f in verdict.findings}


def test_message_events_are_read_as_their_content_blocks() -> None:
    step = normalize(fab_run()[3])
    assert isinstance(step, LlmStep)
    system, user, assistant, tool = step.input_messages
    assert (system.role, system.text) == ("system", SYSTEM)
    assert (user.role, user.text) == ("user", USER)
    [call] = assistant.tool_calls
    assert (call.call_id, call.name, json.loads(call.arguments)) == (CALL, "git_push", ARGUMENTS)
    assert (tool.role, tool.tool_call_id, tool.text, tool.is_error) == ("tool", CALL, RESULT, False)
    assert [m.text for m in step.output_messages] == [REPLY]


def test_the_first_call_outputs_its_tool_use_block() -> None:
    step = normalize(fab_run()[0])
    assert isinstance(step, LlmStep)
    [message] = step.output_messages
    assert [c.name for c in message.tool_calls] == ["git_push"]


def test_a_tool_span_has_its_input_and_result_events() -> None:
    tool = normalize(_tool(0, ARGUMENTS, RESULT))
    assert isinstance(tool, ToolExecution)
    assert (tool.name, tool.call_id, tool.error) == ("git_push", CALL, False)
    assert json.loads(tool.arguments) == ARGUMENTS
    assert tool.result == RESULT


def test_a_raised_exception_is_a_failed_tool_result() -> None:
    # Strands turns the exception into a tool result with status "error" and ends the span
    # with an error status.
    text = f"Error: PushRejected - {FAILURE}"
    tool = normalize(_tool(0, {"repo": "acme/err-raise", "branch": "main"}, text, error=FAILURE))
    assert isinstance(tool, ToolExecution)
    assert (tool.result, tool.error) == (text, True)


def test_a_returned_error_result_fails_by_its_status() -> None:
    # The tool returned `{"status": "error", "content": [...]}`: the status attribute says so
    # even where a span's status were lost.
    span = _tool(0, {"repo": "acme/err-object", "branch": "main"}, FAILURE)
    attributes = {**span.attributes, "gen_ai.tool.status": "error"}
    tool = normalize(SpanRecord(**{**span.__dict__, "attributes": attributes}))
    assert isinstance(tool, ToolExecution)
    assert (tool.result, tool.error) == (FAILURE, True)


def test_an_error_tool_result_block_is_a_failed_result() -> None:
    content = [
        {"toolResult": {"status": "error", "content": [{"text": FAILURE}], "toolUseId": CALL}}
    ]
    [message] = read_messages([{"role": "user", "content": json.dumps(content)}])
    assert (message.role, message.tool_call_id, message.text, message.is_error) == (
        "tool",
        CALL,
        FAILURE,
        True,
    )


def test_a_json_block_is_its_value() -> None:
    content = [
        {
            "toolResult": {
                "status": "success",
                "content": [{"json": {"ok": True}}],
                "toolUseId": CALL,
            }
        }
    ]
    [message] = read_messages([{"role": "user", "content": content}])
    assert json.loads(message.text) == {"ok": True}


def test_the_agent_span_reads_its_request_and_answer_events() -> None:
    agent = normalize(fab_run()[-1])
    assert isinstance(agent, AgentInvocation)
    assert agent.agent_name == "release_engineer"
    assert agent.input_text == USER
    assert agent.output_text.strip() == REPLY
    assert [t.name for t in agent.tools or ()] == ["git_push"]


def test_text_that_merely_looks_like_blocks_stays_text() -> None:
    text = '[{"text": "a", "extra": 1}]'
    [message] = read_messages([{"role": "user", "content": text}])
    assert message.text == text


def test_a_tool_result_attribute_of_content_blocks_is_their_text() -> None:
    # With OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental Strands writes the
    # ToolResult's content blocks as `gen_ai.tool.call.result`.
    span = _tool(0, ARGUMENTS, RESULT)
    attributes = {
        **span.attributes,
        "gen_ai.provider.name": "strands-agents",
        "gen_ai.tool.call.arguments": json.dumps(ARGUMENTS),
        "gen_ai.tool.call.result": json.dumps([{"text": RESULT}]),
    }
    tool = normalize(SpanRecord(**{**span.__dict__, "attributes": attributes, "events": ()}))
    assert isinstance(tool, ToolExecution)
    assert (tool.result, tool.error) == (RESULT, False)
