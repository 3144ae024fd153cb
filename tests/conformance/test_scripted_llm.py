"""The scripted LLM itself: its decisions by request, and both APIs over real HTTP.

The conformance cases rely on it; these tests pin its script so a change to it shows here
first, not as a framework that suddenly misbehaves.
"""

from __future__ import annotations

import json

import httpx
import pytest

from .cases import conversation
from .dspy_adapter_answers import answer as dspy_answer
from .dspy_adapter_answers import is_dspy_request
from .fake_llm import (
    FakeLlm,
    by_function_name,
    chat_request,
    fitted,
    responses_request,
    with_message_arguments,
)
from .policy import Answer, Message, Request, ToolCallAnswer, decide
from .setups._common import FAILURE_TEXT, commit_sha, fabricated_sha

GIT = {"git_push": {"type": "object", "properties": {"repo": {"type": "string"}}}}
DELEGATE = {
    "release_engineer": {
        "type": "object",
        "properties": {"input": {"type": "string"}},
        "required": ["input"],
    }
}
SHA = commit_sha("acme/clean", "main")
SHA_TEAM = commit_sha("acme/team-clean", "main")
SHA_GUARD = commit_sha("acme/guard-fab", "main")
NUDGE = "[FACTLEDGER SELF-CORRECTION — not a user message] Your previous reply reports ..."


def _user(case: str, branch: str = "main") -> Message:
    return Message("user", f"Push branch {branch} of acme/{case}.")


def _pushed(result: str) -> tuple[Message, ...]:
    return (
        Message("assistant", calls=(("c1", "git_push"),)),
        Message("tool", result, answers="c1"),
    )


def _result(case: str, branch: str = "main") -> str:
    return json.dumps({"ok": True, "commit": commit_sha(f"acme/{case}", branch)})


DECISIONS = [
    pytest.param(
        Request("fake-gpt", (_user("clean"),), GIT),
        Answer(call=ToolCallAnswer("git_push", {"repo": "acme/clean", "branch": "main"})),
        id="offered-the-tool-and-no-result-yet-it-pushes",
    ),
    pytest.param(
        Request("fake-gpt", (_user("clean"), *_pushed(_result("clean"))), GIT),
        Answer(text=f"Pushed main to acme/clean: commit {SHA[:12]}."),
        id="clean-quotes-the-real-commit-prefix",
    ),
    pytest.param(
        Request("fake-gpt", (_user("fab"), *_pushed(_result("fab"))), GIT),
        Answer(
            text="Pushed main to acme/fab. The new head is commit "
            f"{fabricated_sha('acme/fab', 'main')}."
        ),
        id="fab-cites-a-commit-no-tool-returned",
    ),
    pytest.param(
        Request("fake-gpt", (_user("err-object"), *_pushed('{"ok": false}')), GIT),
        Answer(text="I pushed main to acme/err-object successfully."),
        id="err-claims-the-failed-push",
    ),
    pytest.param(
        Request("fake-gpt", (_user("team-clean"),), DELEGATE),
        Answer(
            call=ToolCallAnswer(
                "release_engineer", {"input": "Push branch main of acme/team-clean."}
            )
        ),
        id="a-lead-without-the-tool-delegates-with-the-request",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (_user("team-clean"),),
            {
                "handoff": {
                    "type": "object",
                    "properties": {"to_agent": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["to_agent", "reason"],
                }
            },
            {"handoff": "Currently available agents:\n{'release_engineer': 'Pushes branches.'}"},
        ),
        Answer(
            call=ToolCallAnswer(
                "handoff",
                {"to_agent": "release_engineer", "reason": "Push branch main of acme/team-clean."},
            )
        ),
        id="a-lead-hands-off-to-the-first-agent-its-handoff-tool-lists",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (_user("team-clean"), *_pushed(_result("team-clean"))),
            GIT,
        ),
        Answer(
            text=f"Pushed main to acme/team-clean: commit {commit_sha('acme/team-clean', 'main')}."
        ),
        id="a-team-worker-reports-the-full-commit",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                _user("team-clean"),
                Message("assistant", calls=(("h1", "transfer_to_release_engineer"),)),
                Message("tool", "Successfully transferred to release_engineer", answers="h1"),
                Message("assistant", f"Pushed main to acme/team-clean: commit {SHA_TEAM[:12]}."),
                Message("assistant", "Transferring back", calls=(("h2", "transfer_back"),)),
                Message("tool", "Successfully transferred back to release_lead", answers="h2"),
            ),
            {"transfer_to_release_engineer": {"type": "object", "properties": {}}},
        ),
        Answer(text=f"Pushed main to acme/team-clean: commit {SHA_TEAM[:12]}."),
        id="a-supervisor-quotes-its-workers-report-from-the-history",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                _user("session"),
                *_pushed(_result("session")),
                Message("assistant", "Pushed."),
                Message("user", "Now push branch dev of acme/session as well."),
                Message("assistant", calls=(("c2", "git_push"),)),
                Message("tool", _result("session", "dev"), answers="c2"),
            ),
            GIT,
        ),
        Answer(text=conversation("session")[1].reply),
        id="a-second-request-cites-the-earlier-push-too",
    ),
    pytest.param(
        Request("fake-code", (Message("system", "tools: git_push"), _user("clean"))),
        Answer(
            text="Thought: I will call git_push.\n<code>\n"
            "result = git_push(repo='acme/clean', branch='main')\nprint(result)\n</code>"
        ),
        id="a-code-model-writes-the-call-as-code",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                Message("user", "New task:\nPush branch main of acme/clean."),
                Message("assistant", "Calling tools:\n[{'id': 'c1', 'type': 'function'}]"),
                Message("user", f"Observation:\n{_result('clean')}"),
            ),
            {**GIT, "final_answer": {"type": "object"}},
        ),
        Answer(
            call=ToolCallAnswer(
                "final_answer", {"answer": f"Pushed main to acme/clean: commit {SHA[:12]}."}
            )
        ),
        id="a-text-observation-is-a-result-and-final-answer-carries-the-answer",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                Message(
                    "user",
                    f"Observation:\n{_result('session')}\n"
                    "New task:\nNow push branch dev of acme/session as well.",
                ),
            ),
            GIT,
        ),
        Answer(call=ToolCallAnswer("git_push", {"repo": "acme/session", "branch": "dev"})),
        id="an-observation-before-the-request-is-the-earlier-turns",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                Message(
                    "user",
                    "New task:\nPush branch main of acme/err-raise.\nError:\n"
                    "Error executing tool 'git_push': PushRejected: push rejected",
                ),
            ),
            GIT,
        ),
        Answer(text="I pushed main to acme/err-raise successfully."),
        id="an-error-merged-into-the-request-message-is-a-result",
    ),
    pytest.param(
        Request(
            "fake-code",
            (
                Message(
                    "system",
                    "Team members:\n<code>\ndef release_engineer(task: str, "
                    "additional_args: dict[str, Any]) -> str:\n</code>",
                ),
                _user("team-clean"),
            ),
        ),
        Answer(
            text="Thought: I will call release_engineer.\n<code>\nresult = release_engineer("
            "task='Push branch main of acme/team-clean.')\nprint(result)\n</code>"
        ),
        id="a-code-lead-delegates-to-the-function-its-prompt-declares",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                _user("guard-fab"),
                *_pushed(_result("guard-fab")),
                Message("assistant", "Pushed main. The new head is commit 1234."),
                Message("user", f"Validation feedback:\n{NUDGE} It names `1234`."),
            ),
            GIT,
        ),
        Answer(text=f"Pushed main to acme/guard-fab: commit {SHA_GUARD[:12]}."),
        id="after-a-nudge-it-answers-with-the-real-commit",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                _user("guard-fab-stuck"),
                *_pushed(_result("guard-fab-stuck")),
                Message("user", NUDGE),
            ),
            GIT,
        ),
        Answer(
            text="Pushed main to acme/guard-fab-stuck. The new head is commit "
            f"{fabricated_sha('acme/guard-fab-stuck', 'main')}."
        ),
        id="a-stuck-model-repeats-the-fabrication-after-a-nudge",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                _user("guard-err-object"),
                *_pushed(json.dumps({"ok": False, "error": FAILURE_TEXT})),
                Message("user", NUDGE),
            ),
            GIT,
        ),
        Answer(
            text=f"The push of main to acme/guard-err-object did not go through: {FAILURE_TEXT}"
        ),
        id="after-a-nudge-it-reports-the-failed-push",
    ),
    pytest.param(
        Request(
            "fake-gpt",
            (
                Message("user", f"Push branch main of acme/guard-echo on top of commit {SHA}."),
                *_pushed(_result("guard-echo")),
            ),
            GIT,
        ),
        Answer(text=f"Pushed main to acme/guard-echo on top of commit {SHA[:12]}."),
        id="an-echo-case-quotes-the-users-commit",
    ),
]


@pytest.mark.parametrize(("request_", "answer"), DECISIONS)
def test_decisions(request_: Request, answer: Answer) -> None:
    assert decide(request_) == answer


def _answer_tool(argument: str) -> dict[str, object]:
    return {"type": "object", "properties": {argument: {"type": "string"}}, "required": [argument]}


def test_an_answer_tool_gets_the_answer_in_the_one_argument_it_requires() -> None:
    answer = Answer(call=ToolCallAnswer("final_answer", {"answer": "Done."}))
    beeai = Request("m", (_user("clean"),), {"final_answer": _answer_tool("response")})
    smolagents = Request("m", (_user("clean"),), {"final_answer": _answer_tool("answer")})
    assert fitted(answer, beeai) == Answer(
        call=ToolCallAnswer("final_answer", {"response": "Done."})
    )
    assert fitted(answer, smolagents) == answer
    assert fitted(Answer(text="Done."), beeai) == Answer(text="Done.")


MESSAGES_DELEGATE = {
    "release_engineer": {
        "type": "object",
        "properties": {
            "messages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"role": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["role", "content"],
                },
            }
        },
        "required": ["messages"],
    }
}


def test_a_delegation_taking_chat_messages_is_handed_the_request_as_one() -> None:
    request = Request("fake-gpt", (_user("team-clean"),), MESSAGES_DELEGATE)
    answer = with_message_arguments(request, decide(request))
    task = [{"role": "user", "content": "Push branch main of acme/team-clean."}]
    assert answer == Answer(call=ToolCallAnswer("release_engineer", {"messages": task}))


@pytest.mark.parametrize(
    "request_",
    [
        pytest.param(Request("fake-gpt", (_user("clean"),), GIT), id="a-push"),
        pytest.param(Request("fake-gpt", (_user("team-clean"),), DELEGATE), id="string-args"),
        pytest.param(
            Request("fake-gpt", (_user("clean"), *_pushed(_result("clean"))), GIT), id="text"
        ),
    ],
)
def test_other_answers_are_left_as_decided(request_: Request) -> None:
    answer = decide(request_)
    assert with_message_arguments(request_, answer) == answer


def test_both_request_shapes_reduce_to_the_same_messages() -> None:
    chat = chat_request(
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "function": {"name": "git_push"}}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
            "tools": [{"type": "function", "function": {"name": "git_push", "parameters": {}}}],
        }
    )
    responses = responses_request(
        {
            "model": "m",
            "instructions": "be brief",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "function_call", "call_id": "c1", "name": "git_push", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            ],
            "tools": [{"type": "function", "name": "git_push", "parameters": {}}],
        }
    )
    assert chat == responses


def test_the_server_answers_both_apis_plain_and_streaming() -> None:
    with FakeLlm() as llm:
        user = {"role": "user", "content": "Push branch main of acme/clean."}
        tool = {"type": "function", "function": {"name": "git_push", "parameters": {}}}
        chat = httpx.post(
            f"{llm.base_url}/chat/completions",
            json={"model": "fake-gpt", "messages": [user], "tools": [tool]},
        ).json()
        call = chat["choices"][0]["message"]["tool_calls"][0]["function"]
        assert json.loads(call["arguments"]) == {"repo": "acme/clean", "branch": "main"}

        streamed = httpx.post(
            f"{llm.base_url}/chat/completions",
            json={"model": "fake-gpt", "messages": [user], "stream": True},
        ).text
        assert streamed.rstrip().endswith("data: [DONE]")

        response = httpx.post(
            f"{llm.base_url}/responses",
            json={"model": "fake-gpt", "input": user["content"], "stream": True},
        ).text
        events = [
            line.removeprefix("event: ") for line in response.splitlines() if "event:" in line
        ]
        assert events[0] == "response.created" and events[-1] == "response.completed"
        assert [e.api for e in llm.exchanges] == ["chat", "chat", "responses"]


_DSPY_TOOLS = (
    "        (1) git_push, whose description is <desc>Push a branch.</desc>. It takes "
    "arguments {'repo': {'type': 'string'}, 'branch': {'type': 'string'}}.\n"
    "        (2) finish, whose description is <desc>Marks the task as complete.</desc>. "
    "It takes arguments {}.\n"
)


def _dspy_body(outputs: str, *messages: tuple[str, str]) -> dict[str, object]:
    system = (
        "Your input fields are:\n1. `question` (str): \n2. `trajectory` (str):\n"
        f"Your output fields are:\n{outputs}\nAll interactions will be structured in the "
        f"following way.\n\n[[ ## question ## ]]\n{{question}}\n\n{_DSPY_TOOLS}"
    )
    return {
        "model": "fake-gpt",
        "messages": [
            {"role": "system", "content": system},
            *({"role": role, "content": text} for role, text in messages),
        ],
    }


_STEP_FIELDS = "1. `next_thought` (str): \n2. `next_tool_name` (str): \n3. `next_tool_args` (dict):"
_CLOSING = "\n\nRespond with the corresponding output fields, starting with the field ..."


def test_a_dspy_react_step_calls_the_tool_in_its_fields() -> None:
    question = "[[ ## question ## ]]\nPush branch main of acme/clean.\n\n[[ ## trajectory ## ]]\n"
    body = _dspy_body(_STEP_FIELDS, ("user", question + _CLOSING))
    assert is_dspy_request(body)
    _, _, text = dspy_answer(body)
    assert "[[ ## next_tool_name ## ]]\ngit_push\n" in text
    assert '{"repo": "acme/clean", "branch": "main"}' in text
    assert text.endswith("[[ ## completed ## ]]")


def test_a_dspy_extraction_answers_from_the_trajectory_and_the_history() -> None:
    earlier = commit_sha("acme/session", "main")
    history_trajectory = json.dumps(
        {"tool_name_0": "git_push", "tool_args_0": {}, "observation_0": {"commit": earlier}}
    )
    trajectory = (
        "[[ ## tool_name_0 ## ]]\ngit_push\n\n[[ ## tool_args_0 ## ]]\n{}\n\n"
        f"[[ ## observation_0 ## ]]\n{_result('session', 'dev')}"
    )
    body = _dspy_body(
        "1. `reasoning` (str): \n2. `answer` (str):",
        (
            "user",
            "[[ ## question ## ]]\nPush branch main of acme/session.\n\n"
            f"[[ ## trajectory ## ]]\n{history_trajectory}{_CLOSING}",
        ),
        ("assistant", "[[ ## answer ## ]]\nPushed main.\n\n[[ ## completed ## ]]"),
        (
            "user",
            "[[ ## question ## ]]\nNow push branch dev of acme/session as well.\n\n"
            f"[[ ## trajectory ## ]]\n{trajectory}{_CLOSING}",
        ),
    )
    _, decision, text = dspy_answer(body)
    sha = commit_sha("acme/session", "dev")
    wanted = (
        f"Pushed dev to acme/session: commit {sha[:12]}. "
        f"The earlier push is still commit {earlier}."
    )
    assert decision.text == wanted
    assert f"[[ ## answer ## ]]\n{wanted}\n" in text


def test_a_plugin_qualified_tool_is_read_by_its_function_name_and_called_as_offered() -> None:
    """Semantic Kernel offers `git_push` of plugin `Git` as `Git-git_push`."""
    qualified = {"Git-git_push": GIT["git_push"]}
    first, back = by_function_name(Request("fake-gpt", (_user("clean"),), qualified))
    assert set(first.tools) == {"git_push"}
    answer = back(decide(first))
    assert answer.call is not None and answer.call.name == "Git-git_push"
    calls = (
        Message("assistant", calls=(("c1", "Git-git_push"),)),
        Message("tool", _result("clean"), answers="c1"),
    )
    later, back = by_function_name(Request("fake-gpt", (_user("clean"), *calls), qualified))
    assert back(decide(later)) == Answer(text=f"Pushed main to acme/clean: commit {SHA[:12]}.")


def test_names_are_left_alone_when_the_function_name_is_offered_too() -> None:
    tools = {"Git-git_push": GIT["git_push"], **GIT}
    request = Request("fake-gpt", (_user("clean"),), tools)
    assert by_function_name(request)[0] == request


def test_a_responses_request_continues_the_response_it_names() -> None:
    with FakeLlm() as llm:
        tool = {"type": "function", "name": "git_push", "parameters": {}}
        first = httpx.post(
            f"{llm.base_url}/responses",
            json={"model": "fake-gpt", "input": "Push branch main of acme/clean.", "tools": [tool]},
        ).json()
        call = first["output"][0]
        result = {"type": "function_call_output", "call_id": call["call_id"], "output": SHA}
        second = httpx.post(
            f"{llm.base_url}/responses",
            json={"model": "fake-gpt", "input": [result], "previous_response_id": first["id"]},
        ).json()
        # Only the tool result was sent: the request and the call came from the first.
        assert second["output"][0]["content"][0]["text"] == conversation("clean")[0].reply
        roles = [m.role for m in llm.exchanges[-1].request.messages]
        assert roles == ["user", "assistant", "tool"]
