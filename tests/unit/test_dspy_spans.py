"""DSPy's spans as OpenInference's DSPy instrumentation writes them
(openinference-instrumentation-dspy 0.1.48 on dspy 3.4), recorded from a `dspy.ReAct`
with a `git_push` tool on `dspy.LM("openai/fake-gpt", ...)` with the default ChatAdapter.

A request is a `ReAct.forward` root (CHAIN, `{"input_args": {...}}` in, the prediction
out); each step is `Predict.forward` > `Predict(StringSignature).forward` >
`ChatAdapter.__call__` > `LM.__call__` (LLM); the tools run under the root as
`git_push.__call__` and `finish.__call__` (TOOL, without `tool.name`); the answer is
extracted by `ChainOfThought.forward` > ... > `LM.__call__`. The LLM calls' messages are
DSPy's prompt: fields in `[[ ## name ## ]]` markers, ReAct's trajectory among them.
"""

from __future__ import annotations

import json
from typing import Any

from factledger.processors.kinds import Kind, Outcome
from factledger.processors.normalize.base import ChatMessage, LlmStep, ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.normalize.dspy_fields import read_call
from factledger.processors.spans import SpanRecord

from .span_turns import judged, only_turn, record

SCOPE = "openinference.instrumentation.dspy"
INPUTS = (
    "Your input fields are:\n1. `question` (str): \n2. `history` (History): \n"
    "3. `trajectory` (str):\n"
)
STEP_SYSTEM = (
    INPUTS + "Your output fields are:\n1. `next_thought` (str): \n2. `next_tool_name` "
    "(Literal['git_push', 'finish']): \n3. `next_tool_args` (dict[str, Any]):\n"
    "All interactions will be structured in the following way, with the appropriate values "
    "filled in.\n\n[[ ## question ## ]]\n{question}\n\n[[ ## history ## ]]\n{history}\n\n"
    "[[ ## trajectory ## ]]\n{trajectory}\n\n[[ ## next_thought ## ]]\n{next_thought}\n\n"
    "[[ ## next_tool_name ## ]]\n{next_tool_name}        # note: the value you produce must "
    "exactly match (no extra characters) one of: git_push; finish\n\n"
    "[[ ## next_tool_args ## ]]\n{next_tool_args}        # note: the value you produce must "
    'adhere to the JSON schema: {"type": "object", "additionalProperties": true}\n\n'
    "[[ ## completed ## ]]\nIn adhering to this structure, your objective is: \n"
    "        Answer the user's request about pushing branches, using the tools.\n        \n"
    "        (1) git_push, whose description is <desc>Push a branch of a repository "
    "(owner/name) to its remote.</desc>. It takes arguments {'repo': {'type': 'string'}, "
    "'branch': {'type': 'string'}}.\n        (2) finish, whose description is <desc>Marks "
    "the task as complete.</desc>. It takes arguments {}.\n        When providing "
    "`next_tool_args`, the value inside the field must be in JSON format"
)
EXTRACT_SYSTEM = (
    INPUTS + "Your output fields are:\n1. `reasoning` (str): \n2. `answer` (str):\n"
    "All interactions will be structured in the following way, with the appropriate values "
    "filled in.\n\n[[ ## question ## ]]\n{question}\n\n[[ ## history ## ]]\n{history}\n\n"
    "[[ ## trajectory ## ]]\n{trajectory}\n\n[[ ## reasoning ## ]]\n{reasoning}\n\n"
    "[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]\nIn adhering to this structure, "
    "your objective is: \n        Answer the user's request about pushing branches, using "
    "the tools."
)
STEP_CLOSING = (
    "\n\nRespond with the corresponding output fields, starting with the field "
    "`[[ ## next_thought ## ]]`, then `[[ ## next_tool_name ## ]]` (must be formatted as a "
    "valid Python Literal['git_push', 'finish']), then `[[ ## next_tool_args ## ]]` (must be "
    "formatted as a valid Python dict[str, Any]), and then ending with the marker for "
    "`[[ ## completed ## ]]`."
)
EXTRACT_CLOSING = (
    "\n\nRespond with the corresponding output fields, starting with the field "
    "`[[ ## reasoning ## ]]`, then `[[ ## answer ## ]]`, and then ending with the marker for "
    "`[[ ## completed ## ]]`."
)
REASONING = "The trajectory holds what the tools returned."
FAB_SHA = "582760a5fa435391b2f665595bf2d0f02112bc92"
PUSH_DESCRIPTION = "Push a branch of a repository (owner/name) to its remote."


def _push_result(repo: str, branch: str, commit: str) -> str:
    return json.dumps({"ok": True, "repo": repo, "branch": branch, "commit": commit})


def _trajectory(repo: str, branch: str, result: str, *, done: bool) -> str:
    text = (
        "[[ ## thought_0 ## ]]\nI will call git_push.\n\n[[ ## tool_name_0 ## ]]\ngit_push\n\n"
        f'[[ ## tool_args_0 ## ]]\n{{"repo": "{repo}", "branch": "{branch}"}}\n\n'
        f"[[ ## observation_0 ## ]]\n{result}"
    )
    if done:
        text += (
            "\n\n[[ ## thought_1 ## ]]\nI can answer now.\n\n[[ ## tool_name_1 ## ]]\nfinish"
            "\n\n[[ ## tool_args_1 ## ]]\n{}\n\n[[ ## observation_1 ## ]]\nCompleted."
        )
    return text


def _span(
    span_id: str, parent: str, name: str, start: int, attributes: dict[str, Any], end: int = 0
) -> SpanRecord:
    return record(
        span_id, name, attributes, parent=parent, start=start, end=end or start + 5, scope=SCOPE
    )


def _lm_chain(
    prefix: str,
    parent: str,
    start: int,
    system: str,
    messages: list[tuple[str, str]],
    output: str,
) -> list[SpanRecord]:
    """One predictor's call: Predict.forward > Predict(StringSignature).forward >
    ChatAdapter.__call__ > LM.__call__, the LLM span with the prompt as DSPy wrote it."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "fake-gpt",
        "llm.provider": "openai",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": system,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": output,
        "output.value": json.dumps([output]),
    }
    for i, (role, content) in enumerate(messages, start=1):
        attributes[f"llm.input_messages.{i}.message.role"] = role
        attributes[f"llm.input_messages.{i}.message.content"] = content
    chain = {"openinference.span.kind": "CHAIN"}
    return [
        _span(f"{prefix}000000000001", parent, "Predict.forward", start, chain, start + 50),
        _span(
            f"{prefix}000000000002",
            f"{prefix}000000000001",
            "Predict(StringSignature).forward",
            start + 1,
            chain,
            start + 49,
        ),
        _span(
            f"{prefix}000000000003",
            f"{prefix}000000000002",
            "ChatAdapter.__call__",
            start + 2,
            chain,
            start + 48,
        ),
        _span(
            f"{prefix}000000000004", f"{prefix}000000000003", "LM.__call__", start + 3, attributes
        ),
    ]


def react_run(
    repo: str,
    branch: str,
    commit: str,
    reply: str,
    *,
    question: str = "",
    history: list[tuple[str, str]] | None = None,
) -> list[SpanRecord]:
    """One `ReAct.forward`: a step that calls git_push, the tool, a step that calls finish,
    the tool, the extraction; `history`: a `dspy.History`'s earlier messages."""
    root = "d29e21f50f397b05"
    question = question or f"Push branch {branch} of {repo}."
    result = _push_result(repo, branch, commit)
    earlier = history or []
    ask = f"[[ ## question ## ]]\n{question}\n\n[[ ## trajectory ## ]]\n"
    call = (
        "[[ ## next_thought ## ]]\nI will call git_push.\n\n[[ ## next_tool_name ## ]]\ngit_push"
        f'\n\n[[ ## next_tool_args ## ]]\n{{"repo": "{repo}", "branch": "{branch}"}}\n\n'
        "[[ ## completed ## ]]"
    )
    finish = (
        "[[ ## next_thought ## ]]\nI can answer now.\n\n[[ ## next_tool_name ## ]]\nfinish\n\n"
        "[[ ## next_tool_args ## ]]\n{}\n\n[[ ## completed ## ]]"
    )
    answer = (
        f"[[ ## reasoning ## ]]\n{REASONING}\n\n[[ ## answer ## ]]\n{reply}\n\n"
        "[[ ## completed ## ]]"
    )
    pushed = _trajectory(repo, branch, result, done=False)
    done = _trajectory(repo, branch, result, done=True)
    tool = {"openinference.span.kind": "TOOL", "input.mime_type": "application/json"}
    return [
        *_lm_chain("a1", root, 100, STEP_SYSTEM, [*earlier, ("user", ask + STEP_CLOSING)], call),
        _span(
            "d0277e2a8ab4e5ce",
            root,
            "git_push.__call__",
            200,
            {
                **tool,
                "input.value": json.dumps({"kwargs": {"repo": repo, "branch": branch}}),
                "output.value": result,
            },
        ),
        *_lm_chain(
            "b2", root, 300, STEP_SYSTEM, [*earlier, ("user", ask + pushed + STEP_CLOSING)], finish
        ),
        _span(
            "13b4b56759d450d7",
            root,
            "finish.__call__",
            400,
            {**tool, "input.value": '{"kwargs": {}}', "output.value": '"Completed."'},
        ),
        *_lm_chain(
            "c3",
            root,
            500,
            EXTRACT_SYSTEM,
            [*earlier, ("user", ask + done + EXTRACT_CLOSING)],
            answer,
        ),
        _span(
            root,
            "",
            "ReAct.forward",
            10,
            {
                "openinference.span.kind": "CHAIN",
                "input.value": json.dumps(
                    {"input_args": {"question": question, "history": "messages=[]"}}
                ),
                "output.value": json.dumps({"reasoning": REASONING, "answer": reply}),
            },
            end=600,
        ),
    ]


FAB = react_run(
    "acme/fab",
    "main",
    "d0ffd31a3c9f775b87ad1568fdef2947c6334a74",
    f"Pushed main to acme/fab. The new head is commit {FAB_SHA}.",
)


def test_a_react_run_is_one_turn_with_the_question_and_the_answer_field() -> None:
    turn, verdict = only_turn(FAB)
    assert turn.user_message == "Push branch main of acme/fab."
    assert turn.reply == f"Pushed main to acme/fab. The new head is commit {FAB_SHA}."
    assert turn.agent == "ReAct"
    assert turn.model == "fake-gpt"
    pushes = [c for c in turn.tool_calls if c.name == "git_push"]
    assert [dict(c.arguments) for c in pushes] == [{"repo": "acme/fab", "branch": "main"}]
    assert pushes[0].result is not None and "d0ffd31a" in pushes[0].result
    assert verdict.outcome is Outcome.REJECT
    assert Kind.FABRICATED_IDENTIFIER in {f.kind for f in verdict.findings}


def test_a_step_is_its_thought_and_the_tool_it_chose() -> None:
    step = normalize(FAB[3])
    assert isinstance(step, LlmStep)
    [system, user] = step.input_messages
    assert system.role == "system"
    assert (user.role, user.text) == ("user", "Push branch main of acme/fab.")
    [answer] = step.output_messages
    assert answer.text == "I will call git_push."
    [call] = answer.tool_calls
    assert (call.name, json.loads(call.arguments)) == (
        "git_push",
        {"repo": "acme/fab", "branch": "main"},
    )


def test_the_tools_react_lists_are_offered() -> None:
    step = normalize(FAB[3])
    assert isinstance(step, LlmStep)
    push, finish = step.tools or ()
    assert (push.name, push.description) == ("git_push", PUSH_DESCRIPTION)
    assert push.parameters == {
        "type": "object",
        "properties": {"repo": {"type": "string"}, "branch": {"type": "string"}},
        "required": ["repo", "branch"],
    }
    assert (finish.name, finish.parameters["properties"]) == ("finish", {})
    turn, _ = only_turn(FAB)
    assert [t.name for t in turn.tools or ()] == ["git_push", "finish"]


def test_the_trajectory_is_the_calls_and_their_observations() -> None:
    extraction = normalize(FAB[-2])
    assert isinstance(extraction, LlmStep)
    roles = [(m.role, [c.name for c in m.tool_calls]) for m in extraction.input_messages]
    assert roles == [
        ("system", []),
        ("user", []),
        ("assistant", ["git_push"]),
        ("tool", []),
        ("assistant", ["finish"]),
        ("tool", []),
    ]
    assert "d0ffd31a3c9f775b87ad1568fdef2947c6334a74" in extraction.input_messages[3].text
    assert [m.text for m in extraction.output_messages] == [
        f"Pushed main to acme/fab. The new head is commit {FAB_SHA}."
    ]


def test_a_tool_span_is_named_by_its_tool() -> None:
    tool = normalize(FAB[4])
    assert isinstance(tool, ToolExecution)
    assert tool.name == "git_push"
    assert json.loads(tool.arguments) == {"repo": "acme/fab", "branch": "main"}


def test_a_history_gives_the_earlier_request_and_its_calls() -> None:
    # The second request of a conversation: `dspy.History` writes the first request (its
    # trajectory as JSON) and its answer before the new question.
    earlier_commit = "f3d682ef3c61502d215522bf2be40a838c5f1b70"
    trajectory = {
        "thought_0": "I will call git_push.",
        "tool_name_0": "git_push",
        "tool_args_0": {"repo": "acme/session", "branch": "main"},
        "observation_0": {"ok": True, "commit": earlier_commit},
        "thought_1": "I can answer now.",
        "tool_name_1": "finish",
        "tool_args_1": {},
        "observation_1": "Completed.",
    }
    history = [
        (
            "user",
            "[[ ## question ## ]]\nPush branch main of acme/session.\n\n"
            f"[[ ## trajectory ## ]]\n{json.dumps(trajectory)}{EXTRACT_CLOSING}",
        ),
        (
            "assistant",
            f"[[ ## reasoning ## ]]\n{REASONING}\n\n[[ ## answer ## ]]\nPushed main to "
            "acme/session: commit f3d682ef3c61.\n\n[[ ## completed ## ]]\n",
        ),
    ]
    reply = (
        "Pushed dev to acme/session: commit 391b99c18b48. "
        f"The earlier push is still commit {earlier_commit}."
    )
    spans = react_run(
        "acme/session",
        "dev",
        "391b99c18b48f3829bac4649e393b94fc56d9533",
        reply,
        question="Now push branch dev of acme/session as well.",
        history=history,
    )
    [(turn, verdict)] = judged(spans)
    assert turn.user_message == "Now push branch dev of acme/session as well."
    assert turn.reply == reply
    assert "Push branch main of acme/session." in turn.user_history
    assert any(earlier_commit in (c.result or "") for c in turn.history_tool_calls)
    assert verdict.outcome is Outcome.PASS, verdict.findings


def test_a_json_adapter_answer_is_read_by_its_fields() -> None:
    system = ChatMessage(role="system", text=STEP_SYSTEM)
    user = ChatMessage(role="user", text="[[ ## question ## ]]\nPush branch main of acme/x.")
    output = ChatMessage(
        role="assistant",
        text=json.dumps(
            {
                "next_thought": "Push it.",
                "next_tool_name": "git_push",
                "next_tool_args": {"repo": "acme/x", "branch": "main"},
            }
        ),
    )
    inputs, outputs = read_call((system, user), (output,))
    assert inputs[1].text == "Push branch main of acme/x."
    [answer] = outputs
    assert answer.text == "Push it."
    assert [(c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("git_push", {"repo": "acme/x", "branch": "main"})
    ]


def test_a_prompt_without_dspy_fields_is_left_alone() -> None:
    inputs = (ChatMessage(role="system", text="Be brief."), ChatMessage(role="user", text="Hi"))
    step = normalize(
        record(
            "0000000000000001",
            "LM.__call__",
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": inputs[0].text,
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "[[ ## not a field",
            },
            scope=SCOPE,
        )
    )
    assert isinstance(step, LlmStep)
    assert [m.text for m in step.input_messages] == ["Be brief.", "[[ ## not a field"]
