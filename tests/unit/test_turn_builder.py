"""turn_builder: the normalized spans of one turn -> Turn, and where turns split."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.assembly.turn_builder import (
    TurnSpans,
    awaits_tools,
    build_turn,
    final_step,
    split_turns,
    turn_id_for,
)
from factledger.processors.kinds import Kind
from factledger.processors.model import ToolDefinition
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    ToolCallPart,
    ToolExecution,
)
from factledger.processors.runner import default_runner

SHA = "9d22a7cdeadbeef1"
TRACE = "0af7651916cd43dd8448eb211c80319c"
PUSH_TOOLS = (
    ToolDefinition("run_tests", {"type": "object", "properties": {}}),
    ToolDefinition("git_push", {"type": "object", "properties": {"branch": {"type": "string"}}}),
)


def system(text: str) -> ChatMessage:
    return ChatMessage("system", text)


def user(text: str) -> ChatMessage:
    return ChatMessage("user", text)


def assistant(text: str = "", *calls: ToolCallPart) -> ChatMessage:
    return ChatMessage("assistant", text, tool_calls=calls)


def call(call_id: str, name: str, arguments: str = "{}") -> ToolCallPart:
    return ToolCallPart(call_id, name, arguments)


def result(call_id: str, text: str, *, error: bool = False) -> ChatMessage:
    return ChatMessage("tool", text, tool_call_id=call_id, is_error=error)


def step(
    span_id: str,
    inputs: tuple[ChatMessage, ...],
    output: ChatMessage,
    *,
    at: int = 0,
    **fields: object,
) -> LlmStep:
    return LlmStep(
        span_id,
        input_messages=inputs,
        output_messages=(output,),
        start_time_unix_nano=at,
        end_time_unix_nano=at + 5 if at else 0,
        **fields,  # type: ignore[arg-type]
    )


def execution(span_id: str, name: str, call_id: str = "", **fields: object) -> ToolExecution:
    return ToolExecution(span_id, name, call_id, **fields)  # type: ignore[arg-type]


# A coding turn: run the tests, push the fix, report.
ASK = (system("You are a coding agent."), user("Fix the flaky test and push it to main."))
PLAN = assistant("", call("c1", "run_tests"))
TESTS_OK = result("c1", "48 passed")
PUSH = assistant("", call("c2", "git_push", '{"branch": "main"}'))
PUSHED = result("c2", f"pushed {SHA} to main")
REPLY = assistant(f"I pushed the fix, commit {SHA}.")
HISTORY = (*ASK, PLAN, TESTS_OK, PUSH, PUSHED)


def lone_final_call(**fields: Any) -> LlmStep:
    return step("s3", HISTORY, REPLY, model="gpt-4o", provider="openai", **fields)


def spans(*steps: LlmStep, tools: tuple[ToolExecution, ...] = (), **fields: object) -> TurnSpans:
    return TurnSpans(steps=steps, tools=tools, **fields)  # type: ignore[arg-type]


# --- a turn from a lone final call ---------------------------------------------------------


def test_lone_final_call_carries_the_whole_turn():
    turn = build_turn(
        spans(
            lone_final_call(tools=PUSH_TOOLS, conversation_id="conv-1", agent_name="fixer"),
            tenant="acme",
            trace_id=TRACE,
            service="agent-svc",
        )
    )
    assert turn.user_message == "Fix the flaky test and push it to main."
    assert turn.reply == f"I pushed the fix, commit {SHA}."
    assert [(c.name, c.call_id, c.result, c.step) for c in turn.tool_calls] == [
        ("run_tests", "c1", "48 passed", 0),
        ("git_push", "c2", f"pushed {SHA} to main", 1),
    ]
    assert turn.tool_calls[1].arguments == {"branch": "main"}
    assert turn.steps == ("", "")
    assert turn.system_prompt == "You are a coding agent."
    assert (turn.model, turn.provider, turn.agent) == ("gpt-4o", "openai", "fixer")
    assert turn.tools == PUSH_TOOLS
    assert (turn.tenant, turn.trace_id, turn.conversation_id, turn.service) == (
        "acme",
        TRACE,
        "conv-1",
        "agent-svc",
    )
    assert turn.turn_id == turn_id_for("acme", TRACE, 1, "Fix the flaky test and push it to main.")
    assert default_runner().validate(turn).outcome == "pass"


def test_turn_id_is_stable_and_scoped():
    one = build_turn(spans(lone_final_call(), tenant="acme", trace_id=TRACE))
    again = build_turn(spans(lone_final_call(), tenant="acme", trace_id=TRACE))
    other_tenant = build_turn(spans(lone_final_call(), tenant="other", trace_id=TRACE))
    assert one.turn_id == again.turn_id
    assert len(one.turn_id) == 32
    assert other_tenant.turn_id != one.turn_id


def test_unknown_tools_stay_unknown():
    assert build_turn(spans(lone_final_call())).tools is None


def test_system_instructions_outside_the_messages_become_the_system_prompt():
    s = step("s1", (user("hi"),), assistant("hello"), system_instructions="Be terse.")
    assert build_turn(spans(s)).system_prompt == "Be terse."


def test_failed_final_call_without_output_gives_empty_reply_not_the_previous_one():
    earlier = (user("first"), assistant("first answer"), user("second"))
    failed = LlmStep("s1", input_messages=earlier, output_messages=())
    turn = build_turn(spans(failed))
    assert (turn.user_message, turn.reply) == ("second", "")


def test_needs_a_step_or_an_agent():
    with pytest.raises(ValueError, match="LLM step or an agent span"):
        build_turn(spans())


def test_agent_span_alone_gives_request_and_reply():
    agent = AgentInvocation("a1", agent_name="fixer", input_text="hi", output_text="hello")
    turn = build_turn(TurnSpans(agent=agent, trace_id=TRACE))
    assert (turn.user_message, turn.reply, turn.agent) == ("hi", "hello", "fixer")


# --- execute_tool spans enrich the messages --------------------------------------------------

NO_RESULTS = (*ASK, PLAN, PUSH)  # a framework that does not echo tool results


@pytest.mark.parametrize(
    ("history", "executions", "expected"),
    [
        pytest.param(
            NO_RESULTS,
            (
                execution("t1", "run_tests", "c1", result="48 passed"),
                execution("t2", "git_push", "c2", result=f"pushed {SHA}"),
            ),
            [("c1", "48 passed", False, "t1"), ("c2", f"pushed {SHA}", False, "t2")],
            id="results-only-in-tool-spans",
        ),
        pytest.param(
            HISTORY,
            (execution("t2", "git_push", "c2", result="remote rejected", error=True),),
            [("c1", "48 passed", False, None), ("c2", "remote rejected", True, "t2")],
            id="tool-span-result-and-error-win-over-message",
        ),
        pytest.param(
            HISTORY,
            (execution("t2", "git_push", "c2"),),
            [("c1", "48 passed", False, None), ("c2", f"pushed {SHA} to main", False, "t2")],
            id="tool-span-without-result-keeps-message-result",
        ),
        pytest.param(
            NO_RESULTS,
            (
                execution("t2", "git_push", result="pushed", start_time_unix_nano=20),
                execution("t1", "run_tests", result="48 passed", start_time_unix_nano=10),
            ),
            [("c1", "48 passed", False, "t1"), ("c2", "pushed", False, "t2")],
            id="ids-missing-match-by-name-and-order",
        ),
        pytest.param(
            # Parallel calls in one message (pydantic-ai's joke agent asks for three
            # suggestions at once); the results exist only on the tool spans.
            (*ASK, assistant("", call("p1", "pun"), call("p2", "dad_joke"), call("p3", "quip"))),
            (
                execution("t1", "pun", "p1", result="pun idea", start_time_unix_nano=10),
                execution("t3", "quip", "p3", result="quip idea", start_time_unix_nano=11),
                execution("t2", "dad_joke", "p2", result="dad joke idea", start_time_unix_nano=12),
            ),
            [
                ("p1", "pun idea", False, "t1"),
                ("p2", "dad joke idea", False, "t2"),
                ("p3", "quip idea", False, "t3"),
            ],
            id="parallel-calls-each-get-their-own-span-result",
        ),
    ],
)
def test_tool_executions_enrich_calls(history, executions, expected):
    turn = build_turn(spans(step("s3", history, REPLY), tools=executions))
    got = [(c.call_id, c.result, c.error, c.span_id) for c in turn.tool_calls]
    assert got == expected


def test_tool_seen_only_as_execution_becomes_a_call():
    lookup = execution("t9", "lookup_user", "c9", arguments='{"id": "u1"}', result="Ada")
    turn = build_turn(spans(lone_final_call(), tools=(lookup,)))
    added = turn.tool_calls[-1]
    assert (added.name, added.call_id, added.result, added.span_id) == (
        "lookup_user",
        "c9",
        "Ada",
        "t9",
    )
    assert added.arguments == {"id": "u1"}


def test_failed_push_span_makes_the_success_claim_an_error_reported_as_success():
    failed = execution("t2", "git_push", "c2", result="", error=True)
    turn = build_turn(spans(lone_final_call(tools=PUSH_TOOLS), tools=(failed,)))
    assert turn.tool_calls[1].error
    verdict = default_runner().validate(turn)
    assert verdict.outcome == "reject"
    assert Kind.ERROR_REPORTED_AS_SUCCESS.value in verdict.kinds


def test_calls_missing_from_the_final_history_are_kept():
    # A framework that sends only the last exchange: the first call's request is lost
    # from the final input, but its own span still shows it.
    first = step("s1", ASK, PLAN, at=10)
    final = step("s2", (*ASK, TESTS_OK), REPLY, at=30)
    turn = build_turn(spans(first, final))
    assert [(c.name, c.result) for c in turn.tool_calls] == [("run_tests", "48 passed")]


# --- which call is the reply --------------------------------------------------------------


def test_last_step_with_only_tool_calls_means_no_reply():
    first = step("s1", ASK, assistant("", call("c1", "run_tests")), at=10)
    assert awaits_tools([first])
    turn = build_turn(spans(first))
    assert turn.reply == ""
    assert [c.name for c in turn.tool_calls] == ["run_tests"]


def test_agent_output_is_the_reply_when_the_loop_ends_in_a_tool_call():
    last = step("s1", ASK, assistant("", call("c1", "final_answer", '{"answer": "Done."}')))
    agent = AgentInvocation("a1", input_text=ASK[1].text, output_text="All tests pass.")
    assert build_turn(TurnSpans(steps=(last,), agent=agent)).reply == "All tests pass."


def test_side_call_with_its_own_request_is_not_the_reply():
    main = step("s1", HISTORY, REPLY, at=10)
    title = step("s2", (user("Give this chat a title."),), assistant("Flaky test fix"), at=20)
    assert final_step([main, title]) is main
    assert build_turn(spans(main, title)).reply == REPLY.text


# --- several turns: split at each new user request ----------------------------------------

TURN2_ASK = (*HISTORY, REPLY, user("Now open a PR."))
PR = assistant("", call("c3", "create_pr"))


def test_one_trace_with_two_requests_splits_into_two_turns():
    s1 = step("s1", ASK, PLAN, at=10)
    s2 = step("s2", HISTORY, REPLY, at=20)
    s3 = step("s3", TURN2_ASK, PR, at=30)
    s4 = step(
        "s4", (*TURN2_ASK, PR, result("c3", "PR #12 opened")), assistant("Opened PR #12."), at=40
    )
    pr_span = execution("t3", "create_pr", "c3", start_time_unix_nano=35)
    stray = execution("t4", "notify", start_time_unix_nano=45)
    turns = split_turns([s4, s2, s3, s1], [stray, pr_span])
    assert [[s.span_id for s in steps] for steps, _ in turns] == [["s1", "s2"], ["s3", "s4"]]
    assert [[t.span_id for t in tools] for _, tools in turns] == [[], ["t3", "t4"]]
    first, second = (
        build_turn(spans(*steps, tools=tools, trace_id=TRACE)) for steps, tools in turns
    )
    assert (first.user_message, first.reply) == (ASK[1].text, REPLY.text)
    assert (second.user_message, second.reply) == ("Now open a PR.", "Opened PR #12.")
    assert [c.name for c in second.tool_calls] == ["create_pr", "notify"]
    assert [c.name for c in second.history_tool_calls] == ["run_tests", "git_push"]
    assert first.turn_id != second.turn_id


def test_per_call_chain_is_one_turn_with_the_first_calls_trace():
    # OpenInference without an agent span: each call is its own trace; the later calls'
    # inputs extend the earlier ones, so they answer the same request.
    calls = [
        step("a", ASK, PLAN, at=10),
        step("b", (*ASK, PLAN, TESTS_OK), PUSH, at=20),
        step("c", HISTORY, REPLY, at=30),
    ]
    [(steps, _)] = split_turns(calls)
    assert [s.span_id for s in steps] == ["a", "b", "c"]
    assert not awaits_tools(steps)
    turn = build_turn(spans(*steps, trace_id="trace-of-a"))
    assert turn.reply == REPLY.text
    assert turn.turn_id == turn_id_for("default", "trace-of-a", 1, ASK[1].text)


def test_the_same_text_asked_again_is_another_turn():
    again = (*HISTORY, REPLY, user(ASK[1].text))
    turns = split_turns([step("s1", HISTORY, REPLY, at=1), step("s2", again, REPLY, at=2)])
    assert len(turns) == 2
