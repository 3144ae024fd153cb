"""LlamaIndex agent workflows as openinference-instrumentation-llama-index 4.6 records them
(llama-index-core 0.14, `FunctionAgent` and `AgentWorkflow` on `OpenAILike`, streaming).

A run is a CHAIN root `FunctionAgent.run` / `AgentWorkflow.run` whose input is the
workflow's state and whose output a `StopEvent` repr cut at 200 characters; inside it one
CHAIN span per workflow step, the agent's name only in the `AgentSetup` event each
`run_agent_step` is given. Each model call is three LLM spans: `_prepare_chat_with_tools`
and the outer `astream_chat` (no messages) and the inner `astream_chat` (the messages). A
tool's `FunctionTool.acall` TOOL span holds the `ToolOutput` as its output, or, when the
tool raised, no output and an exception event. Attributes below are literal from a run,
with the long reprs of the non-call spans shortened where the reading ignores them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from factledger.processors.evidence.outcomes import call_failed
from factledger.processors.normalize.base import AgentInvocation, ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanEvent, SpanRecord

from .span_turns import judged, only_turn, record

SCOPE = "openinference.instrumentation.llama_index"
ENGINEER_PROMPT = "You are a release engineer. Use git_push to push branches."
LEAD_PROMPT = "You lead releases. Hand push requests to release_engineer."
REJECTED = "push rejected: the remote has commits you do not have"
COMMIT = "09e862b026e90f0495fd1b362ede890f9caadd7f"
FABRICATED = "582760a5fa435391b2f665595bf2d0f02112bc92"
GIT_SCHEMA = (
    '{"type": "function", "function": {"name": "git_push", "description": "git_push(repo: '
    "'str', branch: 'str') -> 'dict[str, Any]'\\nPush `branch` of the repository `repo` "
    '(owner/name) to its remote.", "parameters": {"properties": {"repo": {"title": "Repo", '
    '"type": "string"}, "branch": {"title": "Branch", "type": "string"}}, "required": '
    '["repo", "branch"], "type": "object", "additionalProperties": false}, "strict": false}}'
)
HANDOFF_SCHEMA = (
    '{"type": "function", "function": {"name": "handoff", "description": "Useful for '
    "handing off to another agent.\\n\\nCurrently available agents:\\n{'release_engineer': "
    '\'Pushes branches of repositories.\'}\\n", "parameters": {"properties": '
    '{"to_agent": {"title": "To Agent", "type": "string"}, "reason": {"title": "Reason", '
    '"type": "string"}}, "required": ["to_agent", "reason"], "type": "object"}}}'
)
LLM_COMMON = {
    "llm.model_name": "fake-gpt",
    "llm.invocation_parameters": '{"context_window":3900,"num_output":-1,"is_chat_model":true,'
    '"is_function_calling_model":true,"model_name":"fake-gpt"}',
    "llm.provider": "openai",
    "llm.system": "openai",
}


def span(
    span_id: str,
    name: str,
    attributes: dict[str, Any],
    parent: str,
    start: int,
    *,
    status: int = 0,
    events: tuple[SpanEvent, ...] = (),
) -> SpanRecord:
    made = record(
        span_id, name, attributes, parent=parent, start=start, end=start + 900, status=status
    )
    return replace(made, scope_name=SCOPE, events=events)


def workflow_run(workflow: str, span_id: str, start: int, end: int) -> SpanRecord:
    return record(
        span_id,
        f"{workflow}.run",
        {
            "input.value": '{"init_state": {"is_running": false, "config": {"steps": {}}}, '
            '"start_event": "AgentWorkflowStartEvent()", '
            '"tags": {"instrument_tags": {"llamaindex.run_id": "IRvGSRNINA"}}}',
            "input.mime_type": "application/json",
            "output.value": "StopEvent(result=AgentOutput(response=ChatMessage(role=<MessageR"
            "ole.ASSISTANT: 'assistant'>, additional_kwargs={}, blocks=[TextBlock(block_type='te"
            "xt', text='I pushed main to acme/err-object succes...",
            "output.mime_type": "text/plain",
            "openinference.span.kind": "CHAIN",
        },
        start=start,
        end=end,
        scope=SCOPE,
    )


def agent_step(span_id: str, workflow: str, agent: str, parent: str, start: int) -> SpanRecord:
    event = (
        "AgentSetup(input=[ChatMessage(role=<MessageRole.USER: 'user'>, additional_kwargs={}, "
        "blocks=[TextBlock(block_type='text', text='Push branch main of acme/clean.')])], "
        f"current_agent_name='{agent}')"
    )
    attributes = {
        "input.value": json.dumps(
            {"ctx": "<workflows.context.context.Context object at 0x7f37e8224490>", "ev": event}
        ),
        "input.mime_type": "application/json",
        "output.value": "AgentOutput(response=ChatMessage(role=<MessageRole.ASSISTANT: 'assis"
        "tant'>, additional_kwargs={'tool_calls': [ChoiceDeltaToolCall(index=0, id='call_0000"
        "0048', function=ChoiceDeltaToolCallFunction(a...",
        "output.mime_type": "text/plain",
        "openinference.span.kind": "CHAIN",
    }
    return record(
        span_id,
        f"{workflow}.run_agent_step",
        attributes,
        parent=parent,
        start=start,
        end=start + 5_000,
        scope=SCOPE,
    )


def prepare_chat(span_id: str, parent: str, start: int) -> SpanRecord:
    return span(
        span_id,
        "OpenAILike._prepare_chat_with_tools",
        {
            **LLM_COMMON,
            "input.value": '{"tools": ["<FunctionTool object>"], "user_msg": null, '
            '"chat_history": ["ChatMessage(role=<MessageRole.USER: \'user\'>, '
            "additional_kwargs={}, blocks=[TextBlock(block_type='text', "
            'text=\'Push branch main of acme/clean.\')])"], "verbose": false}',
            "input.mime_type": "application/json",
            "output.value": '{"messages": ["ChatMessage(role=<MessageRole.USER: \'user\'>, '
            "additional_kwargs={}, blocks=[TextBlock(block_type='text', "
            'text=\'Push branch main of acme/clean.\')])"], "tools": []}',
            "output.mime_type": "application/json",
            "openinference.span.kind": "LLM",
        },
        parent,
        start,
    )


def outer_stream(span_id: str, parent: str, start: int, schema: str) -> SpanRecord:
    return span(
        span_id,
        "OpenAILike.astream_chat",
        {
            **LLM_COMMON,
            "llm.tools.0.tool.json_schema": schema,
            "input.value": '{"messages": ["ChatMessage(role=<MessageRole.USER: \'user\'>, '
            "additional_kwargs={}, blocks=[TextBlock(block_type='text', "
            'text=\'Push branch main of acme/clean.\')])"], "kwargs": {}}',
            "input.mime_type": "application/json",
            "openinference.span.kind": "LLM",
        },
        parent,
        start,
    )


def model_call(
    span_id: str,
    parent: str,
    start: int,
    schema: str,
    messages: list[dict[str, Any]],
    answer: str | tuple[str, str, str],
) -> SpanRecord:
    """The inner `astream_chat`: the messages it sent and its answer (text, or one call
    as (call id, tool, arguments))."""
    attributes: dict[str, Any] = {**LLM_COMMON, "llm.tools.0.tool.json_schema": schema}
    for i, message in enumerate(messages):
        prefix = f"llm.input_messages.{i}.message"
        attributes[f"{prefix}.role"] = message["role"]
        if message.get("call"):
            call_id, name, arguments = message["call"]
            attributes[f"{prefix}.contents.0.message_content.type"] = "text"
            attributes[f"{prefix}.contents.0.message_content.text"] = ""
            attributes[f"{prefix}.tool_calls.0.tool_call.id"] = call_id
            attributes[f"{prefix}.tool_calls.0.tool_call.function.name"] = name
            attributes[f"{prefix}.tool_calls.0.tool_call.function.arguments"] = arguments
        else:
            attributes[f"{prefix}.content"] = message["content"]
        if message.get("answers"):
            attributes[f"{prefix}.tool_call_id"] = message["answers"]
    out = "llm.output_messages.0.message"
    attributes[f"{out}.role"] = "assistant"
    if isinstance(answer, str):
        attributes["llm.finish_reason"] = "stop"
        attributes["output.value"] = f"assistant: {answer}"
        attributes[f"{out}.content"] = answer
    else:
        call_id, name, arguments = answer
        attributes["llm.finish_reason"] = "tool_calls"
        attributes["output.value"] = "assistant: "
        attributes[f"{out}.contents.0.message_content.type"] = "text"
        attributes[f"{out}.contents.0.message_content.text"] = ""
        attributes[f"{out}.tool_calls.0.tool_call.id"] = call_id
        attributes[f"{out}.tool_calls.0.tool_call.function.name"] = name
        attributes[f"{out}.tool_calls.0.tool_call.function.arguments"] = arguments
    attributes["openinference.span.kind"] = "LLM"
    return span(span_id, "OpenAILike.astream_chat", attributes, parent, start)


def tool_output(text: str, raw: Any, *, error: bool = False, tool: str = "git_push") -> str:
    """A `ToolOutput` as the instrumentation dumps it into the TOOL span's `output.value`."""
    return json.dumps(
        {
            "blocks": [{"text": text}],
            "tool_name": tool,
            "raw_input": {"args": [], "kwargs": {"repo": "acme/clean", "branch": "main"}},
            "raw_output": raw,
            "is_error": error,
        },
        separators=(",", ":"),
    )


def function_tool(
    span_id: str, parent: str, start: int, name: str, kwargs: dict[str, str], output: str | None
) -> SpanRecord:
    attributes: dict[str, Any] = {
        "tool.description": f"{name}(...)",
        "tool.name": name,
        "tool.parameters": '{"properties": {}, "type": "object"}',
        "input.value": json.dumps({"kwargs": kwargs}),
        "input.mime_type": "application/json",
        "openinference.span.kind": "TOOL",
    }
    if output is None:  # the tool raised
        return span(
            span_id,
            "FunctionTool.acall",
            attributes,
            parent,
            start,
            status=2,
            events=(
                SpanEvent(
                    "exception",
                    start + 500,
                    {
                        "exception.type": "tests.conformance.setups._common.PushRejected",
                        "exception.message": REJECTED,
                    },
                ),
            ),
        )
    attributes["output.value"] = output
    attributes["output.mime_type"] = "application/json"
    return span(span_id, "FunctionTool.acall", attributes, parent, start)


def call_tool_step(span_id: str, workflow: str, parent: str, start: int) -> SpanRecord:
    return span(
        span_id,
        f"{workflow}.call_tool",
        {
            "input.value": '{"ctx": "<workflows.context.context.Context object at 0x7f37>", '
            "\"ev\": \"ToolCall(tool_name='git_push', tool_kwargs={'repo': 'acme/clean', "
            "'branch': 'main'}, tool_id='call_00000048')\"}",
            "input.mime_type": "application/json",
            "openinference.span.kind": "CHAIN",
        },
        parent,
        start,
    )


PUSH_ARGS = '{"repo": "acme/clean", "branch": "main"}'
USER = "Push branch main of acme/clean."


def function_agent(tool_span_output: str | None, model_sees: str, reply: str) -> list[SpanRecord]:
    """`FunctionAgent(name="release_engineer", tools=[git_push])` run once: one call of
    git_push, then the reply."""
    root = "09a523fe888d13ea"
    first: list[dict[str, Any]] = [
        {"role": "system", "content": ENGINEER_PROMPT},
        {"role": "user", "content": USER},
    ]
    second = [
        *first,
        {"role": "assistant", "call": ("call_00000048", "git_push", PUSH_ARGS)},
        {"role": "tool", "content": model_sees, "answers": "call_00000048"},
    ]
    return [
        workflow_run("FunctionAgent", root, 1_000, 90_000),
        agent_step("6e910e9b5598fc29", "BaseWorkflowAgent", "release_engineer", root, 2_000),
        prepare_chat("5a0045485ab57556", "6e910e9b5598fc29", 2_100),
        outer_stream("860f01d602aea56a", "6e910e9b5598fc29", 3_100, GIT_SCHEMA),
        model_call(
            "98f379064025c75f",
            "860f01d602aea56a",
            3_200,
            GIT_SCHEMA,
            first,
            ("call_00000048", "git_push", PUSH_ARGS),
        ),
        call_tool_step("60ce2ad9e60ad1ae", "BaseWorkflowAgent", root, 10_000),
        function_tool(
            "6ba2cebf6e2cc472",
            "60ce2ad9e60ad1ae",
            10_100,
            "git_push",
            {"repo": "acme/clean", "branch": "main"},
            tool_span_output,
        ),
        agent_step("06674cdb9995f66a", "BaseWorkflowAgent", "release_engineer", root, 20_000),
        prepare_chat("b4a9cf75b3d8973b", "06674cdb9995f66a", 20_100),
        outer_stream("34d0a14f91a5a0dc", "06674cdb9995f66a", 21_100, GIT_SCHEMA),
        model_call("02f02ff7a0070876", "34d0a14f91a5a0dc", 21_200, GIT_SCHEMA, second, reply),
    ]


PUSHED = {"ok": True, "repo": "acme/clean", "branch": "main", "commit": COMMIT}
FAILED = {"ok": False, "error": REJECTED}


def test_llm_spans_around_the_call_are_no_calls():
    spans = function_agent(tool_output(repr(PUSHED), PUSHED), repr(PUSHED), "Done.")
    by_name = {(s.name, s.span_id): normalize(s) for s in spans}
    assert by_name[("OpenAILike._prepare_chat_with_tools", "5a0045485ab57556")] is None
    assert by_name[("OpenAILike.astream_chat", "860f01d602aea56a")] is None
    assert by_name[("OpenAILike.astream_chat", "98f379064025c75f")] is not None


def test_run_agent_step_is_the_step_of_the_agent_its_event_names():
    step = normalize(
        agent_step("6e910e9b5598fc29", "BaseWorkflowAgent", "release_engineer", "a", 1)
    )
    assert isinstance(step, AgentInvocation)
    assert (step.agent_name, step.wrapper) == ("release_engineer", False)
    run = normalize(workflow_run("FunctionAgent", "09a523fe888d13ea", 1, 2))
    assert isinstance(run, AgentInvocation)
    assert (run.wrapper, run.input_text, run.output_text) == (True, "", "")
    other = call_tool_step("60ce2ad9e60ad1ae", "BaseWorkflowAgent", "a", 1)
    assert normalize(other) is None


@pytest.mark.parametrize(
    ("output", "result", "error"),
    [
        pytest.param(tool_output(repr(PUSHED), PUSHED), json.dumps(PUSHED), False, id="raw-output"),
        pytest.param(
            tool_output(repr(FAILED), FAILED), json.dumps(FAILED), False, id="returned-error"
        ),
        pytest.param(tool_output(REJECTED, None, error=True), REJECTED, True, id="is-error"),
    ],
)
def test_tool_output_raw_output_is_the_result_and_is_error_the_failure(output, result, error):
    value = normalize(function_tool("6ba2cebf6e2cc472", "a", 1, "git_push", {}, output))
    assert isinstance(value, ToolExecution)
    assert (value.result, value.error) == (result, error)


@pytest.mark.parametrize(
    ("spans", "outcome", "kind", "failed"),
    [
        pytest.param(
            function_agent(
                tool_output(repr(FAILED), FAILED),
                repr(FAILED),
                "I pushed main to acme/clean successfully.",
            ),
            "reject",
            "error_reported_as_success",
            True,
            id="returned-error-object-claimed-as-success",
        ),
        pytest.param(
            function_agent(None, REJECTED, "I pushed main to acme/clean successfully."),
            "reject",
            "error_reported_as_success",
            True,
            id="raised-exception-claimed-as-success",
        ),
        pytest.param(
            function_agent(
                tool_output(repr(PUSHED), PUSHED),
                repr(PUSHED),
                f"Pushed main to acme/clean. The new head is commit {FABRICATED}.",
            ),
            "reject",
            "fabricated_identifier",
            False,
            id="fabricated-commit",
        ),
        pytest.param(
            function_agent(
                tool_output(repr(PUSHED), PUSHED),
                repr(PUSHED),
                f"Pushed main to acme/clean: commit {COMMIT[:12]}.",
            ),
            "pass",
            None,
            False,
            id="clean",
        ),
    ],
)
def test_function_agent_run_is_one_turn_of_its_agent(spans, outcome, kind, failed):
    turn, verdict = only_turn(spans)
    assert (turn.agent, turn.user_message, turn.model) == ("release_engineer", USER, "fake-gpt")
    (push,) = turn.tool_calls
    assert (push.name, dict(push.arguments), call_failed(push)) == (
        "git_push",
        {"repo": "acme/clean", "branch": "main"},
        failed,
    )
    assert verdict.outcome == outcome, verdict.findings
    assert (kind in verdict.kinds) if kind else not verdict.findings


def agent_workflow_handoff(reply: str) -> list[SpanRecord]:
    """`AgentWorkflow(agents=[lead, engineer], root_agent="release_lead")`: the lead hands
    off, the engineer pushes and answers the user. Each agent's calls carry its own system
    prompt, so the engineer's history starts with another system message than the lead's."""
    root = "6ef74e5bc97eac6b"
    handoff_args = '{"to_agent": "release_engineer", "reason": "Push branch main of acme/clean."}'
    handed = (
        "Agent release_engineer is now handling the request due to the following reason: "
        "Push branch main of acme/clean..\nPlease continue with the current request."
    )
    engineer: list[dict[str, Any]] = [
        {"role": "system", "content": ENGINEER_PROMPT},
        {"role": "user", "content": USER},
        {"role": "assistant", "call": ("call_00000020", "handoff", handoff_args)},
        {"role": "tool", "content": handed, "answers": "call_00000020"},
    ]
    pushed = [
        *engineer,
        {"role": "assistant", "call": ("call_00000022", "git_push", PUSH_ARGS)},
        {"role": "tool", "content": repr(PUSHED), "answers": "call_00000022"},
    ]
    return [
        workflow_run("AgentWorkflow", root, 1_000, 90_000),
        agent_step("5174ab4cab9baaaa", "AgentWorkflow", "release_lead", root, 2_000),
        model_call(
            "0f44d282650cd626",
            "5174ab4cab9baaaa",
            2_200,
            HANDOFF_SCHEMA,
            [{"role": "system", "content": LEAD_PROMPT}, {"role": "user", "content": USER}],
            ("call_00000020", "handoff", handoff_args),
        ),
        call_tool_step("81cf50ecd4dbbf73", "AgentWorkflow", root, 10_000),
        function_tool(
            "a77512d8d9c811fc",
            "81cf50ecd4dbbf73",
            10_100,
            "handoff",
            {"to_agent": "release_engineer", "reason": USER},
            tool_output(handed, handed, tool="handoff"),
        ),
        agent_step("ffac2cf4d91dd565", "AgentWorkflow", "release_engineer", root, 20_000),
        model_call(
            "e8101838f95e2f59",
            "ffac2cf4d91dd565",
            20_200,
            GIT_SCHEMA,
            engineer,
            ("call_00000022", "git_push", PUSH_ARGS),
        ),
        call_tool_step("ca499c145101d7bc", "AgentWorkflow", root, 30_000),
        function_tool(
            "443e76fcac57a748",
            "ca499c145101d7bc",
            30_100,
            "git_push",
            {"repo": "acme/clean", "branch": "main"},
            tool_output(repr(PUSHED), PUSHED),
        ),
        agent_step("db266f326fa068d9", "AgentWorkflow", "release_engineer", root, 40_000),
        model_call("a30a90fd37d93b66", "db266f326fa068d9", 40_200, GIT_SCHEMA, pushed, reply),
    ]


def test_a_handoffs_turn_is_the_agent_the_user_talked_to():
    fabricated = f"Pushed main to acme/clean. The new head is commit {FABRICATED}."
    turns = judged(agent_workflow_handoff(fabricated))
    assert len(turns) == 1
    turn, verdict = turns[0]
    assert (turn.agent, turn.user_message, turn.reply) == ("release_lead", USER, fabricated)
    assert [c.name for c in turn.tool_calls if c.name == "git_push"] == ["git_push"]
    assert verdict.outcome == "reject"
    assert "fabricated_identifier" in verdict.kinds
