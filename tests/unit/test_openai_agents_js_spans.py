"""The OpenAI Agents SDK for JavaScript, as OpenInference's processor for it records a run.

Recorded from `@openai/agents` 0.20.0 (Responses API) running `run(release_engineer,
...)` with the `git_push` tool, traced by `@arizeai/openinference-instrumentation-openai-
agents` 0.2.15 (`manuallyInstrument(agents)`); token counts, invocation parameters and the
raw response bodies of the model calls are left out.

What they pin: the processor names each span for the SDK's span (the agent's own span is
AGENT, named for the agent, with its `graph.node.id`; its turns are CHAIN spans named
`turn`), and wraps the run in two spans named for the SDK's trace: an AGENT root that
holds the run's input and output, and a CHAIN under it, neither with a graph node. The
trace's name is the run's `workflowName` ("Agent workflow" unless the caller names it):
it never names an agent, whatever it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from factledger.processors.spans import SpanRecord

from .span_turns import only_turn

SCOPE = "@arizeai/openinference-instrumentation-openai-agents"
TRACE = "c0c4d1b2a3e4f5061728394a5b6c7d8e"
ASK = "Push branch main of acme/clean."
SHA = "09e862b026e90f0495fd1b362ede890f9caadd7f"
REPLY = "Pushed main to acme/clean: commit 09e862b026e9."
ARGUMENTS = '{"repo": "acme/clean", "branch": "main"}'
RESULT = '{"ok":true,"repo":"acme/clean","branch":"main","commit":"' + SHA + '"}'
T0 = 1_796_125_311_732_000_000


def span(
    span_id: str,
    name: str,
    parent: str,
    start_ms: int,
    end_ms: int,
    attributes: Mapping[str, Any],
) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=T0 + start_ms * 1_000_000,
        end_time_unix_nano=T0 + end_ms * 1_000_000,
        status_code=1,
        attributes={"llm.system": "openai", **attributes},
        resource_attributes={"service.name": "openai-agents-js.handoff.openinference"},
        scope_name=SCOPE,
    )


def run_spans(workflow: str) -> list[SpanRecord]:
    """One run of the engineer, in the order the processor ends its spans."""
    call = "llm.output_messages.0.message.tool_calls.0.tool_call"
    first_input = json.dumps([{"type": "message", "role": "user", "content": ASK}])
    second_input = json.dumps(
        [
            {"type": "message", "role": "user", "content": ASK},
            {
                "type": "function_call",
                "id": "fc_00000001",
                "callId": "call_00000001",
                "name": "git_push",
                "status": "completed",
                "arguments": ARGUMENTS,
                "providerData": {"type": "function_call", "id": "fc_00000001"},
            },
            {
                "type": "function_call_result",
                "name": "git_push",
                "callId": "call_00000001",
                "status": "completed",
                "output": {"type": "text", "text": RESULT},
            },
        ],
        separators=(",", ":"),
    )
    return [
        span(
            "7e8a0f7b8c2a5d01",
            "response",
            "f7823d1f83e55bb0",
            11,
            43,
            {
                "openinference.span.kind": "LLM",
                "llm.provider": "openai",
                "input.value": first_input,
                "input.mime_type": "application/json",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": ASK,
                "output.mime_type": "application/json",
                "llm.model_name": "fake-gpt",
                "llm.finish_reason": "stop",
                "llm.output_messages.0.message.role": "assistant",
                f"{call}.id": "call_00000001",
                f"{call}.function.name": "git_push",
                f"{call}.function.arguments": ARGUMENTS,
            },
        ),
        span(
            "45138e8a06260f03",
            "git_push",
            "f7823d1f83e55bb0",
            50,
            52,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "git_push",
                "input.value": ARGUMENTS,
                "input.mime_type": "application/json",
                "output.value": RESULT,
                "output.mime_type": "application/json",
            },
        ),
        span("f7823d1f83e55bb0", "turn", "1e08338f8f5a558f", 5, 53, CHAIN),
        span(
            "2427149ec1ef07a2",
            "response",
            "bf20f32d9657ded8",
            55,
            59,
            {
                "openinference.span.kind": "LLM",
                "llm.provider": "openai",
                "input.value": second_input,
                "input.mime_type": "application/json",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": ASK,
                "llm.input_messages.1.message.role": "assistant",
                "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_00000001",
                "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": (
                    ARGUMENTS
                ),
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.tool_call_id": "call_00000001",
                "llm.input_messages.2.message.content": RESULT,
                "output.mime_type": "application/json",
                "llm.model_name": "fake-gpt",
                "llm.finish_reason": "stop",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.contents.0.message_content.text": REPLY,
            },
        ),
        span("bf20f32d9657ded8", "turn", "1e08338f8f5a558f", 54, 60, CHAIN),
        span(
            "1e08338f8f5a558f",
            "release_engineer",
            "9bec3176082a74e2",
            4,
            62,
            {"openinference.span.kind": "AGENT", "graph.node.id": "release_engineer"},
        ),
        span("9bec3176082a74e2", workflow, "d738097e2c46c5ba", 3, 62, CHAIN),
        span(
            "d738097e2c46c5ba",
            workflow,
            "",
            0,
            63,
            {
                "openinference.span.kind": "AGENT",
                "input.value": first_input,
                "input.mime_type": "application/json",
                "output.value": REPLY,
            },
        ),
    ]


CHAIN = {"openinference.span.kind": "CHAIN"}


@pytest.mark.parametrize("workflow", ["Agent workflow", "Release pipeline"])
def test_the_turn_is_the_agents_whatever_the_workflow_is_named(workflow: str) -> None:
    turn, verdict = only_turn(run_spans(workflow))
    assert turn.agent == "release_engineer"
    assert turn.model == "fake-gpt"
    assert turn.user_message == ASK
    assert turn.reply == REPLY
    [push] = turn.tool_calls
    assert push.name == "git_push"
    assert dict(push.arguments) == {"repo": "acme/clean", "branch": "main"}
    assert push.error is False and SHA in str(push.result)
    assert verdict.outcome == "pass", verdict.findings
