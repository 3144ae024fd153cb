"""AutoGen AgentChat as its instrumentations really record it.

The attributes are literal from runs of autogen-agentchat 0.7.5: its own spans
(`invoke_agent`, `execute_tool`, scope `autogen-core`) with OpenLLMetry's OpenAI
instrumentation 0.62.4 for the model calls (AutoGen's tracing guide), and
openinference-instrumentation-autogen-agentchat 0.1.22, read through the real normalizer,
a `TurnAssembler` and the default validators.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.processors.normalize.base import LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanRecord

from .span_turns import only_turn, record

USER = "Push branch main of acme/team-clean."
COMMIT = "a523f6f6ebb28186c7ebef5466b89d08b6770c63"
PUSHED = "{'ok': True, 'repo': 'acme/team-clean', 'branch': 'main', 'commit': '" + COMMIT + "'}"
LEAD_SYSTEM = "You lead releases. Ask release_engineer to do every push."
ENGINEER_SYSTEM = "You are a release engineer. Use git_push to push branches."
AUTOGEN = "autogen-core"
PUSH_DESCRIPTION = "Push `branch` of `repo` to its remote and report the new head commit."
ENGINEER_DESCRIPTION = "Pushes branches of repositories with git_push."
OPENAI = "opentelemetry.instrumentation.openai.v1"
GIT_PUSH = {
    "type": "function",
    "name": "git_push",
    "description": PUSH_DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "repo": {"description": "repo", "title": "Repo", "type": "string"},
            "branch": {"description": "branch", "title": "Branch", "type": "string"},
        },
        "required": ["repo", "branch"],
        "additionalProperties": False,
    },
}
ENGINEER_TOOL = {
    "type": "function",
    "name": "release_engineer",
    "description": ENGINEER_DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {"task": {"title": "Task", "type": "string"}},
        "required": ["task"],
        "additionalProperties": False,
    },
}


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"content": content, "type": "text"}]}


def _call(call_id: str, name: str, arguments: dict[str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "tool_call", "name": name, "id": call_id, "arguments": arguments}],
    }


def _response(call_id: str, response: str) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": response}],
    }


def _chat(
    span_id: str,
    parent: str,
    start: int,
    end: int,
    inputs: list[dict[str, Any]],
    output: dict[str, Any],
    tools: list[dict[str, Any]] | None,
) -> SpanRecord:
    """An `openai.chat` span of opentelemetry-instrumentation-openai: a reflection call
    (`reflect_on_tool_use`) is made without tools and has no `gen_ai.tool.definitions`."""
    calls = any(part["type"] == "tool_call" for part in output["parts"])
    finish = "tool_call" if calls else "stop"
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.is_streaming": False,
        "gen_ai.openai.api_base": "http://127.0.0.1:37285/v1/",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.response.model": "fake-gpt",
        "gen_ai.response.id": f"chatcmpl-{span_id[:4]}",
        "gen_ai.response.finish_reasons": (finish,),
        "gen_ai.usage.total_tokens": 59,
        "gen_ai.usage.output_tokens": 17,
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.output.messages": json.dumps([{**output, "finish_reason": finish}]),
    }
    if tools is not None:
        attributes["gen_ai.tool.definitions"] = json.dumps(tools)
    return record(
        span_id, "openai.chat", attributes, parent=parent, start=start, end=end, scope=OPENAI
    )


def _autogen(
    span_id: str, name: str, parent: str, start: int, end: int, **extra: str
) -> SpanRecord:
    operation, _, subject = name.partition(" ")
    attributes = {"gen_ai.operation.name": operation, "gen_ai.system": "autogen", **extra}
    if operation == "invoke_agent":
        attributes["gen_ai.agent.name"] = subject
    else:
        attributes["gen_ai.tool.name"] = subject
    return record(span_id, name, attributes, parent=parent, start=start, end=end, scope=AUTOGEN)


def agent_tool_team() -> list[SpanRecord]:
    """A lead `release_lead` whose tool is the worker as an `AgentTool`; both agents
    reflect on their tool use. The worker's calls run inside the lead's `execute_tool`
    span, after the lead's only call that offered tools."""
    worker_report = f"Pushed main to acme/team-clean: commit {COMMIT}."
    lead, worker = "8f0c2555bfb9ec1c", "80d1782d21e6884e"
    delegate, push = "call_00000001", "call_00000003"
    return [
        _autogen(
            lead,
            "invoke_agent release_lead",
            "",
            0,
            241_500,
            **{
                "gen_ai.agent.description": "An agent that provides assistance with "
                "ability to use tools."
            },
        ),
        _chat(
            "419e666789d3d021",
            lead,
            7_126,
            126_991,
            [_text("system", LEAD_SYSTEM), _text("user", USER)],
            _call(delegate, "release_engineer", {"task": USER}),
            [ENGINEER_TOOL],
        ),
        _autogen(
            "4777bc25479bb510",
            "execute_tool release_engineer",
            lead,
            134_035,
            223_020,
            **{
                "gen_ai.tool.description": ENGINEER_DESCRIPTION,
                "gen_ai.tool.call.id": delegate,
            },
        ),
        _autogen(
            worker,
            "invoke_agent release_engineer",
            "4777bc25479bb510",
            134_164,
            222_959,
            **{"gen_ai.agent.description": ENGINEER_DESCRIPTION},
        ),
        _chat(
            "eae7440de0dd0e03",
            worker,
            140_722,
            164_678,
            [_text("system", ENGINEER_SYSTEM), _text("user", USER)],
            _call(push, "git_push", {"repo": "acme/team-clean", "branch": "main"}),
            [GIT_PUSH],
        ),
        _autogen(
            "631e7482f49caadc",
            "execute_tool git_push",
            worker,
            166_838,
            167_357,
            **{"gen_ai.tool.description": PUSH_DESCRIPTION, "gen_ai.tool.call.id": push},
        ),
        _chat(
            "d87062ba63f96e10",
            worker,
            168_448,
            222_331,
            [
                _text("system", ENGINEER_SYSTEM),
                _text("user", USER),
                _call(push, "git_push", {"repo": "acme/team-clean", "branch": "main"}),
                _response(push, PUSHED),
            ],
            _text("assistant", worker_report),
            None,
        ),
        _chat(
            "98f11976f3dafc22",
            lead,
            223_961,
            239_904,
            [
                _text("system", LEAD_SYSTEM),
                _text("user", USER),
                _call(delegate, "release_engineer", {"task": USER}),
                _response(delegate, worker_report),
            ],
            _text("assistant", f"Pushed main to acme/team-clean: commit {COMMIT[:12]}."),
            None,
        ),
    ]


@pytest.mark.parametrize("ended_first", [False, True], ids=["by-start", "worker-spans-first"])
def test_agent_tool_team_lead_was_offered_the_worker_it_called(ended_first: bool) -> None:
    spans = agent_tool_team()
    if ended_first:  # the order an exporter sends them in: each span when it ends
        spans.sort(key=lambda s: s.end_time_unix_nano)
    turn, verdict = only_turn(spans)
    assert turn.agent == "release_lead"
    assert turn.user_message == USER
    assert {t.name for t in turn.tools or ()} == {"release_engineer", "git_push"}
    pushes = [c for c in turn.tool_calls if c.name == "git_push"]
    assert len(pushes) == 1 and not pushes[0].error and COMMIT in str(pushes[0].result)
    assert verdict.outcome.value == "pass", verdict.findings


OI_SCOPE = "openinference.instrumentation.autogen_agentchat"
FAILURE = "push rejected: the remote has commits you do not have"
ERR_USER = "Push branch main of acme/err-raise."
ERR_ARGUMENTS = '{"repo": "acme/err-raise", "branch": "main"}'
SYSTEM_MESSAGE = {
    "llm.input_messages.0.message.role": "developer",
    "llm.input_messages.0.message.content": ENGINEER_SYSTEM,
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.content": ERR_USER,
}


def openinference_failed_push(*, with_autogen_spans: bool) -> list[SpanRecord]:
    """openinference-instrumentation-autogen-agentchat 0.1.22 on an `AssistantAgent` whose
    tool raised. Its TOOL span has the arguments and the error text but no call id, and
    reports OK (it sets OK before it learns of the failure, and OK is final). The next
    model call holds the result as `llm.input_messages.3.function.0`, `is_error` true.
    With a global tracer provider AutoGen's own spans come too: its `execute_tool` span,
    the TOOL span's child, has the call id and the ERROR status."""
    root, agent, tool = "d53b9b17d16afaa6", "71858635e925e636", "c9745750f6259723"
    spans = [
        record(
            agent,
            "release_engineer.on_messages_stream",
            {
                "input.value": '{"messages": ["id=\'d2054f81-d5ad-41eb-9fdc-edbcd78dec40\' '
                "source='user' models_usage=None metadata={} created_at=datetime.datetime("
                "2026, 11, 30, 8, 11, 22, 914846, tzinfo=datetime.timezone.utc) content='"
                f'{ERR_USER}\' type=\'TextMessage\'"], "cancellation_token": "<autogen_core.'
                '_cancellation_token.CancellationToken object at 0x7f98a0d13f10>"}',
                "graph.node.id": "release_engineer",
                "graph.node.parent_id": "start",
                "openinference.span.kind": "AGENT",
            },
            parent=root if with_autogen_spans else "",
            start=667,
            end=101_537,
            status=1,
            scope=OI_SCOPE,
        ),
        record(
            "2361f45c9311303c",
            "OpenAIChatCompletionClient.create",
            {
                "llm.model_name": "fake-gpt",
                **SYSTEM_MESSAGE,
                "output.value": json.dumps(
                    {
                        "finish_reason": "function_calls",
                        "content": [
                            {"id": "call_00000004", "arguments": ERR_ARGUMENTS, "name": "git_push"}
                        ],
                        "usage": {"prompt_tokens": 42, "completion_tokens": 17},
                        "cached": False,
                        "logprobs": None,
                        "thought": None,
                    }
                ),
                "output.mime_type": "application/json",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000004",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
                    ERR_ARGUMENTS
                ),
                "openinference.span.kind": "LLM",
            },
            parent=agent,
            start=3_853,
            end=32_797,
            status=1,
            scope=OI_SCOPE,
        ),
        record(
            tool,
            "release_engineer.git_push",
            {
                "tool.name": "git_push",
                "tool.description": PUSH_DESCRIPTION,
                "tool.parameters": ERR_ARGUMENTS,
                "input.value": ERR_ARGUMENTS,
                "input.mime_type": "application/json",
                "output.value": FAILURE,
                "output.mime_type": "text/plain",
                "openinference.span.kind": "TOOL",
            },
            parent=agent,
            start=33_411,
            end=37_485,
            status=1,
            scope=OI_SCOPE,
        ),
        record(
            "95236fd633f67bbb",
            "OpenAIChatCompletionClient.create",
            {
                "llm.model_name": "fake-gpt",
                **SYSTEM_MESSAGE,
                "llm.input_messages.2.message.role": "assistant",
                "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_00000004",
                "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": (
                    ERR_ARGUMENTS
                ),
                "llm.input_messages.3.message.role": "function",
                "llm.input_messages.3.function.0": json.dumps(
                    {
                        "name": "git_push",
                        "content": FAILURE,
                        "call_id": "call_00000004",
                        "is_error": True,
                    }
                ),
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": (
                    "I pushed main to acme/err-raise successfully."
                ),
                "openinference.span.kind": "LLM",
            },
            parent=agent,
            start=38_141,
            end=100_652,
            status=1,
            scope=OI_SCOPE,
        ),
    ]
    if with_autogen_spans:
        spans += [
            _autogen(root, "invoke_agent release_engineer", "", 0, 100_849),
            record(
                "2931f5f998646eba",
                "execute_tool git_push",
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.system": "autogen",
                    "gen_ai.tool.name": "git_push",
                    "gen_ai.tool.description": PUSH_DESCRIPTION,
                    "gen_ai.tool.call.id": "call_00000004",
                    "error.type": "PushRejected",
                },
                parent=tool,
                start=34_386,
                end=37_271,
                status=2,
                scope=AUTOGEN,
            ),
        ]
    return spans


def test_openinference_function_result_is_the_tool_message_with_its_error() -> None:
    spans = openinference_failed_push(with_autogen_spans=False)
    (step,) = [
        s
        for s in map(normalize, spans)
        if isinstance(s, LlmStep) and s.tools is None and len(s.input_messages) > 2
    ]
    result = step.input_messages[-1]
    assert (result.role, result.text, result.tool_call_id, result.is_error) == (
        "tool",
        FAILURE,
        "call_00000004",
        True,
    )


@pytest.mark.parametrize("with_autogen_spans", [False, True], ids=["openinference", "both"])
def test_openinference_failed_push_is_one_failed_call(with_autogen_spans: bool) -> None:
    turn, verdict = only_turn(openinference_failed_push(with_autogen_spans=with_autogen_spans))
    assert turn.agent == "release_engineer"
    assert turn.user_message == ERR_USER
    (push,) = [c for c in turn.tool_calls if c.name == "git_push"]
    assert push.error and push.result == FAILURE and push.call_id == "call_00000004"
    assert push.arguments == {"repo": "acme/err-raise", "branch": "main"}
    assert verdict.outcome.value == "reject"
    assert "error_reported_as_success" in {f.kind.value for f in verdict.findings}
