"""BeeAI Framework agents as `openinference-instrumentation-beeai` really records them.

The attributes are literal from runs of beeai-framework 0.1.85 (a `RequirementAgent` on
`OpenAIChatModel`) with the instrumentation 0.1.30 (system prompts cut short, the
`metadata.memory.*`, `metadata.steps.*`, `metadata.context.*` and token attributes left
out), read through the real normalizer, a `TurnAssembler` and the default validators.

What they pin: each event of a run other than its start and success is a child span of
the run's kind, named after the event and carrying the event's metadata (a failed tool's
`error`, TOOL; an agent's `final_answer`, AGENT); a tool message keeps its call id beside
its content (`contents.0.message.tool_call_id`); and the request reaches the model inside
the agent's task prompt (`Your task: ...`).
"""

from __future__ import annotations

import json
from typing import Any

from factledger.processors.normalize.base import LlmStep, ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanEvent, SpanRecord

from .span_turns import only_turn

SCOPE = "openinference.instrumentation.beeai"
TRACE = "7f3c1e0b9a8d4c2e8b6a5d4c3b2a1f00"
AGENT = "4dd1e1a6e907130b"
SYSTEM = (
    "# Role\nAssume the role of a helpful AI assistant.\n\n# Instructions\nYou are a "
    "release engineer. Use git_push to push branches.\nWhen the user sends a message, "
    "figure out a solution and provide a final answer to the user by calling the "
    "'final_answer' tool.\n"
)
REJECTED = "push rejected: the remote has commits you do not have"
RAISED = (
    "ToolError(beeai_framework.tools.errors): Tool Error\n"
    'Context: {"name": "git_push"}\n'
    f"  PushRejected(tests.conformance.setups._common): {REJECTED}"
)
GIT_SCHEMA = {
    "properties": {
        "repo": {"title": "Repo", "type": "string"},
        "branch": {"title": "Branch", "type": "string"},
    },
    "required": ["repo", "branch"],
    "title": "git_push",
    "type": "object",
}
ANSWER_SCHEMA = {
    "properties": {
        "response": {
            "description": "The final answer to the user",
            "title": "Response",
            "type": "string",
        }
    },
    "required": ["response"],
    "title": "FinalAnswerToolSchema",
    "type": "object",
}


def _span(
    span_id: str,
    name: str,
    start: int,
    end: int,
    attributes: dict[str, Any],
    *,
    parent: str = AGENT,
    error: str = "",
) -> SpanRecord:
    events: tuple[SpanEvent, ...] = ()
    if error:
        exception = {
            "exception.type": "beeai_framework.tools.errors.ToolError",
            "exception.message": "Tool Error",
        }
        events = (SpanEvent("exception", end, exception),)
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        name=name,
        parent_span_id=parent,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        status_code=2 if error else 1,
        attributes=attributes,
        events=events,
        scope_name=SCOPE,
    )


def _agent(request: str, reply: str) -> SpanRecord:
    """The `RequirementAgent` run: AGENT, named after the agent."""
    return _span(
        AGENT,
        "release_engineer",
        0,
        900_000,
        {
            "input.value": json.dumps({"input": request}),
            "input.mime_type": "application/json",
            "metadata.class_name": "RequirementAgent",
            "agent.name": "release_engineer",
            "metadata.agent_description": "Pushes branches of repositories.",
            "output.value": reply,
            "output.mime_type": "text/plain",
            "metadata.result.response": reply,
            "openinference.span.kind": "AGENT",
        },
        parent="",
    )


def _text(role: str, text: str) -> dict[str, Any]:
    return {
        "role": role,
        "contents.0.message_content.type": "text",
        "contents.0.message_content.text": text,
    }


def _called(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls.0.tool_call.id": call_id,
        "tool_calls.0.tool_call.function.name": name,
        "tool_calls.0.tool_call.function.arguments": json.dumps(arguments),
    }


def _answered(call_id: str, text: str) -> dict[str, Any]:
    """A tool message: its call id beside its content, one level deeper than the role."""
    return {
        "role": "tool",
        "contents.0.message.tool_call_id": call_id,
        "contents.0.message_content.type": "text",
        "contents.0.message_content.text": text,
    }


def _model(
    span_id: str, start: int, history: list[dict[str, Any]], output: dict[str, Any]
) -> SpanRecord:
    """An `OpenAIChatModel` call: LLM, its messages flattened, the tools it was offered."""
    attributes: dict[str, Any] = {
        "metadata.class_name": "OpenAIChatModel",
        "llm.model_name": "fake-gpt",
        "llm.provider": "openai",
        "openinference.span.kind": "LLM",
        "output.value": "",
        "output.mime_type": "text/plain",
    }
    for i, message in enumerate([_text("system", SYSTEM), *history]):
        for key, value in message.items():
            attributes[f"llm.input_messages.{i}.message.{key}"] = value
    for key, value in output.items():
        attributes[f"llm.output_messages.0.message.{key}"] = value
    for k, (name, schema) in enumerate((("git_push", GIT_SCHEMA), ("final_answer", ANSWER_SCHEMA))):
        function = {"name": name, "parameters": schema}
        attributes[f"llm.tools.{k}.tool.json_schema"] = json.dumps(
            {"type": "function", "function": function}
        )
    return _span(span_id, "OpenAIChatModel", start, start + 40_000, attributes)


def _tool(
    span_id: str,
    name: str,
    start: int,
    arguments: dict[str, Any],
    output: str,
    *,
    error: str = "",
) -> SpanRecord:
    cls = "FinalAnswerTool" if name == "final_answer" else "FunctionTool"
    schema = ANSWER_SCHEMA if name == "final_answer" else GIT_SCHEMA
    attributes = {
        "input.value": json.dumps({"input": arguments, "options": None}),
        "input.mime_type": "application/json",
        "metadata.class_name": cls,
        "tool.name": name,
        "tool.json_schema": json.dumps(schema),
        "output.value": output,
        "output.mime_type": "text/plain",
        "openinference.span.kind": "TOOL",
    }
    return _span(span_id, name, start, start + 2_000, attributes, error=error)


def _event(
    span_id: str, name: str, kind: str, at: int, path: str, value: dict[str, Any], parent: str
) -> SpanRecord:
    """A child the instrumentation writes for an event of a run (`SpanWrapper.child`):
    the run's kind, the event's name, an instant long, the event's metadata."""
    attributes: dict[str, Any] = {
        "input.value": json.dumps(value),
        "input.mime_type": "application/json",
        "metadata.id": "7983e31a-95e6-46e5-80ee-a7c62ac6b093",
        "metadata.path": path,
        "metadata.context.tool_call_msg.type": "tool-call",
        "metadata.trace.id": "05b316d9-5029-484a-b1bc-44639ba707bf",
        "metadata.trace.run_id": "842b8cfc-ef51-4730-8862-cd1431d3a224",
        "metadata.trace.parent_run_id": "5f13a369-4367-49df-8a3d-faa732f6bd78",
        "openinference.span.kind": kind,
    }
    error = ""
    if name == "error":
        attributes["output.value"] = RAISED.replace('Context: {"name": "git_push"}\n', "")
        attributes["output.mime_type"] = "text/plain"
        error = "Tool Error"
    return _span(span_id, name, at, at, attributes, parent=parent, error=error)


RAISE_TASK = "Push branch main of acme/err-raise."
RAISE_REPLY = "I pushed main to acme/err-raise successfully."
RAISE_PUSH = {"repo": "acme/err-raise", "branch": "main"}
ERROR_EVENT = _event(
    "833f142c133ceacd",
    "error",
    "TOOL",
    101_000,
    "tool.custom.git_push.error",
    {"error": "Tool Error", "input": {"branch": "main", "repo": "acme/err-raise"}},
    parent="ad6e5c526c45a604",
)
ANSWER_EVENT = _event(
    "d4c5f3882d74adc7",
    "final_answer",
    "AGENT",
    200_000,
    "agent.requirement.final_answer",
    {"delta": RAISE_REPLY, "output": RAISE_REPLY},
    parent=AGENT,
)
FAILED_PUSH = _tool("ad6e5c526c45a604", "git_push", 100_000, RAISE_PUSH, RAISED, error="x")
ERR_RAISE = [
    _agent(RAISE_TASK, RAISE_REPLY),
    _model(
        "61dfbbc47bd3dae4",
        10_000,
        [_text("user", f"Your task: {RAISE_TASK}")],
        _called("call_00000001", "git_push", RAISE_PUSH),
    ),
    ERROR_EVENT,
    FAILED_PUSH,
    _model(
        "fc712d47ee55ea25",
        150_000,
        [
            _text("user", f"Your task: {RAISE_TASK}"),
            _called("call_00000001", "git_push", RAISE_PUSH),
            _answered(
                "call_00000001",
                "The tool has failed; the error log is shown below. If the tool cannot "
                "accomplish what you want, use a different tool or explain why you can't "
                f"use it.\n\n{RAISED}",
            ),
        ],
        _called("call_00000003", "final_answer", {"response": RAISE_REPLY}),
    ),
    ANSWER_EVENT,
    _tool(
        "bbda089bfaa4f522",
        "final_answer",
        201_000,
        {"response": RAISE_REPLY},
        "Message has been sent",
    ),
]


def test_an_event_of_a_run_is_no_call_and_no_agent():
    assert normalize(ERROR_EVENT) is None
    assert normalize(ANSWER_EVENT) is None
    failed = normalize(FAILED_PUSH)
    assert isinstance(failed, ToolExecution)
    assert failed.name == "git_push" and failed.error
    assert failed.result is not None and REJECTED in failed.result


def test_a_tool_message_keeps_its_call_id_beside_its_content():
    step = normalize(ERR_RAISE[4])
    assert isinstance(step, LlmStep)
    _system, user, called, result = step.input_messages
    assert user.role == "user" and user.text == RAISE_TASK
    assert [p.call_id for p in called.tool_calls] == ["call_00000001"]
    assert result.role == "tool" and result.tool_call_id == "call_00000001"
    assert REJECTED in result.text


def test_a_failed_push_is_one_failed_call_of_an_offered_tool():
    turn, verdict = only_turn(ERR_RAISE)
    assert turn.user_message == RAISE_TASK
    assert turn.reply == RAISE_REPLY
    assert turn.agent == "release_engineer"
    [push] = [c for c in turn.tool_calls if not c.answer]
    assert push.name == "git_push" and push.call_id == "call_00000001"
    assert push.error and push.result is not None and REJECTED in push.result
    assert "unregistered_tool_call" not in verdict.kinds


def test_the_second_request_of_a_memory_cites_the_earlier_push_from_its_history():
    earlier = "f3d682ef3c61502d215522bf2be40a838c5f1b70"
    later = "391b99c18b48f3829bac4649e393b94fc56d9533"
    task = "Now push branch dev of acme/session as well."
    first_answer = f"Pushed main to acme/session: commit {earlier[:12]}."
    reply = (
        f"Pushed dev to acme/session: commit {later[:12]}. "
        f"The earlier push is still commit {earlier}."
    )
    main_push = {"repo": "acme/session", "branch": "main"}
    dev_push = {"repo": "acme/session", "branch": "dev"}
    pushed = json.dumps({"ok": True, "repo": "acme/session", "branch": "dev", "commit": later})
    history = [
        _text("user", "Your task: Push branch main of acme/session."),
        _called("call_00000013", "git_push", main_push),
        _answered(
            "call_00000013",
            json.dumps({"ok": True, "repo": "acme/session", "branch": "main", "commit": earlier}),
        ),
        _called("call_00000015", "final_answer", {"response": first_answer}),
        _answered("call_00000015", "Message has been sent"),
        _text("user", f"Your task: {task}"),
    ]
    spans = [
        _agent(task, reply),
        _model("2a16f3db268ce3bc", 10_000, history, _called("call_00000017", "git_push", dev_push)),
        _tool("e76dbf22d36d5225", "git_push", 60_000, dev_push, pushed),
        _model(
            "fe54ab0b87860970",
            70_000,
            [
                *history,
                _called("call_00000017", "git_push", dev_push),
                _answered("call_00000017", pushed),
            ],
            _called("call_00000019", "final_answer", {"response": reply}),
        ),
        _tool(
            "227dce48ba227404",
            "final_answer",
            120_000,
            {"response": reply},
            "Message has been sent",
        ),
    ]
    turn, verdict = only_turn(spans)
    assert turn.user_message == task
    assert turn.reply == reply
    assert [(c.name, c.call_id) for c in turn.tool_calls if not c.answer] == [
        ("git_push", "call_00000017")
    ]
    assert verdict.outcome.value == "pass", verdict.findings
