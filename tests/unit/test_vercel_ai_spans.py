"""A tool that threw, as the AI SDK 7's two OpenTelemetry integrations record it.

Literal from `ai` 7.0.173 with `@ai-sdk/otel` 1.0.173 running `generateText` with a
`git_push` tool whose `execute` throws: `LegacyOpenTelemetry` writes an `ai.toolCall` span,
`OpenTelemetry` an `execute_tool` span. Neither records a result: the span has an error
status and an `exception` event, whose message is what the model was handed (the stack
trace is cut short here).
"""

from __future__ import annotations

import pytest

from factledger.processors.normalize.base import ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanEvent, SpanRecord

FAILURE = "push rejected: the remote has commits you do not have; nothing was pushed"
ARGUMENTS = '{"repo":"acme/err-raise","branch":"main"}'
RAISED = SpanEvent(
    "exception",
    1_796_125_079_700_000_000,
    {
        "exception.type": "PushRejected",
        "exception.message": FAILURE,
        "exception.stacktrace": f"PushRejected: {FAILURE}\n    at push (file:///...)",
    },
)
LEGACY = {
    "operation.name": "ai.toolCall release_engineer",
    "ai.operationId": "ai.toolCall",
    "ai.telemetry.functionId": "release_engineer",
    "ai.toolCall.name": "git_push",
    "ai.toolCall.id": "call_00000001",
    "ai.toolCall.args": ARGUMENTS,
}
GENAI = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "git_push",
    "gen_ai.tool.call.id": "call_00000001",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.call.arguments": ARGUMENTS,
    "gen_ai.execute_tool.duration": 0.000167279,
}


@pytest.mark.parametrize(
    ("name", "attributes"),
    [("ai.toolCall", LEGACY), ("execute_tool git_push", GENAI)],
    ids=["legacy", "genai"],
)
def test_a_tool_that_threw_has_its_error_as_the_result(
    name: str, attributes: dict[str, object]
) -> None:
    span = SpanRecord(
        trace_id="4f1c2e7a9b3d5f6081a2b3c4d5e6f708",
        span_id="b62a2f3fe1a2ae1b",
        name=name,
        parent_span_id="ce5fda6b4ed9f5c2",
        start_time_unix_nano=1_796_125_079_699_000_000,
        end_time_unix_nano=1_796_125_079_701_000_000,
        status_code=2,
        status_message=FAILURE,
        attributes=attributes,
        events=(RAISED,),
        scope_name="ai" if name == "ai.toolCall" else "gen_ai",
    )
    execution = normalize(span)
    assert isinstance(execution, ToolExecution)
    assert (execution.name, execution.call_id) == ("git_push", "call_00000001")
    assert (execution.error, execution.result) == (True, FAILURE)
