"""Microsoft Agent Framework agents as its own instrumentation really records them.

The attributes are literal from a run of `agent-framework-core` 1.23 with
`agent-framework-openai` 1.17 (an `Agent` with a `@tool` on the Responses client,
`OpenAIChatClient`, two runs in one `AgentSession`, `enable_instrumentation(
enable_sensitive_data=True)`), read through the real normalizer, a `TurnAssembler` and
the default validators.

What they pin: the client chains its calls by `previous_response_id`, so each `chat`
span's `gen_ai.input.messages` holds only what is new since the response before (the
user message, or the tool results) and its `gen_ai.conversation.id` is that previous
response's id: a different one on every call. The session's second run's first call names
no conversation at all; its `invoke_agent` span names the session's last response. The
second request's history is therefore in the first request's trace: the call whose
`gen_ai.response.id` is the one the second run continues.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from factledger.processors.normalize.base import AgentInvocation, LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanRecord

from .span_turns import judged

SCOPE = "agent_framework"
FIRST = "74beb2750e05d54625cae315a5e793a4"
SECOND = "ee5e98c3cf2ed2c308bb0f9c8944819b"
INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
MAIN = "f3d682ef3c61502d215522bf2be40a838c5f1b70"
DEV = "391b99c18b48f3829bac4649e393b94fc56d9533"
SESSION_REPLY = (
    f"Pushed dev to acme/session: commit {DEV[:12]}. The earlier push is still commit {MAIN}."
)
TOOLS = json.dumps(
    [
        {
            "type": "function",
            "name": "git_push",
            "description": "Push a branch of a repository to its remote.",
            "parameters": {
                "properties": {
                    "repo": {
                        "description": "The repository, as owner/name.",
                        "title": "Repo",
                        "type": "string",
                    },
                    "branch": {
                        "description": "The branch to push.",
                        "title": "Branch",
                        "type": "string",
                    },
                },
                "required": ["repo", "branch"],
                "title": "git_push_input",
                "type": "object",
            },
        }
    ]
)


def _span(
    trace: str, span_id: str, parent: str, name: str, start: int, end: int, attrs: dict[str, Any]
) -> SpanRecord:
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=start * 1_000,
        end_time_unix_nano=end * 1_000,
        status_code=0,
        attributes=attrs,
        scope_name=SCOPE,
        resource_attributes={"service.name": "agent-framework.native"},
    )


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _call(call_id: str, branch: str) -> dict[str, Any]:
    arguments = json.dumps({"repo": "acme/session", "branch": branch})
    part = {"type": "tool_call", "id": call_id, "name": "git_push", "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def _result(call_id: str, branch: str, commit: str) -> dict[str, Any]:
    response = json.dumps({"ok": True, "repo": "acme/session", "branch": branch, "commit": commit})
    part = {"type": "tool_call_response", "id": call_id, "response": response}
    return {"role": "tool", "parts": [part]}


def _chat(
    trace: str,
    span_id: str,
    parent: str,
    start: int,
    end: int,
    inputs: list[dict[str, Any]],
    output: dict[str, Any],
    response_id: str,
    previous: str = "",
) -> SpanRecord:
    finish = "tool_call" if output["parts"][0]["type"] == "tool_call" else "stop"
    attrs: dict[str, Any] = {
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": INSTRUCTIONS}]),
        "gen_ai.request.choice.count": 1,
        "gen_ai.operation.name": "chat",
        "server.address": "http://127.0.0.1:36473/v1/",
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.provider.name": "openai",
        "gen_ai.response.id": response_id,
        "gen_ai.response.finish_reasons": ['["tool_calls"]' if finish == "tool_call" else "stop"],
        "gen_ai.response.model": "fake-gpt",
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.usage.output_tokens": 17,
        "gen_ai.output.messages": json.dumps([{**output, "finish_reason": finish}]),
    }
    if previous:
        attrs["gen_ai.conversation.id"] = previous
    return _span(trace, span_id, parent, "chat fake-gpt", start, end, attrs)


def _tool(
    trace: str,
    span_id: str,
    parent: str,
    start: int,
    end: int,
    call_id: str,
    branch: str,
    commit: str,
) -> SpanRecord:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "git_push",
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Push a branch of a repository to its remote.",
        "gen_ai.tool.call.arguments": json.dumps({"repo": "acme/session", "branch": branch}),
        "gen_ai.tool.call.result": json.dumps(
            {"ok": True, "repo": "acme/session", "branch": branch, "commit": commit}
        ),
        "agent_framework.function.invocation.duration": 0.0003,
    }
    return _span(trace, span_id, parent, "execute_tool git_push", start, end, attrs)


def _agent(
    trace: str,
    span_id: str,
    start: int,
    end: int,
    user: str,
    outputs: list[dict[str, Any]],
    previous: str = "",
) -> SpanRecord:
    attrs: dict[str, Any] = {
        "gen_ai.input.messages": json.dumps([_text("user", user)]),
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": INSTRUCTIONS}]),
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": "7c2d813e-fd7f-487f-8d84-796d5000dbf1",
        "gen_ai.agent.name": "release_engineer",
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.tool.definitions": TOOLS,
        "gen_ai.provider.name": "microsoft.agent_framework",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.output.messages": json.dumps(outputs),
    }
    if previous:
        attrs["gen_ai.conversation.id"] = previous
    return _span(trace, span_id, "", "invoke_agent release_engineer", start, end, attrs)


def _first_request() -> list[SpanRecord]:
    user = "Push branch main of acme/session."
    answer = f"Pushed main to acme/session: commit {MAIN[:12]}."
    call, result = _call("call_00000001", "main"), _result("call_00000001", "main", MAIN)
    agent = "c95102fc3da3162f"
    return [
        _chat(
            FIRST,
            "4af36bcc09e2c212",
            agent,
            1284,
            136242,
            [_text("user", user)],
            call,
            "resp_00000002",
        ),
        _tool(FIRST, "8f60217ba94dbc6b", agent, 137099, 137505, "call_00000001", "main", MAIN),
        _chat(
            FIRST,
            "8faebee5cee08dad",
            agent,
            137921,
            141876,
            [result],
            _text("assistant", answer),
            "resp_00000004",
            previous="resp_00000002",
        ),
        _agent(FIRST, agent, 0, 142297, user, [call, result, _text("assistant", answer)]),
    ]


def _second_request() -> list[SpanRecord]:
    user = "Now push branch dev of acme/session as well."
    call, result = _call("call_00000005", "dev"), _result("call_00000005", "dev", DEV)
    agent = "7f9c8fadd4524329"
    return [
        # The run's first call continues the session's last response, but its span names
        # no conversation: only the agent span below does.
        _chat(
            SECOND,
            "0336cbedee0ea590",
            agent,
            142900,
            187242,
            [_text("user", user)],
            call,
            "resp_00000006",
        ),
        _tool(SECOND, "dfbc4262decb8781", agent, 187760, 188130, "call_00000005", "dev", DEV),
        _chat(
            SECOND,
            "f9315b77d8148418",
            agent,
            188468,
            240350,
            [result],
            _text("assistant", SESSION_REPLY),
            "resp_00000008",
            previous="resp_00000006",
        ),
        _agent(
            SECOND,
            agent,
            142584,
            240771,
            user,
            [call, result, _text("assistant", SESSION_REPLY)],
            previous="resp_00000004",
        ),
    ]


def test_a_chat_span_names_its_response_and_the_response_it_continues():
    step = normalize(_first_request()[2])
    assert isinstance(step, LlmStep)
    assert (step.response_id, step.previous_response_id) == ("resp_00000004", "resp_00000002")
    opening = normalize(_first_request()[0])
    assert isinstance(opening, LlmStep)
    assert (opening.response_id, opening.previous_response_id) == ("resp_00000002", "")
    agent = normalize(_second_request()[3])
    assert isinstance(agent, AgentInvocation)
    assert agent.previous_response_id == "resp_00000004"


def test_a_conversation_id_that_names_no_response_continues_nothing():
    span = _first_request()[2]
    attrs = {**span.attributes, "gen_ai.conversation.id": "conv_68a1b2c3"}
    step = normalize(replace(span, attributes=attrs))
    assert isinstance(step, LlmStep)
    assert (step.conversation_id, step.previous_response_id) == ("conv_68a1b2c3", "")


def test_the_second_request_of_a_session_reads_its_history_from_the_response_it_continues():
    turns = judged([*_first_request(), *_second_request()])
    assert len(turns) == 2
    (first, first_verdict), (second, verdict) = turns
    assert first_verdict.outcome == "pass"
    assert second.user_message == "Now push branch dev of acme/session as well."
    assert second.reply == SESSION_REPLY
    assert [c.arguments for c in second.tool_calls] == [{"repo": "acme/session", "branch": "dev"}]
    assert [c.arguments for c in second.history_tool_calls] == [
        {"repo": "acme/session", "branch": "main"}
    ]
    assert verdict.outcome == "pass", verdict.findings
    # One conversation: the chain's first response names both turns, where the calls'
    # own conversation ids differ on every call.
    assert first.conversation_id == second.conversation_id == "resp_00000002"


def test_without_the_response_it_continues_the_earlier_commit_is_unfounded():
    turns = judged(_second_request())
    assert len(turns) == 1
    turn, verdict = turns[0]
    assert turn.history_tool_calls == ()
    assert verdict.outcome == "reject"
    assert "fabricated_identifier" in verdict.kinds


def test_a_request_sent_with_its_history_is_not_given_it_twice():
    spans = _second_request()
    opening = spans[0]
    history = [
        _text("user", "Push branch main of acme/session."),
        _call("call_00000001", "main"),
        _result("call_00000001", "main", MAIN),
        _text("assistant", f"Pushed main to acme/session: commit {MAIN[:12]}."),
        _text("user", "Now push branch dev of acme/session as well."),
    ]
    attrs = {**opening.attributes, "gen_ai.input.messages": json.dumps(history)}
    spans[0] = replace(opening, attributes=attrs)
    turns = judged([*_first_request(), *spans])
    second, verdict = turns[1]
    assert [c.arguments["branch"] for c in second.history_tool_calls] == ["main"]
    assert verdict.outcome == "pass", verdict.findings


def test_calls_of_their_own_traces_join_by_the_response_they_continue():
    # The chat client used without an agent: each call is a trace of its own. The tool
    # call ids here are too short to be trusted across traces; the continuation names the
    # very response it continues, which is evidence enough.
    first = _first_request()
    opening, tool, closing = first[0], first[1], first[2]

    def own_trace(span: SpanRecord, trace: str) -> SpanRecord:
        text = json.dumps(dict(span.attributes)).replace("call_00000001", "call_1")
        return replace(span, trace_id=trace, parent_span_id="", attributes=json.loads(text))

    spans = [
        own_trace(opening, "0a" * 16),
        own_trace(tool, "0a" * 16),
        own_trace(closing, "0b" * 16),
    ]
    turns = judged(spans)
    assert len(turns) == 1, [t.reply for t, _ in turns]
    turn, verdict = turns[0]
    assert turn.user_message == "Push branch main of acme/session."
    assert [c.arguments for c in turn.tool_calls] == [{"repo": "acme/session", "branch": "main"}]
    assert turn.reply == f"Pushed main to acme/session: commit {MAIN[:12]}."
    assert verdict.outcome == "pass", verdict.findings
