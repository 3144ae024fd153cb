"""smolagents agents as `openinference-instrumentation-smolagents` really records them.

The attributes are literal from runs of smolagents 1.26 (`ToolCallingAgent`, `CodeAgent`,
a lead with `managed_agents`) with the instrumentation 0.1.43 (system prompts cut short,
the raw `input.value`/`output.value` of model calls left out), read through the real
normalizer, a `TurnAssembler` and the default validators.

What they pin: smolagents writes its memory into the model's input in roles of its own
(`tool-call`, `tool-response`) and the request after `New task:`; a tool that raised has
no output, only an exception event; team members are offered like tools but are in no
`llm.tools`, and a `CodeAgent`'s tools are named only by its run span.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from factledger.processors.normalize.base import LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanEvent, SpanRecord

from .span_turns import only_turn

SCOPE = "openinference.instrumentation.smolagents"
TRACE = "5e0c0a9e1b7d4f3a8c2e6b1d0f9a7c35"
TOOLS_PROMPT = (
    "You are an expert assistant who can solve any task using tool calls. "
    "You will be given a task to solve as best you can.\n"
)
CODE_PROMPT = (
    "You are an expert assistant who can solve any task using code blobs. "
    "You will be given a task to solve as best you can.\n"
)
GIT_SCHEMA = json.dumps(
    {
        "type": "function",
        "function": {
            "name": "git_push",
            "description": "Push a branch of a repository to its remote.",
            "parameters": {
                "type": "object",
                "properties": {
                    "repo": {"type": "string", "description": "The repository, as owner/name."},
                    "branch": {"type": "string", "description": "The branch to push."},
                },
                "required": ["repo", "branch"],
            },
        },
    }
)
ANSWER_SCHEMA = json.dumps(
    {
        "type": "function",
        "function": {
            "name": "final_answer",
            "description": "Provides a final answer to the given problem.",
            "parameters": {
                "type": "object",
                "properties": {
                    "answer": {"type": "string", "description": "The final answer to the problem"}
                },
                "required": ["answer"],
            },
        },
    }
)
GIT_PARAMETERS = json.dumps(
    {
        "repo": {"type": "string", "description": "The repository, as owner/name."},
        "branch": {"type": "string", "description": "The branch to push."},
    }
)
ANSWER_PARAMETERS = json.dumps(
    {"answer": {"type": "any", "description": "The final answer to the problem"}}
)
REJECTED = "push rejected: the remote has commits you do not have"


def _span(
    span_id: str,
    parent: str,
    name: str,
    start: int,
    end: int,
    attributes: dict[str, Any],
    *,
    error: bool = False,
    exception: str = "",
) -> SpanRecord:
    events: tuple[SpanEvent, ...] = ()
    if exception:
        event = {"exception.type": "PushRejected", "exception.message": exception}
        events = (SpanEvent("exception", end, event),)
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


def _run(
    span_id: str,
    parent: str,
    name: str,
    task: str,
    output: str,
    tools: Sequence[str],
    members: Sequence[str] = (),
) -> SpanRecord:
    """The `{Agent class}.run` span: AGENT, the bound `run()` as `input.value`."""
    bound = {"task": task, "stream": False, "reset": True, "images": None}
    attributes: dict[str, Any] = {
        "openinference.span.kind": "AGENT",
        "input.value": json.dumps({**bound, "additional_args": None, "max_steps": None}),
        "smolagents.max_steps": 5,
        "smolagents.tools_names": tuple(tools),
        "output.value": output,
    }
    for i, member in enumerate(members):
        attributes[f"smolagents.managed_agents.{i}.name"] = member
        attributes[f"smolagents.managed_agents.{i}.description"] = "Pushes branches."
    return _span(span_id, parent, name, 0, 900_000, attributes)


def _model(
    span_id: str,
    parent: str,
    start: int,
    messages: Sequence[tuple[str, str]],
    *,
    model: str = "fake-gpt",
    calls: Sequence[tuple[str, str, str]] = (),
    text: str = "",
    tools: Sequence[str] = (),
) -> SpanRecord:
    """An `OpenAIModel.generate` span: LLM, `contents.0.message_content.text` per message
    (smolagents' own roles as they are), the output's text or tool calls, `llm.tools`."""
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": model}
    for i, (role, content) in enumerate(messages):
        prefix = f"llm.input_messages.{i}.message"
        attributes[f"{prefix}.role"] = role
        attributes[f"{prefix}.contents.0.message_content.type"] = "text"
        attributes[f"{prefix}.contents.0.message_content.text"] = content
    attributes["llm.output_messages.0.message.role"] = "assistant"
    if text:
        attributes["llm.output_messages.0.message.contents.0.message_content.type"] = "text"
        attributes["llm.output_messages.0.message.contents.0.message_content.text"] = text
    for k, (call_id, name, arguments) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{k}.tool_call"
        attributes[f"{prefix}.id"] = call_id
        attributes[f"{prefix}.function.name"] = name
        attributes[f"{prefix}.function.arguments"] = arguments
    for k, schema in enumerate(tools):
        attributes[f"llm.tools.{k}.tool.json_schema"] = schema
    return _span(span_id, parent, "OpenAIModel.generate", start, start + 40_000, attributes)


def _tool(
    span_id: str,
    parent: str,
    start: int,
    name: str,
    bound: dict[str, Any],
    output: str | None,
    *,
    exception: str = "",
) -> SpanRecord:
    """A `Tool.__call__` span: TOOL, the bound call as `input.value`; a tool that raised
    has no `output.value`, only its exception event."""
    cls, parameters = (
        ("FinalAnswerTool", ANSWER_PARAMETERS)
        if name == "final_answer"
        else ("SimpleTool", GIT_PARAMETERS)
    )
    attributes: dict[str, Any] = {
        "openinference.span.kind": "TOOL",
        "input.value": json.dumps(bound),
        "tool.name": name,
        "tool.parameters": parameters,
    }
    if output is not None:
        attributes["output.value"] = output
    return _span(
        span_id,
        parent,
        cls,
        start,
        start + 2_000,
        attributes,
        error=bool(exception),
        exception=exception,
    )


def _step(span_id: str, parent: str, number: int, start: int, end: int) -> SpanRecord:
    return _span(
        span_id, parent, f"Step {number}", start, end, {"openinference.span.kind": "CHAIN"}
    )


def _kwargs(**kwargs: Any) -> dict[str, Any]:
    return {"args": [], "sanitize_inputs_outputs": True, "kwargs": kwargs}


def test_memory_roles_read_as_calls_and_results_and_the_task_as_the_request():
    observation = (
        "Observation:\n{'ok': True, 'repo': 'acme/session', 'branch': 'main', "
        "'commit': 'f3d682ef3c61502d215522bf2be40a838c5f1b70'}"
    )
    step = normalize(
        _model(
            "0000000000000003",
            "0000000000000002",
            10_000,
            [
                ("system", TOOLS_PROMPT),
                ("user", "New task:\nPush branch main of acme/session."),
                (
                    "tool-call",
                    "Calling tools:\n[{'id': 'call_00000017', 'type': 'function', "
                    "'function': {'name': 'git_push', 'arguments': {'repo': 'acme/session', "
                    "'branch': 'main'}}}]",
                ),
                ("tool-response", observation),
            ],
        )
    )
    assert isinstance(step, LlmStep)
    _system, user, call, result = step.input_messages
    assert user.role == "user" and user.text == "Push branch main of acme/session."
    assert call.role == "assistant"
    assert [(p.call_id, p.name, json.loads(p.arguments)) for p in call.tool_calls] == [
        ("call_00000017", "git_push", {"repo": "acme/session", "branch": "main"})
    ]
    assert result.role == "tool" and result.tool_call_id == "call_00000017"
    assert result.text == observation.removeprefix("Observation:\n")
    assert not result.is_error


def test_a_tool_that_raised_is_a_failed_call_with_its_message_and_the_claim_is_rejected():
    task = "Push branch main of acme/err-raise."
    reply = "I pushed main to acme/err-raise successfully."
    error = (
        "Error:\nError executing tool 'git_push' with arguments {'repo': 'acme/err-raise', "
        f"'branch': 'main'}}: PushRejected: {REJECTED}\nPlease try again or use another tool\n"
        "Now let's retry: take care not to repeat previous errors! If you have retried "
        "several times, try a completely different approach.\n"
    )
    push = json.dumps({"repo": "acme/err-raise", "branch": "main"})
    asked = [("system", TOOLS_PROMPT), ("user", f"New task:\n{task}")]
    spans = [
        _run(
            "0000000000000001",
            "",
            "release_engineer.run",
            task,
            reply,
            ["git_push", "final_answer"],
        ),
        _step("0000000000000002", "0000000000000001", 1, 13_000, 45_000),
        _model(
            "0000000000000003",
            "0000000000000002",
            13_500,
            asked,
            calls=[("call_00000005", "git_push", push)],
            tools=[GIT_SCHEMA, ANSWER_SCHEMA],
        ),
        _tool(
            "0000000000000004",
            "0000000000000002",
            60_000,
            "git_push",
            _kwargs(repo="acme/err-raise", branch="main"),
            None,
            exception=REJECTED,
        ),
        _step("0000000000000005", "0000000000000001", 2, 100_000, 200_000),
        _model(
            "0000000000000006",
            "0000000000000005",
            100_500,
            [*asked, ("tool-response", error)],
            calls=[("call_00000007", "final_answer", json.dumps({"answer": reply}))],
            tools=[GIT_SCHEMA, ANSWER_SCHEMA],
        ),
        _tool(
            "0000000000000007",
            "0000000000000005",
            150_000,
            "final_answer",
            _kwargs(answer=reply),
            reply,
        ),
    ]
    turn, verdict = only_turn(spans)
    assert turn.user_message == task
    assert turn.reply == reply
    [push_call] = [c for c in turn.tool_calls if c.name == "git_push"]
    assert push_call.error and push_call.result == REJECTED
    assert "error_reported_as_success" in verdict.kinds


def test_a_second_run_with_memory_cites_the_earlier_push_from_its_history():
    earlier = "f3d682ef3c61502d215522bf2be40a838c5f1b70"
    later = "391b99c18b48f3829bac4649e393b94fc56d9533"
    task = "Now push branch dev of acme/session as well."
    reply = (
        f"Pushed dev to acme/session: commit {later[:12]}. "
        f"The earlier push is still commit {earlier}."
    )
    first_answer = f"Pushed main to acme/session: commit {earlier[:12]}."
    history = [
        ("system", TOOLS_PROMPT),
        ("user", "New task:\nPush branch main of acme/session."),
        (
            "tool-call",
            "Calling tools:\n[{'id': 'call_00000017', 'type': 'function', 'function': "
            "{'name': 'git_push', 'arguments': {'repo': 'acme/session', 'branch': 'main'}}}]",
        ),
        (
            "tool-response",
            "Observation:\n{'ok': True, 'repo': 'acme/session', 'branch': 'main', "
            f"'commit': '{earlier}'}}",
        ),
        (
            "tool-call",
            "Calling tools:\n[{'id': 'call_00000019', 'type': 'function', 'function': "
            f"{{'name': 'final_answer', 'arguments': {{'answer': '{first_answer}'}}}}}}]",
        ),
        ("tool-response", f"Observation:\n{first_answer}"),
        ("user", f"New task:\n{task}"),
    ]
    pushed = json.dumps({"ok": True, "repo": "acme/session", "branch": "dev", "commit": later})
    push = json.dumps({"repo": "acme/session", "branch": "dev"})
    spans = [
        _run(
            "0000000000000001",
            "",
            "release_engineer.run",
            task,
            reply,
            ["git_push", "final_answer"],
        ),
        _step("0000000000000002", "0000000000000001", 1, 10_000, 90_000),
        _model(
            "0000000000000003",
            "0000000000000002",
            10_500,
            history,
            calls=[("call_00000021", "git_push", push)],
            tools=[GIT_SCHEMA, ANSWER_SCHEMA],
        ),
        _tool(
            "0000000000000004",
            "0000000000000002",
            60_000,
            "git_push",
            _kwargs(repo="acme/session", branch="dev"),
            pushed,
        ),
        _step("0000000000000005", "0000000000000001", 2, 100_000, 200_000),
        _model(
            "0000000000000006",
            "0000000000000005",
            100_500,
            [
                *history,
                (
                    "tool-call",
                    "Calling tools:\n[{'id': 'call_00000021', 'type': 'function', "
                    "'function': {'name': 'git_push', 'arguments': {'repo': 'acme/session', "
                    "'branch': 'dev'}}}]",
                ),
                (
                    "tool-response",
                    "Observation:\n{'ok': True, 'repo': 'acme/session', 'branch': 'dev', "
                    f"'commit': '{later}'}}",
                ),
            ],
            calls=[("call_00000023", "final_answer", json.dumps({"answer": reply}))],
            tools=[GIT_SCHEMA, ANSWER_SCHEMA],
        ),
        _tool(
            "0000000000000007",
            "0000000000000005",
            150_000,
            "final_answer",
            _kwargs(answer=reply),
            reply,
        ),
    ]
    turn, verdict = only_turn(spans)
    assert turn.user_message == task
    assert [c.name for c in turn.tool_calls if not c.answer] == ["git_push"]
    assert verdict.outcome == "pass", verdict.findings


def _team(code: bool) -> list[SpanRecord]:
    """A lead (`release_lead`, no git tool) with `release_engineer` in `managed_agents`:
    the lead calls the worker like a tool (structured, or from its code), the worker
    pushes. The lead's model spans name no team member in `llm.tools`; a `CodeAgent`'s
    name no tool at all."""
    task = "Push branch main of acme/team-clean."
    commit = "a523f6f6ebb28186c7ebef5466b89d08b6770c63"
    reply = f"Pushed main to acme/team-clean: commit {commit[:12]}."
    report = f"Pushed main to acme/team-clean: commit {commit}."
    handed = f"Here is the final answer from your managed agent 'release_engineer':\n{report}"
    worker_task = (
        "You're a helpful agent named 'release_engineer'.\nYou have been submitted this task "
        f"by your manager.\n---\nTask:\nNew task:\n{task}\n---\n"
    )
    pushed = json.dumps({"ok": True, "repo": "acme/team-clean", "branch": "main", "commit": commit})
    model, prompt = ("fake-code", CODE_PROMPT) if code else ("fake-gpt", TOOLS_PROMPT)
    lead_tools = [] if code else [ANSWER_SCHEMA]
    worker_tools = [] if code else [GIT_SCHEMA, ANSWER_SCHEMA]
    asked = [("system", prompt), ("user", f"New task:\n{task}")]
    worker_asked = [("system", prompt), ("user", f"New task:\n{worker_task}")]
    if code:
        delegate_code = (
            "Thought: I will call release_engineer.\n<code>\nresult = release_engineer("
            "task='New task:\\nPush branch main of acme/team-clean.')\nprint(result)\n</code>"
        )
        delegation: dict[str, Any] = {"text": delegate_code}
        delegated = [
            ("assistant", delegate_code),
            (
                "tool-call",
                "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': "
                "'python_interpreter', 'arguments': \"result = release_engineer(task='New "
                "task:\\\\nPush branch main of acme/team-clean.')\\nprint(result)\"}}]",
            ),
            (
                "tool-response",
                f"Observation:\nExecution logs:\n{handed}\nLast output from code snippet:\nNone",
            ),
        ]
        push: dict[str, Any] = {
            "text": "Thought: I will call git_push.\n<code>\nresult = git_push("
            "repo='acme/team-clean', branch='main')\nprint(result)\n</code>"
        }
        answer: dict[str, Any] = {
            "text": f"Thought: I can answer now.\n<code>\nfinal_answer({reply!r})\n</code>"
        }
    else:
        arguments = json.dumps({"task": f"New task:\n{task}"})
        delegation = {"calls": [("call_00000023", "release_engineer", arguments)]}
        delegated = [
            (
                "tool-call",
                "Calling tools:\n[{'id': 'call_00000023', 'type': 'function', 'function': "
                "{'name': 'release_engineer', 'arguments': {'task': 'New task:\\nPush branch "
                "main of acme/team-clean.'}}}]",
            ),
            ("tool-response", f"Observation:\n{handed}"),
        ]
        push = {
            "calls": [
                ("call_00000025", "git_push", '{"repo": "acme/team-clean", "branch": "main"}')
            ]
        }
        answer = {"calls": [("call_00000031", "final_answer", json.dumps({"answer": reply}))]}
    return [
        _run(
            "0000000000000001",
            "",
            "release_lead.run",
            task,
            reply,
            ["final_answer"],
            ["release_engineer"],
        ),
        _step("0000000000000002", "0000000000000001", 1, 8_000, 400_000),
        _model(
            "0000000000000003",
            "0000000000000002",
            9_000,
            asked,
            model=model,
            tools=lead_tools,
            **delegation,
        ),
        _run(
            "0000000000000004",
            "0000000000000002",
            "release_engineer.run",
            worker_task,
            report,
            ["git_push", "final_answer"],
        ),
        _step("0000000000000005", "0000000000000004", 1, 60_000, 200_000),
        _model(
            "0000000000000006",
            "0000000000000005",
            61_000,
            worker_asked,
            model=model,
            tools=worker_tools,
            **push,
        ),
        _tool(
            "0000000000000007",
            "0000000000000005",
            150_000,
            "git_push",
            _kwargs(repo="acme/team-clean", branch="main"),
            pushed,
        ),
        _step("0000000000000008", "0000000000000001", 2, 500_000, 890_000),
        _model(
            "0000000000000009",
            "0000000000000008",
            501_000,
            [*asked, *delegated],
            model=model,
            tools=lead_tools,
            **answer,
        ),
        _tool(
            "000000000000000a",
            "0000000000000008",
            850_000,
            "final_answer",
            _kwargs(answer=reply),
            reply,
        ),
    ]


def test_a_team_members_calls_are_offered_to_the_lead_tool_calling():
    turn, verdict = only_turn(_team(code=False))
    assert turn.agent == "release_lead"
    assert turn.user_message == "Push branch main of acme/team-clean."
    assert {"release_engineer", "git_push"} <= {t.name for t in turn.tools or ()}
    assert [c.name for c in turn.tool_calls if c.name == "git_push"] == ["git_push"]
    assert verdict.outcome == "pass", verdict.findings


def test_a_team_members_calls_are_offered_to_the_lead_code():
    turn, verdict = only_turn(_team(code=True))
    assert turn.agent == "release_lead"
    assert turn.reply == "Pushed main to acme/team-clean: commit a523f6f6ebb2."
    assert "python_interpreter" not in {c.name for c in turn.tool_calls}
    assert [c.name for c in turn.tool_calls if c.name == "git_push"] == ["git_push"]
    assert verdict.outcome == "pass", verdict.findings
