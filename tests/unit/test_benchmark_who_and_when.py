"""benchmarks.who_and_when: a Who&When group chat read as turns, and the fixed scope rule,
on a run written here (the dataset itself is the benchmark's input, not the tests')."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.measure_who_and_when import (
    distinctive_words,
    evidence_matched,
    judge,
    report,
)
from benchmarks.who_and_when import (
    EXECUTE_CODE,
    OTHER_BUCKET,
    Run,
    classify_reason,
    run_from_record,
    run_turns,
)
from factledger.processors.runner import default_runner

TASK = (
    "You are given: (1) a task and advises from your manager with a specific plan and (2) a "
    "general task.\n# General Task\nHow many rows does sales.csv have?"
)
CODE = "import pandas as pd\nprint(len(pd.read_csv('sales.csv')))"
ANALYST = f"Let me count the rows.\n```python\n{CODE}\n```\nPlease run it."
FAILED = "exitcode: 1 (execution failed)\nCode output: FileNotFoundError: sales.csv"
REVIEWER = "The code failed: sales.csv is missing, so we cannot count the rows yet."


def _record(step: int, *extra: dict[str, str], reason: str = "The code is wrong.") -> Any:
    return {
        "question": "How many rows does sales.csv have?",
        "history": [
            {"role": "assistant", "name": "Data_Expert", "content": TASK},
            {"role": "user", "name": "Data_Expert", "content": ANALYST},
            {"role": "user", "name": "Computer_terminal", "content": FAILED},
            {"role": "user", "name": "Review_Expert", "content": REVIEWER},
            *extra,
        ],
        "mistake_agent": "Data_Expert",
        "mistake_step": str(step),
        "mistake_reason": reason,
        "system_prompt": {"Data_Expert": "## Your role\nData_Expert", "Review_Expert": "Reviewer"},
    }


def _run(step: int = 3, *extra: dict[str, str], reason: str = "The code is wrong.") -> Run:
    return run_from_record("7", _record(step, *extra, reason=reason))


def test_an_expert_message_with_code_is_a_turn_whose_call_is_the_terminal_run() -> None:
    first, _ = run_turns(_run())

    assert (first.index, first.turn.agent, first.turn.reply) == (1, "Data_Expert", ANALYST)
    assert first.turn.user_message == TASK
    assert first.turn.system_prompt == "## Your role\nData_Expert"
    assert first.turn.tools == (EXECUTE_CODE,)
    (call,) = first.turn.tool_calls
    assert (call.name, dict(call.arguments)) == (
        "execute_code",
        {"code": CODE, "language": "python"},
    )
    assert (call.result, call.error) == (FAILED, True)
    assert first.turn.history_tool_calls == () and first.turn.context == ()
    assert first.turn.turn_id == "who_and_when/7/step01"


def test_the_next_expert_sees_the_execution_as_history_and_the_code_as_conversation() -> None:
    _, second = run_turns(_run())

    assert (second.index, second.turn.agent, second.turn.reply) == (3, "Review_Expert", REVIEWER)
    assert second.turn.tool_calls == ()
    assert [c.call_id for c in second.turn.history_tool_calls] == ["exec_01"]
    # The terminal's answer is a result, not conversation; the other expert speaks as user.
    assert [(m.role, m.content) for m in second.turn.context] == [("user", ANALYST)]


def test_a_successful_run_is_no_failure_and_unanswered_code_is_no_call() -> None:
    record = _record(3)
    record["history"][2]["content"] = "exitcode: 0 (execution succeeded)\nCode output: 12"
    record["history"][3]["content"] = "Try this:\n```sh\nwc -l sales.csv\n```"
    first, second = run_turns(run_from_record("7", record))
    assert first.turn.tool_calls[0].error is False
    assert second.turn.tool_calls == ()  # no terminal answered: the code never ran


@pytest.mark.parametrize(
    ("step", "positions"),
    [
        pytest.param(3, ["clean", "mistake"], id="labelled-reply-and-clean-before"),
        pytest.param(1, ["mistake", "after"], id="first-reply-labelled"),
        pytest.param(2, ["mistake", "after"], id="terminal-step-is-the-code-writers-mistake"),
        pytest.param(0, ["after", "after"], id="task-message-labelled-has-no-clean-turns"),
    ],
)
def test_turns_stand_before_at_or_after_the_labelled_step(step: int, positions: list[str]) -> None:
    assert [t.position for t in run_turns(_run(step))] == positions


def test_terminate_alone_is_no_turn() -> None:
    done = {"role": "user", "name": "Review_Expert", "content": "TERMINATE"}
    assert [t.index for t in run_turns(_run(3, done))] == [1, 3]


def test_a_browser_page_is_the_surfers_call_with_an_empty_reply() -> None:
    page = {
        "role": "user",
        "name": "WebServing_Expert",
        "content": "Address: bing: sales.csv rows\nTitle: sales.csv rows - Search\n"
        "Viewport position: Showing page 1 of 1.\n=======================\n"
        "1. [Sales](https://example.org/sales)",
    }
    surfer = run_turns(_run(3, page))[-1]
    assert surfer.turn.reply == ""
    (call,) = surfer.turn.tool_calls
    assert (call.name, dict(call.arguments)) == (
        "informational_web_search",
        {"query": "sales.csv rows"},
    )
    assert "visit_page" in (surfer.turn.offered_tool_names or ())


@pytest.mark.parametrize(
    ("reason", "bucket"),
    [
        ("The agent fabricated the population figures.", "fabricated"),
        ("The expert uses placeholders in the code.", "fabricated"),
        ("The agent uses its internal knowledge to list the stops.", "unbacked_result"),
        ("It directly reaches a conclusion without taking any actual actions.", "unbacked_result"),
        ("The Verification_Expert provided incorrect code.", "wrong_code"),
        ("The expert did not verify the schedule.", "not_verified"),
        ("The plan to solve the problem is incorrect.", "wrong_plan_or_task"),
        ("Dropping NaN rows emptied the inventory.", OTHER_BUCKET),
        ("The answer provided by Cubing_Expert was incorrect.", OTHER_BUCKET),
    ],
)
def test_the_scope_rule_buckets_reasons_by_their_words(reason: str, bucket: str) -> None:
    assert classify_reason(reason) == bucket


def test_evidence_words_leave_out_the_vocabulary_of_mistakes() -> None:
    words = distinctive_words("The agent fabricated the population figures for Seattle in 2020.")
    assert words == {"population", "seattle", "2020"}


def test_the_suite_judges_the_turns_and_the_report_counts_them() -> None:
    run = _run(3, reason="The agent fabricated the row count.")
    judged = judge(run_turns(run), default_runner())

    assert [j.verdict.outcome.value for j in judged] == ["pass", "pass"]
    assert not evidence_matched(judged[1])
    text = "\n".join(report([run], judged))
    assert "2 expert turns checked (1 clean, 1 labelled, 0 after the label" in text
    assert "fabricated 1 (in scope)" in text
    assert "fabricated             1 turns  recall   0.0% (0/1)" in text
