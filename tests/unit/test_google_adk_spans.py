"""Google ADK's spans, as ADK's own tracing (google-adk 2.13, content on the spans with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`) and OpenInference's ADK
instrumentation (openinference-instrumentation-google-adk 1.0.5 on google-adk 2.12) write
them, recorded from an `LlmAgent` on LiteLLM run by an `InMemoryRunner`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.processors.evidence.outcomes import result_is_error
from factledger.processors.kinds import Kind, Outcome
from factledger.processors.spans import SpanRecord

from .span_turns import only_turn, record

NATIVE = "gcp.vertex.agent"
OPENINFERENCE = "openinference.instrumentation.google_adk"
USER = "Push branch main of acme/err-raise."
ARGUMENTS = {"repo": "acme/err-raise", "branch": "main"}
COMMIT = "7d1c0c4f7d3a3a1b9d0f5f0e1f1c2b3a4d5e6f70"
GUIDANCE = (
    "The call to tool `git_push` failed.\n\n**Error Details:**\n```\nPushRejected: push "
    "rejected: the remote has commits you do not have\n```\n\n**Tool Arguments Used:**\n"
    '```json\n{\n  "repo": "acme/err-raise",\n  "branch": "main"\n}\n```\n\n'
    "**Reflection Guidance:**\nThis is retry attempt **1 of 1**. Analyze the error and the "
    "arguments you provided. Do not repeat the exact same call."
)
# ADK's ReflectAndRetryToolPlugin: what the model is handed in place of a raised exception.
REFLECTION = {
    "response_type": "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN",
    "error_type": "PushRejected",
    "error_details": "push rejected: the remote has commits you do not have",
    "retry_count": 1,
    "reflection_guidance": GUIDANCE,
}
SUCCESS = {"ok": True, "repo": "acme/err-raise", "branch": "main", "commit": COMMIT}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _adk_llm(span_id: str, start: int, inputs: list[Any], outputs: list[Any]) -> SpanRecord:
    return record(
        span_id,
        "generate_content openai/fake-gpt",
        {
            "gen_ai.operation.name": "generate_content",
            "gen_ai.request.model": "openai/fake-gpt",
            "gen_ai.agent.name": "release_engineer",
            "gen_ai.conversation.id": "err-raise-78dd8842",
            "gcp.vertex.agent.invocation_id": "e-c0575be4-4a43-4c63-a7fb-c45e50997982",
            "gen_ai.provider.name": "openai",
            "gen_ai.response.finish_reasons": ("stop",),
            "gen_ai.tool.definitions": _compact(
                [
                    {
                        "name": "git_push",
                        "description": "Push",
                        "parameters": None,
                        "type": "function",
                    }
                ]
            ),
            "gen_ai.input.messages": _compact(inputs),
            "gen_ai.output.messages": _compact(outputs),
        },
        parent="9b18205bafb9f502",
        start=start,
        end=start + 100,
        scope=NATIVE,
    )


def adk_native_run(tool_response: dict[str, Any], reply: str) -> list[SpanRecord]:
    """ADK's `generate_content`, `execute_tool`, `generate_content`, `invoke_agent` and
    `invoke_workflow` spans of one run, in the order they ended."""
    user = {"role": "user", "parts": [{"content": USER, "type": "text"}]}
    call = {"id": "call_00000001", "name": "git_push", "arguments": ARGUMENTS, "type": "tool_call"}
    answered = {
        "role": "user",
        "parts": [{"id": "call_00000001", "response": tool_response, "type": "tool_call_response"}],
    }
    return [
        _adk_llm(
            "960706f791256001",
            1_000,
            [user],
            [{"role": "assistant", "parts": [call], "finish_reason": "stop"}],
        ),
        record(
            "da401d3397808ea1",
            "execute_tool git_push",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "git_push",
                "gen_ai.tool.type": "FunctionTool",
                "gen_ai.agent.name": "release_engineer",
                "gen_ai.tool.call.id": "call_00000001",
                "gen_ai.tool.call.arguments": json.dumps(ARGUMENTS),
                "gen_ai.tool.call.result": json.dumps(tool_response),
            },
            parent="9b18205bafb9f502",
            start=1_200,
            end=1_300,
            scope=NATIVE,
        ),
        _adk_llm(
            "c393292de9baef1c",
            1_400,
            [user, {"role": "assistant", "parts": [call]}, answered],
            [
                {
                    "role": "assistant",
                    "parts": [{"content": reply, "type": "text"}],
                    "finish_reason": "stop",
                }
            ],
        ),
        record(
            "9b18205bafb9f502",
            "invoke_agent release_engineer",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "release_engineer",
                "gen_ai.conversation.id": "err-raise-78dd8842",
            },
            parent="526e094c25b6b0cb",
            start=900,
            end=1_600,
            scope=NATIVE,
        ),
        record(
            "526e094c25b6b0cb",
            "invoke_workflow release_engineer",
            {
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.conversation.id": "err-raise-78dd8842",
                "gen_ai.workflow.name": "release_engineer",
            },
            start=800,
            end=1_700,
            scope=NATIVE,
        ),
    ]


def test_adk_reflect_and_retry_response_is_a_failed_call() -> None:
    turn, verdict = only_turn(
        adk_native_run(REFLECTION, "I pushed main to acme/err-raise successfully.")
    )
    (push,) = turn.tool_calls
    assert push.name == "git_push" and push.arguments == ARGUMENTS
    assert result_is_error(push.result or "")
    assert verdict.outcome is Outcome.REJECT
    assert Kind.ERROR_REPORTED_AS_SUCCESS in {f.kind for f in verdict.findings}


def test_adk_successful_push_quoted_in_the_reply_passes() -> None:
    turn, verdict = only_turn(
        adk_native_run(SUCCESS, f"Pushed main to acme/err-raise: commit {COMMIT[:12]}.")
    )
    assert turn.agent == "release_engineer"
    assert verdict.outcome is Outcome.PASS, verdict.findings


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        pytest.param(json.dumps(REFLECTION), True, id="type-and-details-describe-an-error"),
        pytest.param(
            json.dumps({"ticket": 7, "error_type": "timeout", "count": 3}),
            False,
            id="an-error-type-alone-is-what-a-record-is-about",
        ),
        pytest.param(
            json.dumps({"error_type": "", "error_details": ""}), False, id="empty-descriptor"
        ),
    ],
)
def test_error_descriptor(result: str, failed: bool) -> None:
    assert result_is_error(result) is failed


def openinference_adk_run() -> list[SpanRecord]:
    """OpenInference's ADK spans of one run (trimmed to what turn assembly reads): the
    `Runner` invocation's CHAIN root, the agent's AGENT span, its LLM and TOOL spans."""
    session = {"session.id": "clean-f306d50b", "user.id": "user"}
    system = "You are a release engineer. Use git_push to push branches."
    tool_call = {
        "llm.output_messages.0.message.role": "model",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000001",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "git_push",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": json.dumps(
            {"repo": "acme/clean", "branch": "main"}
        ),
    }
    llm_common = {
        **session,
        "openinference.span.kind": "LLM",
        "llm.model_name": "openai/fake-gpt",
        "llm.provider": "google",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": system,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.text": (
            "Push branch main of acme/clean."
        ),
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
    }
    result = {"ok": True, "repo": "acme/clean", "branch": "main", "commit": COMMIT}
    return [
        record(
            "4f125f0dd9c822ed",
            "execute_tool git_push",
            {
                **session,
                "openinference.span.kind": "TOOL",
                "tool.name": "git_push",
                "tool.id": "call_00000001",
                "input.value": json.dumps({"repo": "acme/clean", "branch": "main"}),
                "output.value": _compact(
                    {"id": "call_00000001", "name": "git_push", "response": result}
                ),
            },
            parent="0b63c88c539e8f76",
            start=1_200,
            end=1_300,
            scope=OPENINFERENCE,
        ),
        record(
            "dc453120992f5f5a",
            "call_llm",
            {**llm_common, **tool_call},
            parent="0b63c88c539e8f76",
            start=1_000,
            end=1_100,
            scope=OPENINFERENCE,
        ),
        record(
            "60ad967caf7db656",
            "call_llm",
            {
                **llm_common,
                "llm.input_messages.2.message.role": "model",
                **{
                    k.replace("output_messages.0", "input_messages.2"): v
                    for k, v in tool_call.items()
                    if "tool_calls" in k
                },
                "llm.input_messages.3.message.role": "tool",
                "llm.input_messages.3.message.name": "git_push",
                "llm.input_messages.3.message.tool_call_id": "call_00000001",
                "llm.input_messages.3.message.content": json.dumps(result),
                "llm.output_messages.0.message.role": "model",
                "llm.output_messages.0.message.contents.0.message_content.text": (
                    f"Pushed main to acme/clean: commit {COMMIT[:12]}."
                ),
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
            },
            parent="0b63c88c539e8f76",
            start=1_400,
            end=1_500,
            scope=OPENINFERENCE,
        ),
        record(
            "0b63c88c539e8f76",
            "invoke_agent release_engineer",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "release_engineer",
                "gen_ai.conversation.id": "clean-f306d50b",
            },
            parent="e490704e6afbbc20",
            start=900,
            end=1_600,
            scope=NATIVE,
        ),
        record(
            "e490704e6afbbc20",
            "agent_run [release_engineer]",
            {**session, "agent.name": "release_engineer", "openinference.span.kind": "AGENT"},
            parent="5a410627bce52b3a",
            start=850,
            end=1_650,
            scope=OPENINFERENCE,
        ),
        record(
            "5a410627bce52b3a",
            "invocation [releases]",
            {**session, "openinference.span.kind": "CHAIN"},
            start=800,
            end=1_700,
            scope=OPENINFERENCE,
        ),
    ]


def test_openinference_adk_invocation_root_wraps_the_agents_run() -> None:
    turn, verdict = only_turn(openinference_adk_run())
    assert turn.agent == "release_engineer"
    assert turn.user_message == "Push branch main of acme/clean."
    assert [c.name for c in turn.tool_calls] == ["git_push"]
    assert verdict.outcome is Outcome.PASS, verdict.findings
