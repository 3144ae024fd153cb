"""A tool loop on `litellm.completion` as LiteLLM's own OTel callback really records it.

The attributes are literal from runs of LiteLLM 1.110.2 with `litellm.callbacks =
["otel"]` around the loop of LiteLLM's function-calling docs (the `metadata.*` and
`hidden_params` noise left out), read through the real normalizer, a `TurnAssembler` and
the default validators.

What they pin: every `litellm.completion` is a trace of its own (`litellm_request`, with
a `raw_gen_ai_request` child that no convention reads); a tool-calling answer's
`gen_ai.output.messages` is an assistant message with no parts, the call only in
`gen_ai.completion.{k}.function_call.{name,arguments}`, without its id; and the next
call's history writes that assistant message as `{"role": "assistant", "parts": []}`,
its call known only by the `tool_call_id` of the result after it.
"""

from __future__ import annotations

import json
from typing import Any

from factledger.processors.normalize.base import LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanRecord

from .span_turns import judged, only_turn

SYSTEM = "You are a release engineer. Use git_push to push branches."
RESOURCE = {
    "telemetry.sdk.language": "python",
    "telemetry.sdk.name": "opentelemetry",
    "telemetry.sdk.version": "1.45.2",
    "service.name": "litellm-loop.otel",
    "deployment.environment": "production",
    "model_id": "litellm-loop.otel",
}
FAB_COMMIT = "582760a5fa435391b2f665595bf2d0f02112bc92"
MAIN_COMMIT = "f3d682ef3c61502d215522bf2be40a838c5f1b70"
DEV_COMMIT = "391b99c18b48f3829bac4649e393b94fc56d9533"


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _result(call_id: str, result: dict[str, Any]) -> dict[str, Any]:
    return {**_text("tool", json.dumps(result)), "tool_call_id": call_id}


CALLED = {"role": "assistant", "parts": []}
"""How the callback writes an assistant message of the history that called a tool."""


def _request(
    trace: str,
    span_id: str,
    start: int,
    history: list[dict[str, Any]],
    *,
    call: dict[str, str] | None = None,
    reply: str = "",
) -> SpanRecord:
    """A `litellm_request` span: a root of its own trace, attributes as recorded."""
    attributes: dict[str, Any] = {
        "litellm.provider.model": "openai/fake-gpt",
        "litellm.cache_hit": False,
        "gen_ai.request.model": "fake-gpt",
        "llm.request.type": "completion",
        "gen_ai.system": "openai",
        "llm.is_streaming": "False",
        "gen_ai.response.id": f"chatcmpl-{span_id[-2:]}",
        "gen_ai.response.model": "fake-gpt",
        "gen_ai.usage.total_tokens": 59,
        "gen_ai.usage.output_tokens": 17,
        "gen_ai.usage.input_tokens": 42,
        "llm.request.functions.0.name": "git_push",
        "llm.request.functions.0.description": "Push a branch of a repository to its remote.",
        "llm.request.functions.0.parameters": json.dumps(
            {
                "type": "object",
                "properties": {
                    "repo": {"type": "string", "description": "owner/name"},
                    "branch": {"type": "string"},
                },
                "required": ["repo", "branch"],
            }
        ),
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.operation.name": "chat",
    }
    if call is not None:
        attributes["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]
        )
        attributes["gen_ai.response.finish_reasons"] = '["tool_calls"]'
        attributes["gen_ai.completion.0.function_call.arguments"] = json.dumps(call)
        attributes["gen_ai.completion.0.function_call.name"] = "git_push"
    else:
        attributes["gen_ai.output.messages"] = json.dumps(
            [{**_text("assistant", reply), "finish_reason": "stop"}]
        )
        attributes["gen_ai.response.finish_reasons"] = '["stop"]'
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name="litellm_request",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 50_000_000,
        status_code=1,
        attributes=attributes,
        resource_attributes=RESOURCE,
        scope_name="litellm",
    )


def _raw(trace: str, span_id: str, parent: str, start: int) -> SpanRecord:
    """Its `raw_gen_ai_request` child: the provider's wire payload as Python reprs."""
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name="raw_gen_ai_request",
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=start + 50_000_000,
        status_code=1,
        attributes={"llm.openai.model": "fake-gpt", "llm.openai.object": "chat.completion"},
        resource_attributes=RESOURCE,
        scope_name="litellm",
    )


FAB_ASKED = [_text("system", SYSTEM), _text("user", "Push branch main of acme/fab.")]
FAB_PUSHED_COMMIT = "d0ffd31a3c9f775b87ad1568fdef2947c6334a74"
FAB_PUSHED = {
    "ok": True,
    "repo": "acme/fab",
    "branch": "main",
    "commit": FAB_PUSHED_COMMIT,
}
FAB_REPLY = f"Pushed main to acme/fab. The new head is commit {FAB_COMMIT}."
FAB = [
    _request(
        "5a5c20ccfcb9e7518efa39e346a3b05a",
        "fc062662679f2cc5",
        1_796_123_635_175_583_000,
        FAB_ASKED,
        call={"repo": "acme/fab", "branch": "main"},
    ),
    _raw(
        "5a5c20ccfcb9e7518efa39e346a3b05a",
        "8f71dd110c2e39e6",
        "fc062662679f2cc5",
        1_796_123_635_175_583_000,
    ),
    _request(
        "3a2ad86a1ef44f9d25b69d579f2dfd34",
        "b756fa054bebd9ae",
        1_796_123_635_345_225_000,
        [*FAB_ASKED, CALLED, _result("call_00000010", FAB_PUSHED)],
        reply=FAB_REPLY,
    ),
]


def test_a_tool_calling_answer_is_read_from_the_deprecated_completion_attributes():
    step = normalize(FAB[0])
    assert isinstance(step, LlmStep)
    [message] = step.output_messages
    [call] = message.tool_calls
    assert (call.call_id, call.name) == ("", "git_push")
    assert json.loads(call.arguments) == {"repo": "acme/fab", "branch": "main"}


def test_the_emptied_assistant_message_of_the_history_holds_the_call_its_result_answers():
    step = normalize(FAB[2])
    assert isinstance(step, LlmStep)
    _system, _user, called, result = step.input_messages
    assert called.role == "assistant"
    assert [(p.call_id, p.name) for p in called.tool_calls] == [("call_00000010", "")]
    assert result.role == "tool" and result.tool_call_id == "call_00000010"


def test_the_two_traces_of_one_request_are_one_turn_and_the_fabricated_commit_is_found():
    turn, verdict = only_turn(FAB)
    assert turn.user_message == "Push branch main of acme/fab."
    assert turn.reply == FAB_REPLY
    [push] = turn.tool_calls
    assert (push.name, push.call_id) == ("git_push", "call_00000010")
    assert push.arguments == {"repo": "acme/fab", "branch": "main"}
    assert push.result is not None and FAB_PUSHED_COMMIT in push.result
    assert not push.error
    assert turn.model == "fake-gpt" and turn.agent == ""
    assert "fabricated_identifier" in verdict.kinds


def test_a_second_request_of_a_conversation_is_its_own_turn_citing_the_earlier_push():
    first = [_text("system", SYSTEM), _text("user", "Push branch main of acme/session.")]
    main = {"ok": True, "repo": "acme/session", "branch": "main", "commit": MAIN_COMMIT}
    dev = {"ok": True, "repo": "acme/session", "branch": "dev", "commit": DEV_COMMIT}
    answered = f"Pushed main to acme/session: commit {MAIN_COMMIT[:12]}."
    later = [
        *first,
        CALLED,
        _result("call_00000004", main),
        _text("assistant", answered),
        _text("user", "Now push branch dev of acme/session as well."),
    ]
    reply = (
        f"Pushed dev to acme/session: commit {DEV_COMMIT[:12]}. "
        f"The earlier push is still commit {MAIN_COMMIT}."
    )
    spans = [
        _request(
            "25110c00000000000000000000000001",
            "5be02b39f614ab3c",
            1_796_123_308_848_777_000,
            first,
            call={"repo": "acme/session", "branch": "main"},
        ),
        _request(
            "3a7e3400000000000000000000000002",
            "58b2bb130c279213",
            1_796_123_308_907_012_000,
            [*first, CALLED, _result("call_00000004", main)],
            reply=answered,
        ),
        _request(
            "8fda3300000000000000000000000003",
            "47bc4491f77f3eb4",
            1_796_123_308_966_848_000,
            later,
            call={"repo": "acme/session", "branch": "dev"},
        ),
        _request(
            "30fb9700000000000000000000000004",
            "6dd67de612848f08",
            1_796_123_309_018_874_000,
            [*later, CALLED, _result("call_00000007", dev)],
            reply=reply,
        ),
    ]
    turns = judged(spans)
    assert [t.user_message for t, _ in turns] == [
        "Push branch main of acme/session.",
        "Now push branch dev of acme/session as well.",
    ]
    (_, first_verdict), (second, second_verdict) = turns
    assert [(c.name, c.call_id, c.arguments) for c in second.tool_calls] == [
        ("git_push", "call_00000007", {"repo": "acme/session", "branch": "dev"})
    ]
    assert second.reply == reply
    assert first_verdict.outcome.value == "pass"
    assert second_verdict.outcome.value == "pass", second_verdict.findings
