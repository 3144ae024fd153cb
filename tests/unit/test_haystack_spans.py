"""Haystack Agents as `openinference-instrumentation-haystack` really records them.

The message and tool reprs are literal from runs of haystack-ai 3.4.1 (an `Agent` on
`OpenAIChatGenerator` with a `git_push` tool, and a lead `Agent` whose tool is that agent
as an `AgentTool`) with the instrumentation 0.1.46, as are the span names, ids, times and
flattened attributes; `_generator` and `_agent` only lay them out as the instrumentation
does (`input.value` / `output.value` are its JSON of the bound call and the result).

What they pin: the tools run in no component, so no span records a call; the flattened
`llm.input_messages` keep a tool message's role alone and an assistant message's tool
calls not at all, and `llm.output_messages` name no call id. Only the `ChatMessage`
reprs inside `input.value` / `output.value` hold the calls, their ids, results and
errors, and only the `Tool` reprs the offered tools. An `Agent` has no name: its span is
`Agent.run`, for its class. Where no generator span was recorded, the Agent's result (in
its span, and in its Pipeline's under the component's name) holds the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from factledger.processors.normalize.base import AgentInvocation, LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.normalize.haystack_messages import (
    haystack_messages,
    read_message_repr,
)
from factledger.processors.spans import SpanRecord

from .span_turns import only_turn

SCOPE = "openinference.instrumentation.haystack"
REJECTED = "push rejected: the remote has commits you do not have"
TEAM_COMMIT = "a523f6f6ebb28186c7ebef5466b89d08b6770c63"

ENGINEER_SYSTEM = (
    "ChatMessage(_role=<ChatRole.SYSTEM: 'system'>, "
    "_content=[TextContent(text='You are a release engineer. Use git_push to push bra"
    "nches.')], _name=None, _meta={})"
)
ERR_USER = (
    "ChatMessage(_role=<ChatRole.USER: 'user'>, "
    "_content=[TextContent(text='Push branch main of acme/err-raise.')], _name=None, "
    "_meta={})"
)
GIT_TOOL = (
    "Tool(name='git_push', "
    "description='Push `branch` of the repository `repo` (owner/name) to its remote.'"
    ", parameters={'properties': {'repo': {'type': 'string', "
    "'description': 'The repository, as owner/name'}, 'branch': {'type': 'string', "
    "'description': 'The branch to push'}}, 'required': ['repo', 'branch'], "
    "'type': 'object'}, function=<function git_push at 0x7fba939cbd80>, "
    "outputs_to_string=None, inputs_from_state=None, outputs_to_state=None, "
    "async_function=None)"
)
ERR_CALL = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[ToolCall(tool_name='git_push', arguments={'repo': 'acme/err-raise', "
    "'branch': 'main'}, id='call_00000001', extra=None)], _name=None, "
    "_meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'tool_calls', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
ERR_RESULT = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, "
    '_content=[ToolCallResult(result="Failed to invoke Tool `git_push` with parameter'
    "s {'repo': 'acme/err-raise', "
    "'branch': 'main'}. Error: push rejected: the remote has commits you do not have\""
    ", origin=ToolCall(tool_name='git_push', arguments={'repo': 'acme/err-raise', "
    "'branch': 'main'}, id='call_00000001', extra=None), error=True)], _name=None, "
    "_meta={})"
)
ERR_REPLY = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[TextContent(text='I pushed main to acme/err-raise successfully.')], "
    "_name=None, _meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'stop', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
SESSION_USER = (
    "ChatMessage(_role=<ChatRole.USER: 'user'>, "
    "_content=[TextContent(text='Push branch main of acme/session.')], _name=None, "
    "_meta={})"
)
SESSION_CALL = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[ToolCall(tool_name='git_push', arguments={'repo': 'acme/session', "
    "'branch': 'main'}, id='call_00000004', extra=None)], _name=None, "
    "_meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'tool_calls', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
SESSION_RESULT = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, "
    '_content=[ToolCallResult(result=\'{"ok": true, "repo": "acme/session", '
    '"branch": "main", "commit": "f3d682ef3c61502d215522bf2be40a838c5f1b70"}\', '
    "origin=ToolCall(tool_name='git_push', arguments={'repo': 'acme/session', "
    "'branch': 'main'}, id='call_00000004', extra=None), error=False)], _name=None, "
    "_meta={})"
)
SESSION_ANSWER = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[TextContent(text='Pushed main to acme/session: commit f3d682ef3c61.')]"
    ", _name=None, _meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'stop', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
SESSION_USER_2 = (
    "ChatMessage(_role=<ChatRole.USER: 'user'>, "
    "_content=[TextContent(text='Now push branch dev of acme/session as well.')], "
    "_name=None, _meta={})"
)
SESSION_CALL_2 = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[ToolCall(tool_name='git_push', arguments={'repo': 'acme/session', "
    "'branch': 'dev'}, id='call_00000007', extra=None)], _name=None, "
    "_meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'tool_calls', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
SESSION_RESULT_2 = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, "
    '_content=[ToolCallResult(result=\'{"ok": true, "repo": "acme/session", '
    '"branch": "dev", "commit": "391b99c18b48f3829bac4649e393b94fc56d9533"}\', '
    "origin=ToolCall(tool_name='git_push', arguments={'repo': 'acme/session', "
    "'branch': 'dev'}, id='call_00000007', extra=None), error=False)], _name=None, "
    "_meta={})"
)
SESSION_REPLY = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[TextContent(text='Pushed dev to acme/session: commit 391b99c18b48. The"
    " earlier push is still commit f3d682ef3c61502d215522bf2be40a838c5f1b70.')], "
    "_name=None, _meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'stop', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
LEAD_SYSTEM = (
    "ChatMessage(_role=<ChatRole.SYSTEM: 'system'>, "
    "_content=[TextContent(text='You lead releases. Hand push requests to release_eng"
    "ineer.')], _name=None, _meta={})"
)
TEAM_USER = (
    "ChatMessage(_role=<ChatRole.USER: 'user'>, "
    "_content=[TextContent(text='Push branch main of acme/team-clean.')], "
    "_name=None, _meta={})"
)
DELEGATE_TOOL = (
    "AgentTool(name='release_engineer', "
    "description='A release engineer who pushes branches of repositories.', "
    "parameters={'type': 'object', 'properties': {'messages': {'type': 'array', "
    "'description': 'Exactly one user message.', 'minItems': 1, 'maxItems': 1, "
    "'items': {'type': 'object', 'properties': {'role': {'type': 'string', "
    "'enum': ['user']}, 'content': {'type': 'string', "
    "'description': 'The task to delegate to this tool.'}}, 'required': ['role', "
    "'content']}}}, 'required': ['messages']}, "
    "function=<function ComponentTool.__init__.<locals>.component_invoker at 0x7fba89"
    "ab59e0>, "
    "outputs_to_string={'handler': <function agent_result_to_string at 0x7fba891b9940"
    ">}, inputs_from_state=None, outputs_to_state=None, "
    "async_function=<function ComponentTool.__init__.<locals>.async_component_invoker"
    " at 0x7fba88296020>)"
)
DELEGATION = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[ToolCall(tool_name='release_engineer', "
    "arguments={'messages': [{'role': 'user', "
    "'content': 'Push branch main of acme/team-clean.'}]}, id='call_00000010', "
    "extra=None)], _name=None, _meta={'model': 'fake-gpt', 'index': 0, "
    "'finish_reason': 'tool_calls', 'usage': {'completion_tokens': 17, "
    "'prompt_tokens': 42, 'total_tokens': 59, 'completion_tokens_details': None, "
    "'prompt_tokens_details': None}})"
)
TEAM_CALL = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[ToolCall(tool_name='git_push', arguments={'repo': 'acme/team-clean', "
    "'branch': 'main'}, id='call_00000012', extra=None)], _name=None, "
    "_meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'tool_calls', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
TEAM_RESULT = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, "
    '_content=[ToolCallResult(result=\'{"ok": true, "repo": "acme/team-clean", '
    '"branch": "main", "commit": "a523f6f6ebb28186c7ebef5466b89d08b6770c63"}\', '
    "origin=ToolCall(tool_name='git_push', arguments={'repo': 'acme/team-clean', "
    "'branch': 'main'}, id='call_00000012', extra=None), error=False)], _name=None, "
    "_meta={})"
)
WORKER_REPORT = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[TextContent(text='Pushed main to acme/team-clean: commit a523f6f6ebb28"
    "186c7ebef5466b89d08b6770c63.')], _name=None, _meta={'model': 'fake-gpt', "
    "'index': 0, 'finish_reason': 'stop', 'usage': {'completion_tokens': 17, "
    "'prompt_tokens': 42, 'total_tokens': 59, 'completion_tokens_details': None, "
    "'prompt_tokens_details': None}})"
)
DELEGATION_RESULT = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, "
    "_content=[ToolCallResult(result='Pushed main to acme/team-clean: commit a523f6f6"
    "ebb28186c7ebef5466b89d08b6770c63.', "
    "origin=ToolCall(tool_name='release_engineer', "
    "arguments={'messages': [{'role': 'user', "
    "'content': 'Push branch main of acme/team-clean.'}]}, id='call_00000010', "
    "extra=None), error=False)], _name=None, _meta={})"
)
TEAM_REPLY = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[TextContent(text='Pushed main to acme/team-clean: commit a523f6f6ebb2."
    "')], _name=None, _meta={'model': 'fake-gpt', 'index': 0, "
    "'finish_reason': 'stop', 'usage': {'completion_tokens': 17, "
    "'prompt_tokens': 42, 'total_tokens': 59, 'completion_tokens_details': None, "
    "'prompt_tokens_details': None}})"
)


def _span(
    trace: str, span_id: str, parent: str, name: str, start: int, end: int, attributes: Any
) -> SpanRecord:
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        status_code=1,
        attributes=attributes,
        scope_name=SCOPE,
    )


def _generator(
    trace: str,
    span_id: str,
    parent: str,
    times: tuple[int, int],
    messages: Sequence[str],
    tools: Sequence[str],
    reply: str,
    flat: Mapping[str, Any],
) -> SpanRecord:
    """An `OpenAIChatGenerator.run` span: LLM, the bound `run(messages, tools)` and its
    `{"replies": [...]}` as JSON (the objects as their reprs), and the flattened
    attributes it wrote beside them (`flat`, literal)."""
    attributes = {
        "input.mime_type": "application/json",
        "input.value": json.dumps({"messages": list(messages), "tools": list(tools)}),
        "output.mime_type": "application/json",
        "output.value": json.dumps({"replies": [reply]}),
        "llm.model_name": "fake-gpt",
        "llm.provider": "openai",
        "llm.token_count.completion": 17,
        "llm.token_count.prompt": 42,
        "llm.token_count.total": 59,
        "openinference.span.kind": "LLM",
        **flat,
    }
    return _span(trace, span_id, parent, "OpenAIChatGenerator.run", *times, attributes)


def _agent(
    trace: str,
    span_id: str,
    parent: str,
    times: tuple[int, int],
    given: Sequence[str],
    messages: Sequence[str],
    calls: Mapping[str, int],
) -> SpanRecord:
    """An `Agent.run` span: CHAIN, the bound `run(messages)` and the Agent's result."""
    output = {
        "messages": list(messages),
        "step_count": 2,
        "token_usage": {
            "completion_tokens": 34,
            "prompt_tokens": 84,
            "total_tokens": 118,
            "completion_tokens_details": None,
            "prompt_tokens_details": None,
        },
        "tool_call_counts": dict(calls),
        "exit_reason": "text",
        "last_message": messages[-1],
    }
    attributes = {
        "input.mime_type": "application/json",
        "input.value": json.dumps({"messages": list(given)}),
        "output.mime_type": "application/json",
        "output.value": json.dumps(output),
        "openinference.span.kind": "CHAIN",
    }
    return _span(trace, span_id, parent, "Agent.run", *times, attributes)


def _flat_inputs(*messages: tuple[str, str | None]) -> dict[str, str]:
    """`llm.input_messages.N.message.*` as written: a content only where the message has
    text (an assistant's tool calls and a tool's result are left out)."""
    flat = {}
    for i, (role, content) in enumerate(messages):
        if content is not None:
            flat[f"llm.input_messages.{i}.message.content"] = content
        flat[f"llm.input_messages.{i}.message.role"] = role
    return flat


def _flat_call(name: str, arguments: str) -> dict[str, str]:
    prefix = "llm.output_messages.0.message.tool_calls.0.tool_call.function"
    return {
        "llm.output_messages.0.message.role": "assistant",
        f"{prefix}.arguments": arguments,
        f"{prefix}.name": name,
    }


def _flat_text(text: str) -> dict[str, str]:
    return {
        "llm.output_messages.0.message.content": text,
        "llm.output_messages.0.message.role": "assistant",
    }


ENGINEER = "You are a release engineer. Use git_push to push branches."
LEAD = "You lead releases. Hand push requests to release_engineer."
ERR_TRACE = "0cf64f0a938de7f41f5ff06a7032da67"


def _err_raise() -> list[SpanRecord]:
    trace, agent = ERR_TRACE, "59929f1f35de6c1d"
    user = "Push branch main of acme/err-raise."
    return [
        _generator(
            trace,
            "e8b83c7ccd625786",
            agent,
            (1796123527553231000, 1796123527624102000),
            [ENGINEER_SYSTEM, ERR_USER],
            [GIT_TOOL],
            ERR_CALL,
            {
                **_flat_inputs(("system", ENGINEER), ("user", user)),
                **_flat_call("git_push", '{"repo": "acme/err-raise", "branch": "main"}'),
            },
        ),
        _generator(
            trace,
            "5f067ff776a93f88",
            agent,
            (1796123527631183000, 1796123527676003000),
            [ENGINEER_SYSTEM, ERR_USER, ERR_CALL, ERR_RESULT],
            [GIT_TOOL],
            ERR_REPLY,
            {
                **_flat_inputs(
                    ("system", ENGINEER), ("user", user), ("assistant", None), ("tool", None)
                ),
                **_flat_text("I pushed main to acme/err-raise successfully."),
            },
        ),
        _agent(
            trace,
            agent,
            "",
            (1796123527506227000, 1796123527676397000),
            [ERR_USER],
            [ENGINEER_SYSTEM, ERR_USER, ERR_CALL, ERR_RESULT, ERR_REPLY],
            {"git_push": 1},
        ),
    ]


def test_a_generators_calls_results_and_tools_are_read_from_its_reprs():
    step = normalize(_err_raise()[1])
    assert isinstance(step, LlmStep)
    system, user, asked, result = step.input_messages
    assert (system.role, system.text) == ("system", ENGINEER)
    assert (user.role, user.text) == ("user", "Push branch main of acme/err-raise.")
    [call] = asked.tool_calls
    assert (asked.role, call.call_id, call.name) == ("assistant", "call_00000001", "git_push")
    assert json.loads(call.arguments) == {"repo": "acme/err-raise", "branch": "main"}
    assert (result.role, result.tool_call_id, result.is_error) == ("tool", "call_00000001", True)
    assert result.text.endswith(f"Error: {REJECTED}")
    [reply] = step.output_messages
    assert reply.text == "I pushed main to acme/err-raise successfully."
    assert step.model == "fake-gpt"
    assert step.tools is not None
    [tool] = step.tools
    assert tool.name == "git_push" and tool.required == ("repo", "branch")


def test_the_output_call_takes_its_id_from_the_reply_repr():
    step = normalize(_err_raise()[0])
    assert isinstance(step, LlmStep)
    [reply] = step.output_messages
    assert [(p.call_id, p.name) for p in reply.tool_calls] == [("call_00000001", "git_push")]


def test_the_agent_span_names_no_agent_and_reads_request_and_reply():
    run = normalize(_err_raise()[2])
    assert isinstance(run, AgentInvocation)
    assert run.agent_name == ""
    assert run.input_text == "Push branch main of acme/err-raise."
    assert run.output_text == "I pushed main to acme/err-raise successfully."


def test_a_tool_that_raised_is_a_failed_call_with_its_error_text():
    turn, _ = only_turn(_err_raise())
    assert turn.user_message == "Push branch main of acme/err-raise."
    assert turn.reply == "I pushed main to acme/err-raise successfully."
    assert turn.agent == "" and turn.model == "fake-gpt"
    [push] = turn.tool_calls
    assert push.name == "git_push" and push.call_id == "call_00000001"
    assert push.arguments == {"repo": "acme/err-raise", "branch": "main"}
    assert push.error and push.result is not None and REJECTED in push.result


def _session_second_run() -> list[SpanRecord]:
    trace, agent = "3133a37379b043272b2418f94ea62ce4", "5c9d3980baecfdbe"
    history = [ENGINEER_SYSTEM, SESSION_USER, SESSION_CALL, SESSION_RESULT, SESSION_ANSWER]
    flat_history = [
        ("system", ENGINEER),
        ("user", "Push branch main of acme/session."),
        ("assistant", None),
        ("tool", None),
        ("assistant", "Pushed main to acme/session: commit f3d682ef3c61."),
        ("user", "Now push branch dev of acme/session as well."),
    ]
    return [
        _generator(
            trace,
            "1215bc0dc84f13cd",
            agent,
            (1796123527798289000, 1796123527847737000),
            [*history, SESSION_USER_2],
            [GIT_TOOL],
            SESSION_CALL_2,
            {
                **_flat_inputs(*flat_history),
                **_flat_call("git_push", '{"repo": "acme/session", "branch": "dev"}'),
            },
        ),
        _generator(
            trace,
            "f206841cc785d6bb",
            agent,
            (1796123527851365000, 1796123527899612000),
            [*history, SESSION_USER_2, SESSION_CALL_2, SESSION_RESULT_2],
            [GIT_TOOL],
            SESSION_REPLY,
            {
                **_flat_inputs(*flat_history, ("assistant", None), ("tool", None)),
                **_flat_text(
                    "Pushed dev to acme/session: commit 391b99c18b48. "
                    "The earlier push is still commit f3d682ef3c61502d215522bf2be40a838c5f1b70."
                ),
            },
        ),
        _agent(
            trace,
            agent,
            "",
            (1796123527796392000, 1796123527900015000),
            [SESSION_USER, SESSION_CALL, SESSION_RESULT, SESSION_ANSWER, SESSION_USER_2],
            [*history, SESSION_USER_2, SESSION_CALL_2, SESSION_RESULT_2, SESSION_REPLY],
            {"git_push": 1},
        ),
    ]


def test_a_second_run_cites_the_earlier_push_from_the_history_it_was_given():
    turn, verdict = only_turn(_session_second_run())
    assert turn.user_message == "Now push branch dev of acme/session as well."
    [push] = turn.tool_calls
    assert push.arguments == {"repo": "acme/session", "branch": "dev"} and not push.error
    assert push.result is not None and "391b99c18b48f3829bac4649e393b94fc56d9533" in push.result
    [earlier] = turn.history_tool_calls
    assert earlier.result is not None and "f3d682ef3c61502d215522bf2be40a838c5f1b70" in (
        earlier.result
    )
    assert verdict.outcome == "pass", verdict.findings


def _team() -> list[SpanRecord]:
    trace, lead, worker = "3a9329998ae8a72e01278b2666567024", "73f2992c96aaf131", "bfb92f828b52f150"
    user = "Push branch main of acme/team-clean."
    delegation = (
        '{"messages": [{"role": "user", "content": "Push branch main of acme/team-clean."}]}'
    )
    report = f"Pushed main to acme/team-clean: commit {TEAM_COMMIT}."
    return [
        _generator(
            trace,
            "7e4b21ae5670377f",
            lead,
            (1796123527980361000, 1796123527987730000),
            [LEAD_SYSTEM, TEAM_USER],
            [DELEGATE_TOOL],
            DELEGATION,
            {
                **_flat_inputs(("system", LEAD), ("user", user)),
                **_flat_call("release_engineer", delegation),
            },
        ),
        _generator(
            trace,
            "b8bfbec5ba0fc147",
            worker,
            (1796123527990312000, 1796123527993864000),
            [ENGINEER_SYSTEM, TEAM_USER],
            [GIT_TOOL],
            TEAM_CALL,
            {
                **_flat_inputs(("system", ENGINEER), ("user", user)),
                **_flat_call("git_push", '{"repo": "acme/team-clean", "branch": "main"}'),
            },
        ),
        _generator(
            trace,
            "fcf0f9915fe481df",
            worker,
            (1796123527994902000, 1796123528043569000),
            [ENGINEER_SYSTEM, TEAM_USER, TEAM_CALL, TEAM_RESULT],
            [GIT_TOOL],
            WORKER_REPORT,
            {
                **_flat_inputs(
                    ("system", ENGINEER), ("user", user), ("assistant", None), ("tool", None)
                ),
                **_flat_text(report),
            },
        ),
        _agent(
            trace,
            worker,
            lead,
            (1796123527988475000, 1796123528043938000),
            [TEAM_USER],
            [ENGINEER_SYSTEM, TEAM_USER, TEAM_CALL, TEAM_RESULT, WORKER_REPORT],
            {"git_push": 1},
        ),
        _generator(
            trace,
            "5ac14b203b8ae941",
            lead,
            (1796123528044467000, 1796123528047994000),
            [LEAD_SYSTEM, TEAM_USER, DELEGATION, DELEGATION_RESULT],
            [DELEGATE_TOOL],
            TEAM_REPLY,
            {
                **_flat_inputs(
                    ("system", LEAD), ("user", user), ("assistant", None), ("tool", None)
                ),
                **_flat_text("Pushed main to acme/team-clean: commit a523f6f6ebb2."),
            },
        ),
        _agent(
            trace,
            lead,
            "",
            (1796123527908948000, 1796123528048302000),
            [TEAM_USER],
            [LEAD_SYSTEM, TEAM_USER, DELEGATION, DELEGATION_RESULT, TEAM_REPLY],
            {"release_engineer": 1},
        ),
    ]


def test_an_agent_used_as_a_tool_gives_one_turn_holding_its_push():
    turn, verdict = only_turn(_team())
    assert turn.user_message == "Push branch main of acme/team-clean."
    assert turn.reply == "Pushed main to acme/team-clean: commit a523f6f6ebb2."
    assert turn.agent == ""
    calls = {c.name: c for c in turn.tool_calls}
    assert set(calls) == {"release_engineer", "git_push"}
    push = calls["git_push"]
    assert push.arguments == {"repo": "acme/team-clean", "branch": "main"} and not push.error
    assert push.result is not None and TEAM_COMMIT in push.result
    assert calls["release_engineer"].arguments == {
        "messages": [{"role": "user", "content": "Push branch main of acme/team-clean."}]
    }
    assert verdict.outcome == "pass", verdict.findings


# An Agent run by a Pipeline, its generator's class imported after `instrument()`: the
# instrumentation wraps the classes registered by then, and the pipeline's components
# when it runs them, so the Pipeline and the Agent have spans and the generator none.
CLEAN_USER = (
    "ChatMessage(_role=<ChatRole.USER: 'user'>, "
    "_content=[TextContent(text='Push branch main of acme/clean.')], _name=None, "
    "_meta={})"
)
CLEAN_CALL = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[ToolCall(tool_name='git_push', arguments={'repo': 'acme/clean', "
    "'branch': 'main'}, id='call_00000016', extra=None)], _name=None, "
    "_meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'tool_calls', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)
CLEAN_RESULT = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, "
    '_content=[ToolCallResult(result=\'{"ok": true, "repo": "acme/clean", '
    '"branch": "main", "commit": "09e862b026e90f0495fd1b362ede890f9caadd7f"}\', '
    "origin=ToolCall(tool_name='git_push', arguments={'repo': 'acme/clean', "
    "'branch': 'main'}, id='call_00000016', extra=None), error=False)], _name=None, "
    "_meta={})"
)
CLEAN_REPLY = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, "
    "_content=[TextContent(text='Pushed main to acme/clean: commit 09e862b026e9.')], "
    "_name=None, _meta={'model': 'fake-gpt', 'index': 0, 'finish_reason': 'stop', "
    "'usage': {'completion_tokens': 17, 'prompt_tokens': 42, 'total_tokens': 59, "
    "'completion_tokens_details': None, 'prompt_tokens_details': None}})"
)


def _pipeline_without_generator_spans() -> list[SpanRecord]:
    trace, pipeline, agent = (
        "d044625e1468975480084fabcbe0427a",
        "486ef39b01ceb1c6",
        "a430ef3d6643f385",
    )
    conversation = [ENGINEER_SYSTEM, CLEAN_USER, CLEAN_CALL, CLEAN_RESULT, CLEAN_REPLY]
    run = _agent(
        trace,
        agent,
        pipeline,
        (1796123776200410000, 1796123776279865000),
        [CLEAN_USER],
        conversation,
        {"git_push": 1},
    )
    bound = {
        "messages": [CLEAN_USER],
        "streaming_callback": None,
        "generation_kwargs": None,
        "tools": None,
        "hook_context": None,
    }
    result = json.loads(run.attributes["output.value"])
    attributes = {
        "input.mime_type": "application/json",
        "input.value": json.dumps({"data": {"release_engineer": {"messages": [CLEAN_USER]}}}),
        "output.mime_type": "application/json",
        "output.value": json.dumps({"release_engineer": result}),
        "openinference.span.kind": "CHAIN",
    }
    return [
        _span(
            trace,
            agent,
            pipeline,
            "Agent.run",
            run.start_time_unix_nano,
            run.end_time_unix_nano,
            {**run.attributes, "input.value": json.dumps(bound)},
        ),
        _span(
            trace,
            pipeline,
            "",
            "Pipeline.run",
            1796123776145213000,
            1796123776280296000,
            attributes,
        ),
    ]


def test_without_generator_spans_the_turn_is_read_from_the_runs_conversation():
    turn, verdict = only_turn(_pipeline_without_generator_spans())
    assert turn.user_message == "Push branch main of acme/clean."
    assert turn.reply == "Pushed main to acme/clean: commit 09e862b026e9."
    assert turn.agent == ""
    [push] = turn.tool_calls
    assert push.arguments == {"repo": "acme/clean", "branch": "main"} and not push.error
    assert push.result is not None and "09e862b026e90f0495fd1b362ede890f9caadd7f" in push.result
    assert verdict.outcome == "pass", verdict.findings


# --- the reader on shapes the runs did not show ------------------------------------------

_RESULT = (
    "ToolCallResult(result={result}, origin=ToolCall(tool_name='lookup', "
    "arguments={{'q': 'x'}}, id={call_id}, extra=None), error={error})"
)


def _tool_message(*results: str) -> str:
    return (
        f"ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[{', '.join(results)}], "
        "_name=None, _meta={})"
    )


def test_each_result_of_one_message_is_a_tool_message_answering_its_call():
    text = _tool_message(
        _RESULT.format(result="'one'", call_id="'c1'", error=False),
        _RESULT.format(result="[TextContent(text='two')]", call_id="None", error=True),
    )
    first, second = read_message_repr(text)
    assert (first.role, first.text, first.tool_call_id, first.is_error) == (
        "tool",
        "one",
        "c1",
        False,
    )
    assert (second.text, second.tool_call_id, second.is_error) == ("two", "", True)


def test_a_named_user_message_keeps_its_speaker_and_reasoning_is_no_text():
    text = (
        "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='hi'), "
        "ReasoningContent(reasoning_text='hmm', extra={})], _name='alice', _meta={})"
    )
    [message] = read_message_repr(text)
    assert (message.role, message.text, message.name) == ("user", "hi", "alice")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[", id="cut-short"),
        pytest.param("ChatMessage(_role=<ChatRole.CHAIR: 'chair'>, _content=[])", id="no-role"),
        pytest.param("ChatMessage(" + "[" * 200 + "]" * 200 + ")", id="nested-too-deep"),
        pytest.param("ChatMessage(_role='user', _content=[TextContent(text='x' * 9)])", id="code"),
    ],
)
def test_an_unreadable_repr_is_no_message(text: str):
    assert read_message_repr(text) == ()


def test_an_unreadable_repr_is_skipped_and_the_messages_around_it_still_count():
    value = json.dumps({"messages": [ERR_USER, "ChatMessage(_role=", ERR_REPLY]})
    user, reply = haystack_messages(value, "messages")
    assert (user.role, reply.role) == ("user", "assistant")
