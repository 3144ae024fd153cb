"""LangChain and LangGraph agents as their instrumentations really record them.

The attributes are literal from runs of LangChain 1.5 (`create_agent`) and LangGraph 1.2
(`create_react_agent`) with `openinference-instrumentation-langchain` 0.1.80 and
`opentelemetry-instrumentation-langchain` 0.62.4 (trimmed to the attributes the reading
uses), read through the real normalizer, a `TurnAssembler` and the default validators.
"""

from __future__ import annotations

import json
from typing import Any

from factledger.processors.spans import SpanRecord

from .span_turns import only_turn, record

GIT_SCHEMA = json.dumps(
    {
        "type": "function",
        "function": {
            "name": "git_push",
            "description": "Push `branch` of the repository `repo` (owner/name) to its remote.",
            "parameters": {
                "properties": {"repo": {"type": "string"}, "branch": {"type": "string"}},
                "required": ["repo", "branch"],
                "type": "object",
            },
        },
    }
)
ENGINEER_SCHEMA = json.dumps(
    {
        "type": "function",
        "function": {
            "name": "release_engineer",
            "description": "Ask the release engineer, who can push branches, to carry out "
            "`request`.",
            "parameters": {
                "properties": {"request": {"type": "string"}},
                "required": ["request"],
                "type": "object",
            },
        },
    }
)
USER = "Push branch main of acme/team-clean."
COMMIT = "a523f6f6ebb28186c7ebef5466b89d08b6770c63"
PUSHED = json.dumps({"ok": True, "repo": "acme/team-clean", "branch": "main", "commit": COMMIT})
WORKER_REPORT = f"Pushed main to acme/team-clean: commit {COMMIT}."


def _llm(
    span_id: str,
    parent: str,
    start: int,
    system: str,
    schema: str,
    history: dict[str, Any],
    output: dict[str, Any],
) -> SpanRecord:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "fake-gpt",
        "llm.provider": "openai",
        "llm.system": "openai",
        "session.id": "team-clean",
        "llm.tools.0.tool.json_schema": schema,
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": system,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": USER,
        **history,
        **output,
    }
    return record(span_id, "ChatOpenAI", attributes, parent=parent, start=start, end=start + 90)


def _calls(prefix: str, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        f"{prefix}.message.role": "assistant",
        f"{prefix}.message.tool_calls.0.tool_call.id": call_id,
        f"{prefix}.message.tool_calls.0.tool_call.function.name": name,
        f"{prefix}.message.tool_calls.0.tool_call.function.arguments": arguments,
    }


def _answered(call_id: str, name: str, arguments: str, result: str) -> dict[str, Any]:
    return {
        **_calls("llm.input_messages.2", call_id, name, arguments),
        "llm.input_messages.3.message.role": "tool",
        "llm.input_messages.3.message.content": result,
        "llm.input_messages.3.message.tool_call_id": call_id,
        "llm.input_messages.3.message.name": name,
    }


def _tool_message(content: str, name: str, call_id: str) -> str:
    data: dict[str, Any] = {
        "content": content,
        "additional_kwargs": {},
        "response_metadata": {},
        "type": "tool",
        "name": name,
        "id": None,
        "tool_call_id": call_id,
        "artifact": None,
        "status": "success",
    }
    return json.dumps({"type": "tool", "data": data})


def sub_agent_as_tool(worker_schema: str = GIT_SCHEMA) -> list[SpanRecord]:
    """create_agent's `release_lead` calling the `release_engineer` agent through a tool:
    the worker's model calls and push run inside the lead's tool span, in one trace."""
    lead_system = "You lead releases. Ask the release engineer to do any push."
    worker_system = "You are a release engineer. Use git_push to push branches."
    push_arguments = '{"repo": "acme/team-clean", "branch": "main"}'
    delegate_arguments = json.dumps({"request": USER})
    return [
        record(
            "3f8c8fb30f4979c6",
            "release_lead",
            {
                "openinference.span.kind": "CHAIN",
                "session.id": "team-clean",
                "input.value": json.dumps({"messages": [{"role": "user", "content": USER}]}),
                "input.mime_type": "application/json",
            },
            start=0,
            end=1_000,
        ),
        _llm(
            "0949a4004771b45c",
            "3f8c8fb30f4979c6",
            10,
            lead_system,
            ENGINEER_SCHEMA,
            {},
            _calls(
                "llm.output_messages.0", "call_00000007", "release_engineer", delegate_arguments
            ),
        ),
        record(
            "3190470001819252",
            "release_engineer",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "release_engineer",
                "input.value": USER,
                "output.value": _tool_message(WORKER_REPORT, "release_engineer", "call_00000007"),
                "output.mime_type": "application/json",
            },
            parent="3f8c8fb30f4979c6",
            start=200,
            end=700,
        ),
        _llm(
            "479e2f4becef14ac",
            "3190470001819252",
            210,
            worker_system,
            worker_schema,
            {},
            _calls("llm.output_messages.0", "call_00000009", "git_push", push_arguments),
        ),
        record(
            "d6b2173b8d145f75",
            "git_push",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "git_push",
                "input.value": push_arguments,
                "input.mime_type": "application/json",
                "output.value": _tool_message(PUSHED, "git_push", "call_00000009"),
                "output.mime_type": "application/json",
            },
            parent="3190470001819252",
            start=400,
            end=410,
        ),
        _llm(
            "5d3a74b753634e93",
            "3190470001819252",
            500,
            worker_system,
            worker_schema,
            _answered("call_00000009", "git_push", push_arguments, PUSHED),
            {
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": WORKER_REPORT,
            },
        ),
        _llm(
            "a57dfcbb5e401d42",
            "3f8c8fb30f4979c6",
            800,
            lead_system,
            ENGINEER_SCHEMA,
            _answered("call_00000007", "release_engineer", delegate_arguments, WORKER_REPORT),
            {
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Pushed main to acme/team-clean: "
                "commit a523f6f6ebb2.",
            },
        ),
    ]


def test_sub_agent_push_was_offered_to_the_sub_agent_and_is_evidence_for_the_lead():
    turn, verdict = only_turn(sub_agent_as_tool())
    assert turn.agent == "release_lead"
    assert turn.reply == "Pushed main to acme/team-clean: commit a523f6f6ebb2."
    pushes = [c for c in turn.tool_calls if c.name == "git_push"]
    assert len(pushes) == 1 and COMMIT in (pushes[0].result or "") and not pushes[0].error
    assert {t.name for t in turn.tools or ()} == {"release_engineer", "git_push"}
    assert verdict.outcome == "pass" and not verdict.findings, verdict.findings


def test_a_tool_no_call_of_the_turn_was_offered_is_still_unregistered():
    other = GIT_SCHEMA.replace('"git_push"', '"git_fetch"')
    _, verdict = only_turn(sub_agent_as_tool(worker_schema=other))
    assert "unregistered_tool_call" in verdict.kinds


# --- langgraph-supervisor, recorded by OpenLLMetry (GenAI message attributes) -----------

HANDBACK_ID = "f141b986-7dad-47ae-a260-747fddc46569"
"""langgraph-supervisor's own id for the hand-back call it writes into the history."""
LEAD_SYSTEM = "You lead releases. Ask the release engineer to do any push."
WORKER_SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_REPLY = "Pushed main to acme/team-clean: commit a523f6f6ebb2."
WORKFLOW = "4db4637b2349817a"


def _said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _called(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def _answered_part(call_id: str, response: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": response}
    return {"role": "tool", "parts": [part]}


def _chat(
    span_id: str,
    start: int,
    system: str,
    tool: dict[str, Any],
    inputs: list[dict[str, Any]],
    output: dict[str, Any],
) -> SpanRecord:
    finish = "tool_call" if output["parts"][0]["type"] == "tool_call" else "stop"
    attributes = {
        "traceloop.workflow.name": "release_lead",
        "gen_ai.provider.name": "openai",
        "gen_ai.operation.name": "chat",
        "gen_ai.tool.definitions": json.dumps([tool]),
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.response.model": "fake-gpt",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": system}]),
        "gen_ai.input.messages": json.dumps([_said("user", USER), *inputs]),
        "gen_ai.output.messages": json.dumps([{**output, "finish_reason": finish}]),
    }
    return record(
        span_id, "ChatOpenAI.chat", attributes, parent=WORKFLOW, start=start, end=start + 90
    )


def supervisor_team() -> list[SpanRecord]:
    """`create_supervisor([release_engineer], supervisor_name="release_lead")`: the lead
    hands off, the worker pushes and answers, the supervisor writes a hand-back call into
    the history and the lead answers. The worker is handed the request's very text."""
    transfer = {
        "name": "transfer_to_release_engineer",
        "description": "Ask agent 'release_engineer' for help",
        "parameters": {"properties": {}, "type": "object"},
    }
    git = json.loads(GIT_SCHEMA)["function"]
    push = {"repo": "acme/team-clean", "branch": "main"}
    handed = [
        _called("call_00000001", "transfer_to_release_engineer", {}),
        _answered_part("call_00000001", "Successfully transferred to release_engineer"),
    ]
    pushed = [_called("call_00000003", "git_push", push), _answered_part("call_00000003", PUSHED)]
    back = {
        "role": "assistant",
        "parts": [
            {"type": "text", "content": "Transferring back to release_lead"},
            {
                "type": "tool_call",
                "id": HANDBACK_ID,
                "name": "transfer_back_to_release_lead",
                "arguments": {},
            },
        ],
    }
    tool_input = {
        "input_str": "{'repo': 'acme/team-clean', 'branch': 'main'}",
        "tags": ["seq:step:1"],
        "metadata": {"thread_id": "team-clean", "ls_integration": "langgraph"},
        "inputs": push,
        "kwargs": {"color": "green", "name": None, "tool_call_id": "call_00000003"},
    }
    tool_output = {
        "output": {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {
                "content": PUSHED,
                "type": "tool",
                "name": "git_push",
                "tool_call_id": "call_00000003",
                "status": "success",
            },
        },
        "kwargs": {"tags": ["seq:step:1"], "color": "green", "name": "git_push"},
    }
    return [
        record(
            WORKFLOW,
            "release_lead.workflow",
            {
                "traceloop.workflow.name": "release_lead",
                "traceloop.span.kind": "workflow",
                "traceloop.entity.name": "release_lead",
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "release_lead",
                "traceloop.entity.input": json.dumps(
                    {
                        "inputs": {"messages": [{"role": "user", "content": USER}]},
                        "tags": [],
                        "metadata": {"thread_id": "team-clean", "ls_integration": "langgraph"},
                        "kwargs": {"name": "release_lead"},
                    }
                ),
            },
            start=0,
            end=1_000,
        ),
        _chat(
            "84e727dcc7c7c266",
            10,
            LEAD_SYSTEM,
            transfer,
            [],
            _called("call_00000001", "transfer_to_release_engineer", {}),
        ),
        _chat(
            "604d209d5c8e00a0",
            200,
            WORKER_SYSTEM,
            git,
            handed,
            _called("call_00000003", "git_push", push),
        ),
        record(
            "065a1de995ba60af",
            "execute_tool git_push",
            {
                "traceloop.workflow.name": "release_lead",
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "git_push",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "git_push",
                "traceloop.entity.input": json.dumps(tool_input),
                "traceloop.entity.output": json.dumps(tool_output),
            },
            parent=WORKFLOW,
            start=300,
            end=310,
        ),
        _chat(
            "c3883e66aafb9e6b",
            400,
            WORKER_SYSTEM,
            git,
            [*handed, *pushed],
            _said("assistant", LEAD_REPLY),
        ),
        _chat(
            "be4d1dde2b82beb8",
            600,
            LEAD_SYSTEM,
            transfer,
            [
                *handed,
                _said("assistant", LEAD_REPLY),
                back,
                _answered_part(HANDBACK_ID, "Successfully transferred back to release_lead"),
            ],
            _said("assistant", LEAD_REPLY),
        ),
    ]


def test_supervisor_hand_back_is_the_frameworks_call_and_the_workers_push_is_evidence():
    turn, verdict = only_turn(supervisor_team())
    assert turn.agent == "release_lead"
    assert turn.reply == LEAD_REPLY
    by_name = {c.name: c for c in turn.tool_calls}
    assert by_name["transfer_back_to_release_lead"].origin == "framework"
    assert by_name["transfer_to_release_engineer"].origin == "structured"
    push = by_name["git_push"]
    assert push.origin == "structured" and COMMIT in (push.result or "") and not push.error
    assert verdict.outcome == "pass" and not verdict.findings, verdict.findings


def test_a_call_a_recorded_output_requested_is_never_the_frameworks():
    spans = supervisor_team()
    lead_first = spans[1]
    attributes = dict(lead_first.attributes)
    output = _called(HANDBACK_ID, "transfer_back_to_release_lead", {})
    attributes["gen_ai.output.messages"] = json.dumps([{**output, "finish_reason": "tool_call"}])
    spans[1] = record(
        lead_first.span_id, lead_first.name, attributes, parent=WORKFLOW, start=10, end=100
    )
    turn, verdict = only_turn(spans)
    assert all(c.origin != "framework" for c in turn.tool_calls)
    assert "unregistered_tool_call" in verdict.kinds
