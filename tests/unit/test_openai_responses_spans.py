"""OpenLLMetry's OpenAI instrumentation on the Responses API, as a hand-written tool loop
makes it write: one `openai.response` span per call, each the root of its own trace.

Recorded from `opentelemetry-instrumentation-openai` 0.62.4 with `openai` 3.57.0
(`client.responses.create` and `client.responses.stream`). A `function_call` item is a
`tool_call` part named by its item id (`fc_…`) in the output of the call that made it and
in the input of the next, while the `function_call_output` that answers it is a
`tool_call_response` named by the call id (`call_…`). The spans go through a
`TurnAssembler` (fake clock) and the default validators.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from factledger.processors.normalize.base import LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanRecord

from .span_turns import judged

SCOPE = "opentelemetry.instrumentation.openai.v1"
SYSTEM = {
    "role": "system",
    "parts": [
        {"type": "text", "content": "You are a release engineer. Use git_push to push branches."}
    ],
}
TOOLS = [
    {
        "type": "function",
        "name": "git_push",
        "parameters": {
            "type": "object",
            "properties": {
                "repo": {"type": "string", "description": "owner/name"},
                "branch": {"type": "string"},
            },
            "required": ["repo", "branch"],
        },
    }
]
FAILED = '{"ok": false, "error": "push rejected: the remote has commits you do not have"}'
MAIN_SHA = "f3d682ef3c61502d215522bf2be40a838c5f1b70"
DEV_SHA = "391b99c18b48f3829bac4649e393b94fc56d9533"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def called(item_id: str, branch: str, repo: str) -> dict[str, Any]:
    arguments = {"repo": repo, "branch": branch}
    part = {"type": "tool_call", "name": "git_push", "id": item_id, "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def answered(call_id: str, response: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": response}
    return {"role": "tool", "parts": [part]}


def response_span(
    trace_id: str,
    span_id: str,
    start: int,
    inputs: Sequence[dict[str, Any]],
    output: dict[str, Any],
    *,
    streaming: bool = False,
) -> SpanRecord:
    finish = "tool_call" if output["parts"][0]["type"] == "tool_call" else "stop"
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        name="openai.response",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 40_000_000,
        attributes={
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "fake-gpt",
            "gen_ai.is_streaming": streaming,
            "gen_ai.operation.name": "chat",
            "gen_ai.response.id": f"resp_{span_id[:8]}",
            "gen_ai.response.model": "fake-gpt",
            "gen_ai.usage.input_tokens": 42,
            "gen_ai.usage.output_tokens": 17,
            "gen_ai.usage.total_tokens": 59,
            "gen_ai.usage.cache_read.input_tokens": 0,
            "gen_ai.usage.reasoning_tokens": 0,
            "gen_ai.response.finish_reasons": json.dumps([finish]),
            "gen_ai.input.messages": json.dumps([SYSTEM, *inputs]),
            "gen_ai.output.messages": json.dumps([{**output, "finish_reason": finish}]),
            "gen_ai.tool.definitions": json.dumps(TOOLS),
        },
        resource_attributes={"service.name": "release-bot"},
        scope_name=SCOPE,
    )


def failed_push() -> list[SpanRecord]:
    """`responses.create` twice: the push call, then the answer after its failed output."""
    ask = user("Push branch main of acme/err-object.")
    push = called("fc_00000009", "main", "acme/err-object")
    return [
        response_span("dc418d0e533b925bbe3fe0e20105e65d", "cd855e53cb14c969", 1_000, [ask], push),
        response_span(
            "9ae83cab5c14e3886ac3a19f78dc28c0",
            "9d351ad01847e05a",
            2_000_000_000,
            [ask, push, answered("call_00000009", FAILED)],
            said("I pushed main to acme/err-object successfully."),
        ),
    ]


def second_request() -> list[SpanRecord]:
    """`responses.stream`, the second request of one conversation: its history holds the
    first request's call (named by item id, answered by call id) and its answer."""
    first = [
        user("Push branch main of acme/session."),
        called("fc_00000017", "main", "acme/session"),
        answered("call_00000017", json.dumps({"ok": True, "commit": MAIN_SHA})),
        said("Pushed main to acme/session: commit f3d682ef3c61."),
    ]
    ask = user("Now push branch dev of acme/session as well.")
    push = called("fc_00000021", "dev", "acme/session")
    reply = (
        "Pushed dev to acme/session: commit 391b99c18b48. "
        f"The earlier push is still commit {MAIN_SHA}."
    )
    return [
        response_span(
            "b40da4cdb8fc997152fce7bff28836c6",
            "5b873756903e82e9",
            1_000,
            [*first, ask],
            push,
            streaming=True,
        ),
        response_span(
            "5ab643ad7d64769c68da1834dc06f8f5",
            "fa79562959e52c61",
            2_000_000_000,
            [
                *first,
                ask,
                push,
                answered("call_00000021", json.dumps({"ok": True, "commit": DEV_SHA})),
            ],
            said(reply),
            streaming=True,
        ),
    ]


def test_a_call_named_by_its_item_id_keeps_it_beside_the_call_id():
    step = normalize(failed_push()[1])
    assert isinstance(step, LlmStep)
    (part,) = [p for m in step.input_messages for p in m.tool_calls]
    assert (part.call_id, part.item_id) == ("call_00000009", "fc_00000009")


@pytest.mark.parametrize("order", ["as-sent", "answer-first"])
def test_per_call_traces_of_a_failed_push_are_one_turn_that_is_rejected(order):
    spans = failed_push()
    turns = judged(spans if order == "as-sent" else spans[::-1])
    assert len(turns) == 1, [t.reply for t, _ in turns]
    turn, verdict = turns[0]
    assert turn.reply == "I pushed main to acme/err-object successfully."
    (push,) = turn.tool_calls  # the fc_ item id of the first output and the call_ id: one call
    assert (push.name, push.call_id, push.arguments) == (
        "git_push",
        "call_00000009",
        {"repo": "acme/err-object", "branch": "main"},
    )
    assert push.result == FAILED
    assert verdict.outcome == "reject"
    assert "error_reported_as_success" in verdict.kinds, verdict.findings


def test_second_request_of_a_streamed_conversation_is_one_turn_with_its_own_push():
    turns = judged(second_request())
    assert len(turns) == 1, [t.reply for t, _ in turns]
    turn, verdict = turns[0]
    assert turn.reply.startswith("Pushed dev to acme/session")
    (push,) = turn.tool_calls
    assert (push.call_id, push.arguments) == (
        "call_00000021",
        {"repo": "acme/session", "branch": "dev"},
    )
    assert DEV_SHA in (push.result or "")
    assert [c.call_id for c in turn.history_tool_calls] == ["call_00000017"]
    assert verdict.outcome == "pass", verdict.findings
    assert not verdict.findings
