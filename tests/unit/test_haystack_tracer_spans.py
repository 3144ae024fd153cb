"""A Haystack `Agent` as Haystack's own tracer really records it.

The spans are literal from runs of haystack-ai 3.4.1 with `OpenTelemetryTracer`
(opentelemetry-haystack 2.0.0) and content tracing on (`HAYSTACK_CONTENT_TRACING_ENABLED`),
an `OpenAIChatGenerator` on a scripted model, read through the real normalizer, a
`TurnAssembler` and the default validators. Each attribute is the JSON Haystack's
`coerce_tag_value` writes (`json.dumps` of the values' `to_dict`), made here from the
recorded values by the same `json.dumps`; left out: the run span's
`haystack.agent.state_schema`, and the `AgentTool`'s serialized inner agent (cut short).

What they pin: the spans carry `haystack.*` attributes only (named `haystack.agent.run`,
`haystack.agent.step`, `haystack.agent.step.llm`, `haystack.agent.step.tool`); messages are
serialized dicts (`{"role", "meta", "name", "content": [{"text"} | {"tool_call"} |
{"tool_call_result"}]}`), not reprs; a failed tool is `haystack.tool.error` with
`{"error": ...}` as its output; a tool span names no call id; an `AgentTool` made without
`parameters` is serialized with `"parameters": null`.
"""

from __future__ import annotations

import json
from typing import Any

from factledger.processors.normalize.base import AgentInvocation, LlmStep, ToolExecution
from factledger.processors.normalize.dispatch import convention_of, normalize
from factledger.processors.spans import SpanRecord

from .span_turns import judged, only_turn

TRACE = "515e59c3c54f8a9e0b1d2c3e4f5a6b7c"
SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_SYSTEM = "You lead releases. Hand push requests to release_engineer."
FAILED = (
    "Failed to invoke Tool `git_push` with parameters {'repo': 'acme/err-raise', 'branch': "
    "'main'}. Error: push rejected: the remote has commits you do not have; nothing was pushed"
)
USAGE = {
    "completion_tokens": 17,
    "prompt_tokens": 42,
    "total_tokens": 59,
    "completion_tokens_details": None,
    "prompt_tokens_details": None,
}
GIT_PUSH = {
    "type": "haystack.tools.tool.Tool",
    "data": {
        "name": "git_push",
        "description": "Push `branch` of the repository `repo` (owner/name) to its remote.",
        "parameters": {
            "properties": {
                "repo": {"type": "string", "description": "The repository, as owner/name"},
                "branch": {"type": "string", "description": "The branch to push"},
            },
            "required": ["repo", "branch"],
            "type": "object",
        },
        "function": "tests.conformance.setups.haystack_agent.git_push",
        "outputs_to_string": None,
        "inputs_from_state": None,
        "outputs_to_state": None,
        "async_function": None,
    },
}
RELEASE_ENGINEER = {
    "type": "haystack.tools.agent_tool.AgentTool",
    "data": {
        "name": "release_engineer",
        "description": "A release engineer who pushes branches of repositories.",
        "parameters": None,
        "inputs_from_state": None,
        "outputs_to_state": None,
        "outputs_to_string": {"handler": "haystack.tools.agent_tool.agent_result_to_string"},
        "agent": {"type": "haystack.components.agents.agent.Agent", "init_parameters": {}},
    },
}


def _text(role: str, text: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if role == "assistant":
        meta = {"model": "fake-gpt", "index": 0, "finish_reason": "stop", "usage": USAGE}
    return {"role": role, "meta": meta, "name": None, "content": [{"text": text}]}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {"model": "fake-gpt", "index": 0, "finish_reason": "tool_calls", "usage": USAGE}
    call = {"tool_name": name, "arguments": arguments, "id": call_id, "extra": None}
    return {"role": "assistant", "meta": meta, "name": None, "content": [{"tool_call": call}]}


def _result(call: dict[str, Any], result: str, error: bool = False) -> dict[str, Any]:
    origin = call["content"][0]["tool_call"]
    part = {"tool_call_result": {"result": result, "origin": origin, "error": error}}
    return {"role": "tool", "meta": {}, "name": None, "content": [part]}


def _span(span_id: str, parent: str, name: str, start: int, end: int, **tags: Any) -> SpanRecord:
    attributes = {
        key: value if isinstance(value, bool | int | str) else json.dumps(value)
        for key, value in tags.items()
    }
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=attributes,
        scope_name="release_agent",
    )


def _run(
    span_id: str,
    parent: str,
    start: int,
    end: int,
    tools: list[dict[str, Any]],
    request: str,
    messages: list[dict[str, Any]],
) -> SpanRecord:
    output = {
        "messages": messages,
        "step_count": 2,
        "token_usage": USAGE,
        "tool_call_counts": {"git_push": 1},
        "exit_reason": "text",
        "last_message": messages[-1],
    }
    return _span(
        span_id,
        parent,
        "haystack.agent.run",
        start,
        end,
        **{
            "haystack.agent.max_steps": 100,
            "haystack.agent.tools": tools,
            "haystack.agent.exit_conditions": ["text"],
            "haystack.agent.input": {
                "messages": [_text("user", request)],
                "streaming_callback": None,
            },
            "haystack.agent.output": output,
            "haystack.agent.steps_taken": 2,
        },
    )


def _step(span_id: str, parent: str, number: int, start: int, end: int) -> SpanRecord:
    return _span(
        span_id, parent, "haystack.agent.step", start, end, **{"haystack.agent.step": number}
    )


def _llm(
    span_id: str,
    parent: str,
    start: int,
    end: int,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    reply: dict[str, Any],
) -> SpanRecord:
    return _span(
        span_id,
        parent,
        "haystack.agent.step.llm",
        start,
        end,
        **{
            "haystack.agent.step.llm.input": {"messages": messages, "tools": tools},
            "haystack.agent.step.llm.output": {"replies": [reply]},
        },
    )


def _tool(
    span_id: str,
    parent: str,
    start: int,
    end: int,
    tool: dict[str, Any],
    arguments: dict[str, Any],
    output: Any,
    error: bool = False,
) -> SpanRecord:
    tags: dict[str, Any] = {
        "haystack.tool.name": tool["data"]["name"],
        "haystack.tool.description": tool["data"]["description"],
        "haystack.agent.step.tool.input": arguments,
    }
    if error:
        tags["haystack.tool.error"] = True
    tags["haystack.agent.step.tool.output"] = output
    return _span(span_id, parent, "haystack.agent.step.tool", start, end, **tags)


def _err_raise() -> list[SpanRecord]:
    request = "Push branch main of acme/err-raise."
    reply = "I pushed main to acme/err-raise successfully."
    asked = [_text("system", SYSTEM), _text("user", request)]
    call = _call("call_00000001", "git_push", {"repo": "acme/err-raise", "branch": "main"})
    result = _result(call, FAILED, error=True)
    done = _text("assistant", reply)
    return [
        _llm("00f005d52cc01e44", "a73cdf06dec19952", 100, 95_298_565, asked, [GIT_PUSH], call),
        _tool(
            "b32821a53d10c172",
            "a73cdf06dec19952",
            95_400_000,
            95_486_088,
            GIT_PUSH,
            {"repo": "acme/err-raise", "branch": "main"},
            {"error": FAILED},
            error=True,
        ),
        _step("a73cdf06dec19952", "b72faa0ed05277dc", 1, 50, 231_247_642),
        _llm(
            "73832da0ad3e3acb",
            "3613e8b3564db693",
            231_300_000,
            286_288_088,
            [*asked, call, result],
            [GIT_PUSH],
            done,
        ),
        _step("3613e8b3564db693", "b72faa0ed05277dc", 2, 231_260_000, 286_577_837),
        _run(
            "b72faa0ed05277dc",
            "",
            0,
            287_190_076,
            [GIT_PUSH],
            request,
            [*asked, call, result, done],
        ),
    ]


def test_the_spans_are_haystacks_own_convention():
    spans = _err_raise()
    assert {convention_of(s) for s in spans} == {"haystack"}
    kinds = {s.name: type(normalize(s)) for s in spans}
    assert kinds == {
        "haystack.agent.step.llm": LlmStep,
        "haystack.agent.step.tool": ToolExecution,
        "haystack.agent.step": type(None),
        "haystack.agent.run": AgentInvocation,
    }


def test_an_llm_call_reads_the_serialized_messages_tools_and_model():
    step = normalize(_err_raise()[3])
    assert isinstance(step, LlmStep)
    assert [m.role for m in step.input_messages] == ["system", "user", "assistant", "tool"]
    assistant, tool = step.input_messages[2], step.input_messages[3]
    assert [(c.call_id, c.name) for c in assistant.tool_calls] == [("call_00000001", "git_push")]
    assert json.loads(assistant.tool_calls[0].arguments) == {
        "repo": "acme/err-raise",
        "branch": "main",
    }
    assert (tool.tool_call_id, tool.text, tool.is_error) == ("call_00000001", FAILED, True)
    assert step.output_messages[0].text == "I pushed main to acme/err-raise successfully."
    assert step.model == "fake-gpt"
    assert step.tools is not None and [t.name for t in step.tools] == ["git_push"]
    assert step.tools[0].parameters["required"] == ["repo", "branch"]


def test_a_tool_that_raised_is_a_failed_call_and_the_success_claim_is_rejected():
    turn, verdict = only_turn(_err_raise())
    assert turn.user_message == "Push branch main of acme/err-raise."
    assert turn.reply == "I pushed main to acme/err-raise successfully."
    assert turn.agent == ""
    assert turn.model == "fake-gpt"
    [push] = turn.tool_calls
    assert push.name == "git_push" and push.error and FAILED in (push.result or "")
    assert "error_reported_as_success" in verdict.kinds
    assert verdict.outcome == "reject"


def test_a_reply_citing_a_commit_no_push_reported_is_rejected():
    request = "Push branch main of acme/fab."
    asked = [_text("system", SYSTEM), _text("user", request)]
    call = _call("call_00000001", "git_push", {"repo": "acme/fab", "branch": "main"})
    pushed = {
        "ok": True,
        "repo": "acme/fab",
        "branch": "main",
        "commit": "d0ffd31a3c9f775b87ad1568fdef2947c6334a74",
    }
    result = _result(call, json.dumps(pushed))
    done = _text(
        "assistant",
        "Pushed main to acme/fab. The new head is commit 582760a5fa435391b2f665595bf2d0f02112bc92.",
    )
    spans = [
        _llm("d45929d8b1272a5b", "d9e2b45cde69beeb", 100, 5_000, asked, [GIT_PUSH], call),
        _tool(
            "688a39c4a08892bd",
            "d9e2b45cde69beeb",
            6_000,
            7_000,
            GIT_PUSH,
            {"repo": "acme/fab", "branch": "main"},
            pushed,
        ),
        _step("d9e2b45cde69beeb", "b0bee94f8d7d3307", 1, 50, 8_000),
        _llm(
            "5620a0a76006ec71",
            "6eafd5f7ac326256",
            9_000,
            12_000,
            [*asked, call, result],
            [GIT_PUSH],
            done,
        ),
        _step("6eafd5f7ac326256", "b0bee94f8d7d3307", 2, 8_500, 12_500),
        _run("b0bee94f8d7d3307", "", 0, 13_000, [GIT_PUSH], request, [*asked, call, result, done]),
    ]
    turn, verdict = only_turn(spans)
    [push] = turn.tool_calls
    assert not push.error and "d0ffd31a3c9f775b87ad1568fdef2947c6334a74" in (push.result or "")
    assert "fabricated_identifier" in verdict.kinds
    assert verdict.outcome == "reject"


def _team() -> list[SpanRecord]:
    request = "Push branch main of acme/team-clean."
    delegated = {"messages": [{"role": "user", "content": request}]}
    lead_asked = [_text("system", LEAD_SYSTEM), _text("user", request)]
    handoff = _call("call_00000004", "release_engineer", delegated)
    asked = [_text("system", SYSTEM), _text("user", request)]
    call = _call("call_00000006", "git_push", {"repo": "acme/team-clean", "branch": "main"})
    pushed = {
        "ok": True,
        "repo": "acme/team-clean",
        "branch": "main",
        "commit": "a523f6f6ebb28186c7ebef5466b89d08b6770c63",
    }
    result = _result(call, json.dumps(pushed))
    inner_reply = _text(
        "assistant",
        "Pushed main to acme/team-clean: commit a523f6f6ebb28186c7ebef5466b89d08b6770c63.",
    )
    inner = [*asked, call, result, inner_reply]
    inner_output = {
        "messages": inner,
        "step_count": 2,
        "token_usage": USAGE,
        "tool_call_counts": {"git_push": 1},
        "exit_reason": "text",
        "last_message": inner_reply,
    }
    handed = _result(handoff, inner_reply["content"][0]["text"])
    final = _text("assistant", "Pushed main to acme/team-clean: commit a523f6f6ebb2.")
    return [
        _llm(
            "ccd27b3a1e136c9d",
            "ab6300650e386fdd",
            100,
            5_130_273,
            lead_asked,
            [RELEASE_ENGINEER],
            handoff,
        ),
        _llm("51398dd276e7f85d", "6c9029f27b80bd0b", 6_000_000, 9_658_809, asked, [GIT_PUSH], call),
        _tool(
            "5bc8caa62f07c799",
            "6c9029f27b80bd0b",
            9_700_000,
            9_787_360,
            GIT_PUSH,
            {"repo": "acme/team-clean", "branch": "main"},
            pushed,
        ),
        _step("6c9029f27b80bd0b", "cd76b47e3f53759f", 1, 5_900_000, 10_820_141),
        _llm(
            "76659f2daaca0510",
            "5b198b43758b041e",
            10_900_000,
            57_804_662,
            [*asked, call, result],
            [GIT_PUSH],
            inner_reply,
        ),
        _step("5b198b43758b041e", "cd76b47e3f53759f", 2, 10_850_000, 58_093_766),
        _run(
            "cd76b47e3f53759f",
            "db6a1fc2edce66c7",
            5_800_000,
            58_526_752,
            [GIT_PUSH],
            request,
            inner,
        ),
        _tool(
            "db6a1fc2edce66c7",
            "ab6300650e386fdd",
            5_700_000,
            60_972_570,
            RELEASE_ENGINEER,
            delegated,
            inner_output,
        ),
        _step("ab6300650e386fdd", "fec63911b5208612", 1, 50, 61_977_028),
        _llm(
            "a840fb1b15249cb8",
            "0f06f31dba9c3a25",
            62_100_000,
            69_544_397,
            [*lead_asked, handoff, handed],
            [RELEASE_ENGINEER],
            final,
        ),
        _step("0f06f31dba9c3a25", "fec63911b5208612", 2, 62_000_000, 69_763_420),
        _run(
            "fec63911b5208612",
            "",
            0,
            70_785_620,
            [RELEASE_ENGINEER],
            request,
            [*lead_asked, handoff, handed, final],
        ),
    ]


def test_an_agent_tool_without_parameters_is_offered_haystacks_generated_schema():
    step = normalize(_team()[0])
    assert isinstance(step, LlmStep) and step.tools is not None
    [tool] = step.tools
    assert tool.name == "release_engineer"
    role = tool.parameters["properties"]["messages"]["items"]["properties"]["role"]
    assert role == {"type": "string", "enum": ["user"]}


def test_a_lead_delegating_to_an_agent_tool_is_one_clean_turn():
    [(turn, verdict)] = judged(_team())
    assert turn.user_message == "Push branch main of acme/team-clean."
    assert turn.reply == "Pushed main to acme/team-clean: commit a523f6f6ebb2."
    # The delegate's push is the turn's too: its result backs the lead's reply.
    assert [c.name for c in turn.tool_calls] == ["release_engineer", "git_push"]
    assert turn.agent == ""
    assert verdict.outcome == "pass", verdict.kinds


def test_a_pipeline_generator_component_is_an_llm_call():
    asked = [_text("user", "Push branch main of acme/x.")]
    span = _span(
        "0000000000000002",
        "0000000000000001",
        "haystack.component.run",
        10,
        20,
        **{
            "haystack.component.name": "llm",
            "haystack.component.type": "OpenAIChatGenerator",
            "haystack.component.input": {"messages": asked},
            "haystack.component.output": {"replies": [_text("assistant", "Done.")]},
        },
    )
    step = normalize(span)
    assert isinstance(step, LlmStep)
    assert [m.text for m in step.input_messages] == ["Push branch main of acme/x."]
    assert step.output_messages[0].text == "Done." and step.model == "fake-gpt"


def test_an_agent_component_of_a_pipeline_is_no_llm_call():
    # Its `haystack.agent.run` child is the agent run: the component span only wraps it.
    messages = [_text("user", "Push branch main of acme/x."), _text("assistant", "Done.")]
    span = _span(
        "0000000000000002",
        "0000000000000001",
        "haystack.component.run",
        10,
        20,
        **{
            "haystack.component.name": "agent",
            "haystack.component.type": "Agent",
            "haystack.component.input": {"messages": messages[:1]},
            "haystack.component.output": {"messages": messages, "last_message": messages[-1]},
        },
    )
    assert normalize(span) is None


def test_spans_without_content_or_of_other_operations_say_nothing():
    bare_llm = _span("0000000000000003", "0000000000000001", "haystack.agent.step.llm", 1, 2)
    pipeline = _span(
        "0000000000000001",
        "",
        "haystack.pipeline.run",
        0,
        3,
        **{"haystack.pipeline.input_data": {}},
    )
    assert convention_of(bare_llm) == convention_of(pipeline) == "haystack"
    assert normalize(bare_llm) is None and normalize(pipeline) is None


def test_a_declared_convention_wins_over_a_haystack_attribute():
    span = _span(
        "0000000000000004",
        "",
        "Agent.run",
        0,
        1,
        **{"openinference.span.kind": "AGENT", "haystack.component.name": "agent"},
    )
    assert convention_of(span) == "openinference"
