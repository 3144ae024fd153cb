"""The OpenAI Agents SDK's handoff, as its two instrumentations record it.

Recorded from `openai-agents` 0.24.0 (Responses API) running `Runner.run(release_lead,
...)` where `release_lead` has `handoffs=[release_engineer]` and the engineer the
`git_push` tool, with `openinference-instrumentation-openai-agents` 2.6.0 and with
`opentelemetry-instrumentation-openai-agents` 0.62.4. Both wrap the run in a span named
for the trace ("Agent workflow"), the agents' spans side by side inside it: the lead's
(its model call ends in `transfer_to_release_engineer`), then the engineer's (the push and
the reply). The user talked to the lead: the turn is the lead's. Token counts, invocation
parameters and the raw `output.value` response bodies are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from factledger.processors.spans import SpanRecord

from .span_turns import judged

TRACE = "7bf9219ce5606be5a0b1c2d3e4f50617"
ASK = "Push branch main of acme/team-fab."
SHA = "0202cba9713a5d3d3faf468c959f0c56b9591276"
FABRICATED = "eaf4147d46591e0685de046d12684156e5b191bc"
REPLY = f"Pushed main to acme/team-fab. The new head is commit {FABRICATED}."
ARGUMENTS = '{"repo": "acme/team-fab", "branch": "main"}'
RESULT = '{"ok": true, "repo": "acme/team-fab", "branch": "main", "commit": "' + SHA + '"}'
RESULT_AS_SENT = "{'ok': True, 'repo': 'acme/team-fab', 'branch': 'main', 'commit': '" + SHA + "'}"
T0 = 1_796_026_059_141_743_006


def span(
    span_id: str,
    name: str,
    parent: str,
    start_ms: int,
    end_ms: int,
    attributes: Mapping[str, Any],
    scope: str,
) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=T0 + start_ms * 1_000_000,
        end_time_unix_nano=T0 + end_ms * 1_000_000,
        status_code=1,
        attributes=dict(attributes),
        resource_attributes={"service.name": "openai-agents.openinference"},
        scope_name=scope,
    )


def openinference_handoff() -> list[SpanRecord]:
    scope = "openinference.instrumentation.openai_agents"
    handoff_call = {
        "arguments": "{}",
        "call_id": "call_00000031",
        "name": "transfer_to_release_engineer",
        "type": "function_call",
        "id": "fc_00000031",
        "status": "completed",
    }
    handoff_output = {
        "call_id": "call_00000031",
        "output": '{"assistant": "release_engineer"}',
        "type": "function_call_output",
    }
    push_call = {
        "arguments": ARGUMENTS,
        "call_id": "call_00000033",
        "name": "git_push",
        "type": "function_call",
        "id": "fc_00000033",
        "status": "completed",
    }
    push_output = {
        "call_id": "call_00000033",
        "output": RESULT_AS_SENT,
        "type": "function_call_output",
    }
    handed = {
        "llm.input_messages.1.message.content": ASK,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": (
            "transfer_to_release_engineer"
        ),
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_00000031",
        "llm.input_messages.3.message.content": '{"assistant": "release_engineer"}',
        "llm.input_messages.3.message.role": "tool",
        "llm.input_messages.3.message.tool_call_id": "call_00000031",
    }
    llm = {"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "fake-gpt"}
    return [
        span(
            "7bf9219ce5606be5",
            "Agent workflow",
            "",
            0,
            171,
            {"openinference.span.kind": "AGENT"},
            scope,
        ),
        span(
            "779cf3bbec1e4db4",
            "Agent workflow",
            "7bf9219ce5606be5",
            0,
            171,
            {"openinference.span.kind": "CHAIN"},
            scope,
        ),
        span(
            "24b6cc71b5d6ed76",
            "release_lead",
            "779cf3bbec1e4db4",
            1,
            52,
            {
                "agent.name": "release_lead",
                "graph.node.id": "release_lead",
                "openinference.span.kind": "AGENT",
            },
            scope,
        ),
        span(
            "0cf46d75cd8b9879",
            "turn",
            "24b6cc71b5d6ed76",
            1,
            52,
            {"openinference.span.kind": "CHAIN"},
            scope,
        ),
        span(
            "0e12a91caa7cce9e",
            "response",
            "0cf46d75cd8b9879",
            2,
            49,
            {
                **llm,
                "input.mime_type": "application/json",
                "input.value": json.dumps([{"content": ASK, "role": "user"}]),
                "llm.finish_reason": "stop",
                "llm.input_messages.1.message.content": ASK,
                "llm.input_messages.1.message.role": "user",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": (
                    "transfer_to_release_engineer"
                ),
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000031",
            },
            scope,
        ),
        span(
            "bfb25fb7a248d301",
            "handoff to release_engineer",
            "0cf46d75cd8b9879",
            51,
            51,
            {
                "input.value": "release_lead",
                "openinference.span.kind": "TOOL",
                "output.value": "release_engineer",
            },
            scope,
        ),
        span(
            "bb9918b55dbda52e",
            "release_engineer",
            "779cf3bbec1e4db4",
            53,
            171,
            {
                "agent.name": "release_engineer",
                "graph.node.id": "release_engineer",
                "graph.node.parent_id": "release_lead",
                "openinference.span.kind": "AGENT",
            },
            scope,
        ),
        span(
            "cc2bf34eb844e5ae",
            "turn",
            "bb9918b55dbda52e",
            53,
            113,
            {"openinference.span.kind": "CHAIN"},
            scope,
        ),
        span(
            "0b1658dceabf9b62",
            "response",
            "cc2bf34eb844e5ae",
            54,
            105,
            {
                **llm,
                "input.mime_type": "application/json",
                "input.value": json.dumps(
                    [{"content": ASK, "role": "user"}, handoff_call, handoff_output]
                ),
                "llm.finish_reason": "stop",
                **handed,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
                    ARGUMENTS
                ),
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000033",
            },
            scope,
        ),
        span(
            "ce1590b3c2f4737f",
            "git_push",
            "cc2bf34eb844e5ae",
            107,
            113,
            {
                "input.mime_type": "application/json",
                "input.value": ARGUMENTS,
                "openinference.span.kind": "TOOL",
                "output.mime_type": "application/json",
                "output.value": RESULT,
                "tool.description": "Push a branch of a repository to its remote.",
                "tool.name": "git_push",
            },
            scope,
        ),
        span(
            "9934737fe844f125",
            "turn",
            "bb9918b55dbda52e",
            114,
            169,
            {"openinference.span.kind": "CHAIN"},
            scope,
        ),
        span(
            "e21b71020e290d15",
            "response",
            "9934737fe844f125",
            123,
            159,
            {
                **llm,
                "input.mime_type": "application/json",
                "input.value": json.dumps(
                    [
                        {"content": ASK, "role": "user"},
                        handoff_call,
                        handoff_output,
                        push_call,
                        push_output,
                    ]
                ),
                "llm.finish_reason": "stop",
                **handed,
                "llm.input_messages.4.message.role": "assistant",
                "llm.input_messages.4.message.tool_calls.0.tool_call.function.arguments": ARGUMENTS,
                "llm.input_messages.4.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.input_messages.4.message.tool_calls.0.tool_call.id": "call_00000033",
                "llm.input_messages.5.message.content": RESULT_AS_SENT,
                "llm.input_messages.5.message.role": "tool",
                "llm.input_messages.5.message.tool_call_id": "call_00000033",
                "llm.output_messages.0.message.content": REPLY,
                "llm.output_messages.0.message.contents.0.message_content.text": REPLY,
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.role": "assistant",
            },
            scope,
        ),
    ]


def openllmetry_handoff() -> list[SpanRecord]:
    scope = "opentelemetry.instrumentation.openai_agents"
    ask = {"role": "user", "parts": [{"type": "text", "content": ASK}]}

    def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
        part = {"type": "tool_call", "name": name, "id": call_id, "arguments": arguments}
        return {"role": "assistant", "parts": [part]}

    def answer(call_id: str, response: str) -> dict[str, Any]:
        part = {"type": "tool_call_response", "id": call_id, "response": response}
        return {"role": "tool", "parts": [part]}

    def response(output: dict[str, Any], finish: str) -> dict[str, Any]:
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.temperature": 1.0,
            "gen_ai.request.top_p": 1.0,
            "gen_ai.response.finish_reasons": json.dumps([finish]),
            "gen_ai.response.model": "fake-gpt",
            "gen_ai.output.messages": json.dumps([{**output, "finish_reason": finish}]),
        }

    handed = [
        ask,
        call("fc_00000031", "transfer_to_release_engineer", {}),
        answer("call_00000031", '{"assistant": "release_engineer"}'),
    ]
    push = {"repo": "acme/team-fab", "branch": "main"}
    said = {"role": "assistant", "parts": [{"type": "text", "content": REPLY}]}
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai"}
    return [
        span(
            "1523976ef4a05f4d",
            "Agent Workflow",
            "",
            0,
            133,
            {
                "gen_ai.provider.name": "openai",
                "traceloop.span.kind": "workflow",
                "traceloop.workflow.name": "Agent Workflow",
            },
            scope,
        ),
        span(
            "435414260b9174d6",
            "release_lead.agent",
            "1523976ef4a05f4d",
            1,
            10,
            {**agent, "gen_ai.agent.name": "release_lead", "traceloop.span.kind": "agent"},
            scope,
        ),
        span(
            "2c3dfca7908dd4d1",
            "openai.response",
            "435414260b9174d6",
            2,
            8,
            {
                **response(call("call_00000031", "transfer_to_release_engineer", {}), "tool_call"),
                "gen_ai.input.messages": json.dumps([ask]),
            },
            scope,
        ),
        span(
            "308092cf4008e68b",
            "release_lead → unknown.handoff",
            "435414260b9174d6",
            9,
            9,
            {
                "gen_ai.agent.name": "release_lead",
                "gen_ai.handoff.from_agent": "release_lead",
                "gen_ai.operation.name": "handoff",
                "gen_ai.provider.name": "openai",
                "traceloop.span.kind": "handoff",
            },
            scope,
        ),
        span(
            "f80437a19145f70c",
            "release_engineer.agent",
            "1523976ef4a05f4d",
            10,
            133,
            {**agent, "gen_ai.agent.name": "release_engineer", "traceloop.span.kind": "agent"},
            scope,
        ),
        span(
            "a9a89c0cb1504a19",
            "openai.response",
            "f80437a19145f70c",
            11,
            65,
            {
                **response(call("call_00000033", "git_push", push), "tool_call"),
                "gen_ai.input.messages": json.dumps(handed),
            },
            scope,
        ),
        span(
            "04ea9d347c8d02fc",
            "git_push.tool",
            "f80437a19145f70c",
            66,
            67,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.provider.name": "openai",
                "gen_ai.tool.call.arguments": ARGUMENTS,
                "gen_ai.tool.call.result": RESULT,
                "gen_ai.tool.name": "git_push",
                "gen_ai.tool.type": "function",
                "traceloop.span.kind": "tool",
            },
            scope,
        ),
        span(
            "7aed214a56f6b5e0",
            "openai.response",
            "f80437a19145f70c",
            69,
            121,
            {
                **response(said, "stop"),
                "gen_ai.input.messages": json.dumps(
                    [
                        *handed,
                        call("fc_00000033", "git_push", push),
                        answer("call_00000033", RESULT_AS_SENT),
                    ]
                ),
            },
            scope,
        ),
    ]


@pytest.mark.parametrize(
    "spans",
    [
        pytest.param(openinference_handoff(), id="openinference"),
        pytest.param(openllmetry_handoff(), id="openllmetry"),
    ],
)
def test_a_handoff_is_one_turn_of_the_agent_the_user_talked_to(spans):
    turns = judged(spans)
    assert len(turns) == 1, [t.reply for t, _ in turns]
    turn, verdict = turns[0]
    assert turn.agent == "release_lead"
    assert turn.user_message == ASK
    assert turn.reply == REPLY
    (push,) = [c for c in turn.tool_calls if c.name == "git_push"]
    assert push.arguments == {"repo": "acme/team-fab", "branch": "main"}
    assert SHA in (push.result or "")
    assert push.error is False
    # The engineer's push returned another commit than the one the reply cites.
    assert verdict.outcome == "reject"
    assert "fabricated_identifier" in verdict.kinds, verdict.findings
