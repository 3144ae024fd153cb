"""Mastra agents as `@mastra/otel-exporter` really records them.

The attributes are literal from runs of `@mastra/core` 1.71.0 (`Agent.generate` with a
`createTool` tool, on Chat Completions) exported by `@mastra/otel-exporter` 1.4.0 (token
counts, the raw response headers and bodies, run ids and timestamps left out), read
through the real normalizer, a `TurnAssembler` and the default validators.

What they pin: the `chat` spans (Mastra's MODEL_INFERENCE) record the model's output
alone, never its input, and the output of a call that requested a tool holds an empty
text and no call; the request and its history are only in the agent's `invoke_agent` span
(`mastra.agent_run.input`, in the AI SDK's message shape, with `mastra.agent_run.output`
`{"text": ...}`); that span names the agent's tools as bare strings
(`gen_ai.tool.definitions` `["git_push"]`); a tool that raised records no result, only its
error status and exception event. The `agent_step` and `model_generation` spans between
them (and the `model_chunk` spans of the stream) are no LLM calls of their own.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from factledger.processors.normalize.base import AgentInvocation, ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.normalize.values import tool_definitions
from factledger.processors.spans import SpanEvent, SpanRecord

from .span_turns import only_turn

SCOPE = "@mastra/otel-exporter"
SYSTEM = "You are a release engineer. Use git_push to push branches."
FAILURE = "push rejected: the remote has commits you do not have; nothing was pushed"
T0 = 1_796_125_628_540_000_000


def span(
    trace: str,
    span_id: str,
    name: str,
    parent: str,
    start_us: int,
    end_us: int,
    attributes: dict[str, Any],
    *,
    status: int = 1,
    message: str = "",
    events: tuple[SpanEvent, ...] = (),
) -> SpanRecord:
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=T0 + start_us * 1_000,
        end_time_unix_nano=T0 + end_us * 1_000,
        status_code=status,
        status_message=message,
        attributes=attributes,
        events=events,
        resource_attributes={"service.name": "mastra.otel"},
        scope_name=SCOPE,
    )


def chat(text: str, finish: str) -> dict[str, Any]:
    """A `chat` span's attributes: the output, never the input."""
    return {
        "gen_ai.operation.name": "chat",
        "mastra.span.type": "model_inference",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": text}]}],
            separators=(",", ":"),
        ),
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.provider.name": "openai",
        "gen_ai.agent.id": "release_engineer",
        "gen_ai.agent.name": "release_engineer",
        "gen_ai.response.finish_reasons": json.dumps([finish]),
        "gen_ai.response.model": "fake-gpt",
    }


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def run(
    trace: str,
    request: list[dict[str, Any]],
    call_id: str,
    arguments: dict[str, str],
    result: dict[str, Any] | None,
    reply: str,
) -> list[SpanRecord]:
    """One `generate` of the engineer: a call that requests `git_push`, the push (which
    raised when `result` is None), and a call that answers; in the order they end."""
    pushed = {
        "gen_ai.operation.name": "execute_tool",
        "mastra.span.type": "tool_call",
        "gen_ai.tool.call.arguments": compact(arguments),
        "gen_ai.tool.name": "git_push",
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.description": "Push a branch of a repository to its remote.",
        "gen_ai.tool.type": "tool",
    }
    raised: dict[str, Any] = {}
    if result is not None:
        pushed["gen_ai.tool.call.result"] = compact(result)
    else:
        pushed |= {"error.type": "unknown", "error.message": FAILURE}
        raised = {
            "status": 2,
            "message": FAILURE,
            "events": (
                SpanEvent(
                    "exception",
                    T0,
                    {"exception.message": FAILURE, "exception.type": "Error"},
                ),
            ),
        }
    calls = [{"toolCallId": call_id, "toolName": "git_push", "args": arguments}]
    return [
        span(
            trace,
            "c756cfee8e0105d7",
            "model_chunk release_engineer",
            "f293cd2cde700138",
            205_000,
            207_000,
            {
                "gen_ai.operation.name": "model_chunk",
                "mastra.span.type": "model_chunk",
                "mastra.model_chunk.output": compact(
                    {"toolName": "git_push", "toolCallId": call_id, "toolInput": arguments}
                ),
            },
        ),
        span(
            trace,
            "30d006bddba459cd",
            "execute_tool git_push",
            "6c16356c7da75410",
            218_000,
            222_000,
            pushed,
            **raised,
        ),
        span(
            trace,
            "f293cd2cde700138",
            "chat fake-gpt",
            "6c16356c7da75410",
            132_000,
            239_000,
            chat("", "tool-calls"),
        ),
        span(
            trace,
            "6c16356c7da75410",
            "agent_step release_engineer",
            "97837bf386227dcc",
            117_000,
            239_000,
            {
                "gen_ai.operation.name": "agent_step",
                "mastra.span.type": "model_step",
                "mastra.model_step.input": compact(
                    [{"role": "system", "content": SYSTEM}, *_placeholders(request)]
                ),
                "mastra.model_step.output": compact({"text": "", "toolCalls": calls}),
                "mastra.model_step.step_index": "0",
                "mastra.model_step.is_continued": True,
            },
        ),
        span(
            trace,
            "6fe8473fddc868ec",
            "chat fake-gpt",
            "18fbc095c86111b8",
            243_000,
            262_000,
            chat(reply, "stop"),
        ),
        span(
            trace,
            "18fbc095c86111b8",
            "agent_step release_engineer",
            "97837bf386227dcc",
            242_000,
            262_000,
            {
                "gen_ai.operation.name": "agent_step",
                "mastra.span.type": "model_step",
                "mastra.model_step.input": compact(
                    [
                        {"role": "system", "content": SYSTEM},
                        *_placeholders(request),
                        {"role": "assistant", "content": "[tool: git_push]"},
                        {"role": "tool", "content": "[tool-result: git_push]"},
                    ]
                ),
                "mastra.model_step.output": compact({"text": reply, "toolCalls": []}),
                "mastra.model_step.step_index": "1",
                "mastra.model_step.is_continued": False,
            },
        ),
        span(
            trace,
            "97837bf386227dcc",
            "model_generation fake-gpt",
            "2ceaf1dbb00a81cf",
            62_000,
            264_000,
            {
                "gen_ai.operation.name": "model_generation",
                "mastra.span.type": "model_generation",
                "mastra.model_generation.input": compact(
                    {"messages": [{"role": "system", "content": SYSTEM}, *request]}
                ),
                "mastra.model_generation.output": compact(
                    {"files": [], "text": reply, "warnings": [], "toolCalls": calls}
                ),
            },
        ),
        span(
            trace,
            "2ceaf1dbb00a81cf",
            "invoke_agent release_engineer",
            "",
            0,
            412_000,
            {
                "gen_ai.operation.name": "invoke_agent",
                "mastra.span.type": "agent_run",
                "mastra.agent_run.input": compact(request),
                "mastra.agent_run.output": compact({"text": reply, "files": []}),
                "gen_ai.agent.id": "release_engineer",
                "gen_ai.agent.name": "release_engineer",
                "gen_ai.tool.definitions": '["git_push"]',
                "gen_ai.system_instructions": SYSTEM,
            },
        ),
    ]


def _placeholders(request: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as an `agent_step` span writes it: tool content as placeholders."""
    out = []
    for message in request:
        content = message["content"]
        if isinstance(content, list) and any(p["type"] == "tool-call" for p in content):
            content = "[tool: git_push]"
        elif isinstance(content, list) and any(p["type"] == "tool-result" for p in content):
            content = "[tool-result: git_push]"
        elif isinstance(content, list):
            content = "".join(p["text"] for p in content if p["type"] == "text")
        out.append({"role": message["role"], "content": content})
    return out


def sha(repo: str, branch: str) -> str:
    return hashlib.sha1(f"{repo}@{branch}".encode()).hexdigest()


CLEAN_ASK = "Push branch main of acme/clean."
CLEAN_REPLY = f"Pushed main to acme/clean: commit {sha('acme/clean', 'main')[:12]}."


def clean_run() -> list[SpanRecord]:
    commit = sha("acme/clean", "main")
    return run(
        "b1d5eaa41cf1098522f65c72e52a7a68",
        [{"role": "user", "content": CLEAN_ASK}],
        "call_00000001",
        {"repo": "acme/clean", "branch": "main"},
        {"ok": True, "repo": "acme/clean", "branch": "main", "commit": commit},
        CLEAN_REPLY,
    )


def test_bare_tool_names_are_tools_offered_without_a_schema() -> None:
    tools = tool_definitions('["git_push"]')
    assert tools is not None and [(t.name, dict(t.parameters)) for t in tools] == [("git_push", {})]
    # A sentence is no tool's name.
    assert tool_definitions('["push the branch please"]') == ()


def test_the_agent_span_holds_the_request_and_the_answer() -> None:
    agent = normalize(clean_run()[-1])
    assert isinstance(agent, AgentInvocation)
    assert agent.agent_name == "release_engineer"
    assert (agent.input_text, agent.output_text) == (CLEAN_ASK, CLEAN_REPLY)
    assert [t.name for t in agent.tools or ()] == ["git_push"]
    assert [(m.role, m.text) for m in agent.messages] == [
        ("user", CLEAN_ASK),
        ("assistant", CLEAN_REPLY),
    ]


def test_a_run_whose_model_calls_record_no_input_is_read_from_its_agent_span() -> None:
    turn, verdict = only_turn(clean_run())
    assert turn.agent == "release_engineer"
    assert turn.model == "fake-gpt"
    assert turn.user_message == CLEAN_ASK
    assert turn.reply == CLEAN_REPLY
    assert [t.name for t in turn.tools or ()] == ["git_push"]
    [push] = turn.tool_calls
    assert push.name == "git_push"
    assert dict(push.arguments) == {"repo": "acme/clean", "branch": "main"}
    assert push.error is False and sha("acme/clean", "main") in str(push.result)
    assert verdict.outcome == "pass", verdict.findings


def test_a_tool_that_raised_has_its_error_as_the_result() -> None:
    spans = run(
        "6c6f9e9ab86a17ae594c9f6bdd814924",
        [{"role": "user", "content": "Push branch main of acme/err-raise."}],
        "call_00000004",
        {"repo": "acme/err-raise", "branch": "main"},
        None,
        "I pushed main to acme/err-raise successfully.",
    )
    execution = normalize(spans[1])
    assert isinstance(execution, ToolExecution)
    assert (execution.error, execution.result) == (True, FAILURE)
    turn, verdict = only_turn(spans)
    [push] = turn.tool_calls
    assert push.error is True and push.result == FAILURE
    assert verdict.outcome == "reject"
    assert "error_reported_as_success" in verdict.kinds


def test_the_second_request_of_a_conversation_keeps_the_earlier_push_as_history() -> None:
    earlier = sha("acme/session", "main")
    later = sha("acme/session", "dev")
    ask = "Now push branch dev of acme/session as well."
    reply = (
        f"Pushed dev to acme/session: commit {later[:12]}. "
        f"The earlier push is still commit {earlier}."
    )
    first_call = {"repo": "acme/session", "branch": "main"}
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Push branch main of acme/session."},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "call_00000007",
                    "toolName": "git_push",
                    "input": first_call,
                }
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "call_00000007",
                    "toolName": "git_push",
                    "output": {
                        "type": "json",
                        "value": {"ok": True, **first_call, "commit": earlier},
                    },
                    "input": first_call,
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Pushed main to acme/session: commit {earlier[:12]}."}
            ],
        },
        {"role": "user", "content": ask},
    ]
    spans = run(
        "3ad667a3e947c32ce17d0e7654070c00",
        history,
        "call_00000010",
        {"repo": "acme/session", "branch": "dev"},
        {"ok": True, "repo": "acme/session", "branch": "dev", "commit": later},
        reply,
    )
    turn, verdict = only_turn(spans)
    assert turn.user_message == ask
    assert turn.reply == reply
    assert [c.name for c in turn.history_tool_calls] == ["git_push"]
    [push] = turn.tool_calls
    assert dict(push.arguments) == {"repo": "acme/session", "branch": "dev"}
    assert verdict.outcome == "pass", verdict.findings
