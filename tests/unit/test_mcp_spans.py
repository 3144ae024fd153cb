"""An MCP server's tool called by the OpenAI Agents SDK, as the instrumentations really
record it.

The attributes are literal from a run of `openai-agents` 0.24 (`MCPServerStdio`) calling
the `git_push` tool of an `mcp` 2.3 `MCPServer` over stdio, with
`openinference-instrumentation-openai-agents` 2.6 and `openinference-instrumentation-mcp`
2.0.13 in both processes, and both exporting (the LLM calls' raw `input.value`,
`output.value` and `llm.invocation_parameters` left out). The tool raised `ToolError`.

What they pin: the agent's TOOL span has the arguments and the result, which the SDK
hands over as a text block (`{"type": "text", "text": ...}`) and with an OK status even
for a result flagged `isError`. Below it the MCP SDK's client span `MCP send tools/call
git_push` (`mcp.method.name`, `jsonrpc.request.id`, read by no reader), and below that
the server's own span `tools/call git_push` (a SERVER span in the same trace, through the
trace context in the request's `_meta`), with `gen_ai.operation.name = execute_tool`,
`gen_ai.tool.name`, no arguments, no result, and `error.type = tool_error` with an error
status when the result was flagged `isError`. The two tool spans are one call.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from factledger.processors.evidence.outcomes import call_failed
from factledger.processors.spans import SpanRecord

from .span_turns import judged

TRACE = "8198e0bdbe2e7708140d683c39b9945b"
AGENTS = "openinference.instrumentation.openai_agents"
SERVICE = "mcp.openai-agents.openinference"
FAILURE = "push rejected: the remote has commits you do not have; nothing was pushed"
ARGS = '{"repo": "acme/err-type", "branch": "main"}'
SAID = "Error executing tool git_push: " + FAILURE
REPLY = "I pushed main to acme/err-type successfully."
DESCRIPTION = (
    "Push a branch of a repository to its remote.\n\n        Args:\n"
    "            repo: The repository, as owner/name.\n"
    "            branch: The branch to push.\n        "
)
PARAMETERS = json.dumps(
    {
        "type": "object",
        "properties": {
            "repo": {"title": "Repo", "type": "string"},
            "branch": {"title": "Branch", "type": "string"},
        },
        "required": ["repo", "branch"],
        "title": "git_pushArguments",
    }
)


def _span(
    span_id: str,
    parent: str,
    name: str,
    start: int,
    end: int,
    scope: str,
    *,
    kind: int,
    status: int,
    attributes: dict[str, Any],
) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        kind=kind,
        start_time_unix_nano=1_800_000_000_000_000_000 + start * 1_000,
        end_time_unix_nano=1_800_000_000_000_000_000 + end * 1_000,
        status_code=status,
        attributes=attributes,
        resource_attributes={"service.name": SERVICE},
        scope_name=scope,
    )


def _run() -> list[SpanRecord]:
    """The spans of the run, in the order they started."""
    return [
        _span(
            "0ad712c0d1129ce0",
            "",
            "Agent workflow",
            0,
            108973,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={"openinference.span.kind": "AGENT"},
        ),
        _span(
            "19083f09ed40ddba",
            "0ad712c0d1129ce0",
            "Agent workflow",
            133,
            108918,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={"openinference.span.kind": "CHAIN"},
        ),
        _span(
            "b3dcc1822aeeee9f",
            "19083f09ed40ddba",
            "release_engineer",
            1261,
            108822,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={
                "graph.node.id": "release_engineer",
                "agent.name": "release_engineer",
                "openinference.span.kind": "AGENT",
            },
        ),
        _span(
            "ab067b3f4276728b",
            "b3dcc1822aeeee9f",
            "turn",
            1434,
            56665,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={"openinference.span.kind": "CHAIN"},
        ),
        _span(
            "d9a186e36b4bd8dc",
            "ab067b3f4276728b",
            "mcp_tools",
            1697,
            1811,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={
                "output.value": '["git_push"]',
                "output.mime_type": "application/json",
                "openinference.span.kind": "CHAIN",
            },
        ),
        _span(
            "e4087652cd01203f",
            "ab067b3f4276728b",
            "response",
            2626,
            50335,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={
                "llm.system": "openai",
                "output.mime_type": "application/json",
                "llm.token_count.completion": 17,
                "llm.token_count.prompt": 42,
                "llm.token_count.total": 59,
                "llm.token_count.prompt_details.cache_read": 0,
                "llm.token_count.completion_details.reasoning": 0,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000005",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": ARGS,
                "llm.model_name": "fake-gpt",
                "llm.finish_reason": "stop",
                "input.mime_type": "application/json",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Push branch main of acme/err-type.",
                "openinference.span.kind": "LLM",
            },
        ),
        _span(
            "a138f07a36aeff12",
            "ab067b3f4276728b",
            "git_push",
            51530,
            56300,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={
                "tool.name": "git_push",
                "input.value": ARGS,
                "input.mime_type": "application/json",
                "output.value": json.dumps({"type": "text", "text": SAID}),
                "output.mime_type": "application/json",
                "tool.description": DESCRIPTION,
                "tool.parameters": PARAMETERS,
                "openinference.span.kind": "TOOL",
            },
        ),
        _span(
            "b4b69fe1b0eb33f8",
            "a138f07a36aeff12",
            "MCP send tools/call git_push",
            52463,
            55793,
            "mcp-python-sdk",
            kind=3,
            status=0,
            attributes={"mcp.method.name": "tools/call", "jsonrpc.request.id": "4"},
        ),
        _span(
            "69594a0e2ac894c2",
            "b4b69fe1b0eb33f8",
            "tools/call git_push",
            53788,
            54607,
            "mcp-python-sdk",
            kind=2,
            status=2,
            attributes={
                "mcp.method.name": "tools/call",
                "mcp.protocol.version": "2026-07-28",
                "jsonrpc.request.id": "4",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "git_push",
                "error.type": "tool_error",
            },
        ),
        _span(
            "9b5f16cd797cb647",
            "b3dcc1822aeeee9f",
            "turn",
            57604,
            107620,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={"openinference.span.kind": "CHAIN"},
        ),
        _span(
            "c13262816da4f9c8",
            "9b5f16cd797cb647",
            "mcp_tools",
            57806,
            57902,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={
                "output.value": '["git_push"]',
                "output.mime_type": "application/json",
                "openinference.span.kind": "CHAIN",
            },
        ),
        _span(
            "47ad0a2e8832295c",
            "9b5f16cd797cb647",
            "response",
            58470,
            106400,
            "openinference.instrumentation.openai_agents",
            kind=1,
            status=1,
            attributes={
                "llm.system": "openai",
                "output.mime_type": "application/json",
                "llm.token_count.completion": 17,
                "llm.token_count.prompt": 42,
                "llm.token_count.total": 59,
                "llm.token_count.prompt_details.cache_read": 0,
                "llm.token_count.completion_details.reasoning": 0,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.contents.0.message_content.text": REPLY,
                "llm.output_messages.0.message.content": REPLY,
                "llm.model_name": "fake-gpt",
                "llm.finish_reason": "stop",
                "input.mime_type": "application/json",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Push branch main of acme/err-type.",
                "llm.input_messages.2.message.role": "assistant",
                "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_00000005",
                "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": ARGS,
                "llm.input_messages.3.message.role": "tool",
                "llm.input_messages.3.message.tool_call_id": "call_00000005",
                "llm.input_messages.3.message.content": json.dumps(
                    [{"type": "input_text", "text": SAID}]
                ),
                "openinference.span.kind": "LLM",
            },
        ),
    ]


def _named(spans: list[SpanRecord], name: str) -> SpanRecord:
    return next(s for s in spans if s.name == name)


def _only_push(spans: list[SpanRecord]) -> Any:
    turns = judged(spans)
    assert len(turns) == 1, [t.reply for t, _ in turns]
    turn, verdict = turns[0]
    assert [c.name for c in turn.tool_calls] == ["git_push"], turn.tool_calls
    return turn, turn.tool_calls[0], verdict


def test_the_client_and_the_server_span_of_one_mcp_call_are_one_failed_call():
    turn, push, verdict = _only_push(_run())
    assert push.arguments == {"repo": "acme/err-type", "branch": "main"}
    assert FAILURE in str(push.result)
    assert call_failed(push)
    assert turn.agent == "release_engineer"
    assert verdict.outcome == "reject"
    assert "error_reported_as_success" in verdict.kinds


def test_the_client_span_between_them_may_arrive_before_any_span_its_reader_reads():
    spans = _run()
    link = _named(spans, "MCP send tools/call git_push")
    server = _named(spans, "tools/call git_push")
    rest = [s for s in spans if s is not link and s is not server]
    # The MCP SDK's spans end (and are exported) before the agent SDK's around them.
    _, push, _ = _only_push([link, server, *reversed(rest)])
    assert push.arguments == {"repo": "acme/err-type", "branch": "main"}
    assert call_failed(push)


def test_a_returned_error_object_is_read_from_the_text_block_the_sdk_hands_over():
    spans = _run()
    tool = _named(spans, "git_push")
    server = _named(spans, "tools/call git_push")
    text = json.dumps({"ok": False, "error": FAILURE}, indent=2)
    output = json.dumps({"type": "text", "text": text})
    spans[spans.index(tool)] = replace(tool, attributes={**tool.attributes, "output.value": output})
    # A returned object is no `isError` result: the server's span says nothing failed.
    attributes = {k: v for k, v in server.attributes.items() if k != "error.type"}
    spans[spans.index(server)] = replace(server, status_code=0, attributes=attributes)
    _, push, verdict = _only_push(spans)
    assert json.loads(str(push.result)) == {"ok": False, "error": FAILURE}
    assert call_failed(push)
    assert verdict.outcome == "reject"


def test_a_server_span_of_another_tool_is_a_call_of_its_own():
    spans = _run()
    server = _named(spans, "tools/call git_push")
    other = {**server.attributes, "gen_ai.tool.name": "git_fetch"}
    spans[spans.index(server)] = replace(server, name="tools/call git_fetch", attributes=other)
    turn, _ = judged(spans)[0]
    assert sorted(c.name for c in turn.tool_calls) == ["git_fetch", "git_push"]


def test_without_the_servers_spans_the_isError_text_alone_fails_the_call():
    spans = [s for s in _run() if s.name != "tools/call git_push"]
    _, push, verdict = _only_push(spans)
    assert push.result == SAID
    assert push.error is False  # the client's span is OK: only its text says it failed
    assert call_failed(push)
    assert verdict.outcome == "reject"


def test_a_server_exporting_as_a_service_of_its_own_still_records_the_same_call():
    spans = _run()
    server = _named(spans, "tools/call git_push")
    own = replace(server, resource_attributes={"service.name": "git-mcp-server"})
    spans[spans.index(server)] = own
    turn, push, _ = _only_push(spans)
    assert turn.service == SERVICE
    assert call_failed(push)
