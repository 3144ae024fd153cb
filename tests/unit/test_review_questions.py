"""The reviewer's question fits the finding: an argument flag asks about the argument (the
reply may be honest), an identifier flag whether the identifier is backed, a set lists its
names, and every kind of the vocabulary has its own question."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.dashboard.review_questions import (
    MAX_LISTED,
    MAX_TOKEN_CHARS,
    primary_finding,
    question_for,
)
from factledger.processors.kinds import Kind


def finding(kind: str, token: str = "", severity: str = "flag", score: float | None = None) -> Any:
    return {"kind": kind, "token": token, "severity": severity, "score": score}


@pytest.mark.parametrize(
    ("found", "asks"),
    [
        pytest.param(
            [finding("ungrounded_tool_argument", "to=farah.ops@acme.example")],
            "Judge the call, not the reply (it may be honest): was the argument "
            "`to=farah.ops@acme.example` invented?",
            id="argument-flag-asks-about-the-argument",
        ),
        pytest.param(
            [finding("missing_tool_arguments", "gh_put_file(content)")],
            "Judge the call, not the reply (it may be honest): was `gh_put_file(content)` "
            "called without",
            id="missing-argument-asks-about-the-call",
        ),
        pytest.param(
            [finding("fabricated_identifier", "OPS-9001", "reject")],
            "Is `OPS-9001` backed by a tool result or by the conversation?",
            id="identifier-asks-whether-it-is-backed",
        ),
        pytest.param(
            [
                {
                    **finding("error_reported_as_success", "sent", "reject"),
                    "checked_against": ["send_email"],
                }
            ],
            "The call `send_email` failed. Does the reply say it succeeded (“sent”)?",
            id="failed-call-names-the-call-not-the-claim",
        ),
        pytest.param(
            [
                {
                    **finding("error_reported_as_success", "booked", "reject"),
                    "checked_against": ["book_room", "book_desk"],
                }
            ],
            "The calls `book_room` and `book_desk` failed. Does the reply say they succeeded "
            "(“booked”)?",
            id="failed-calls-are-all-named",
        ),
        pytest.param(
            [finding("error_reported_as_success", "sent", "reject")],
            "A tool call failed. Does the reply say it succeeded (“sent”)?",
            id="failed-call-without-a-name",
        ),
        pytest.param(
            [finding("stall", "One moment, let me check.", "reject")],
            "The turn ends with a promise to act (“One moment, let me check.”)",
            id="stall-quotes-the-promise",
        ),
    ],
)
def test_the_question_fits_the_kind(found: list[Any], asks: str) -> None:
    assert question_for(found).ask.startswith(asks)


def test_a_set_lists_its_names_and_counts_the_rest() -> None:
    names = [f"tests/test_{i}.py" for i in range(MAX_LISTED + 2)]
    question = question_for([finding("confabulated_identifier_set", n, score=1.0) for n in names])
    assert question.kind == "confabulated_identifier_set"
    for name in names[:MAX_LISTED]:
        assert f"`{name}`" in question.ask
    assert names[-1] not in question.ask
    assert "and 2 more" in question.ask


@pytest.mark.parametrize("kind", [k.value for k in Kind if k is not Kind.VALIDATOR_ERROR])
def test_every_kind_has_its_own_question(kind: str) -> None:
    general = question_for([])
    question = question_for([finding(kind, "tok")])
    assert question.kind == kind
    assert question.ask != general.ask
    assert question.yes and question.no and question.yes != question.no


def test_without_a_token_the_question_still_reads() -> None:
    assert "`" not in question_for([finding("ungrounded_tool_argument")]).ask
    assert question_for([finding("stall")]).ask.startswith("The turn ends with a promise to act")


def test_the_most_severe_finding_decides_then_the_score() -> None:
    flag = finding("confabulated_identifier_set", "a.py", "flag", 0.4)
    higher = finding("confabulated_identifier_set", "b.py", "flag", 0.9)
    reject = finding("fabricated_identifier", "OPS-1", "reject")
    error = finding("validator_error", "", "info")
    assert question_for([error]).kind == "validator_error"
    assert primary_finding([flag, higher]) is higher
    assert primary_finding([error, flag, reject]) is reject
    assert primary_finding([error]) is error
    assert primary_finding([]) is None


def test_a_long_token_is_cut() -> None:
    ask = question_for([finding("fabricated_identifier", "x" * 500, "reject")]).ask
    assert "x" * MAX_TOKEN_CHARS not in ask
    assert "…" in ask
