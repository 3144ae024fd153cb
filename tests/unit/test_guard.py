"""guard.check, CheckResult.annotate footnotes, and the self-correction nudge."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.guard import CheckResult, annotate_reply, check
from factledger.processors.kinds import Kind, Outcome, Severity
from factledger.processors.model import Finding, Turn
from factledger.processors.nudges import NUDGE_MARKER, build_nudge, is_framework_nudge
from factledger.processors.runner import ValidationRunner
from factledger.processors.settings import ValidationSettings

SHA = "3f9a1c2e7b4d5a6c8e9f0a1b2c3d4e5f6a7b8c9d"
OTHER_SHA = "b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "gh_list_commits",
            "parameters": {
                "type": "object",
                "properties": {"repo": {"type": "string"}},
                "required": ["repo"],
            },
        },
    }
]
FIRST_FLAG = "FactLedger note: this turn's tool trace does not back"
ESCALATED = "after a self-correction attempt"
USER_QUOTED = "was quoted from your message, not returned by a tool in this turn"


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "tools": TOOLS, "messages": list(messages)}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str | None, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


LIST_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "gh_list_commits", "arguments": '{"repo": "wintermute/agent"}'},
}

FABRICATED = chat(
    user("What is the latest commit on wintermute/agent?"),
    assistant(f"The latest commit is {SHA}."),
)
CLEAN = chat(
    user("What is the latest commit on wintermute/agent?"),
    assistant(None, tool_calls=[LIST_CALL]),
    {"role": "tool", "tool_call_id": "c1", "content": f'[{{"sha": "{SHA}", "message": "fix"}}]'},
    assistant(f"The latest commit is {SHA}."),
)
ECHO = chat(
    user(f"Is commit {SHA} the one we discussed?"),
    assistant(f"Commit {SHA} is the one you mentioned."),
)


def test_fabricated_sha_gets_a_nudge_naming_it():
    result = check(FABRICATED)
    assert result.outcome is Outcome.REJECT
    assert not result.ok
    assert [(f.kind, f.token) for f in result.findings] == [(Kind.FABRICATED_IDENTIFIER, SHA)]
    assert result.nudge is not None
    assert result.nudge.startswith(NUDGE_MARKER)
    assert f"`{SHA}`" in result.nudge
    assert "hallucination" in result.nudge
    assert is_framework_nudge(result.nudge)
    assert result.user_quoted == ()


def test_first_flag_footnote():
    result = check(FABRICATED)
    annotated = result.annotate()
    reply = f"The latest commit is {SHA}."
    assert annotated.startswith(reply + "\n\n⚠️ _")
    assert FIRST_FLAG in annotated
    assert f"`{SHA}` (fabricated_identifier)" in annotated
    assert ESCALATED not in annotated
    assert annotated.endswith("_")


def test_escalated_footnote_after_self_correction():
    annotated = check(FABRICATED).annotate(after_self_correction=True)
    assert f"still contains `{SHA}` (fabricated_identifier) {ESCALATED}" in annotated
    assert FIRST_FLAG not in annotated


def test_echo_of_user_given_sha_gets_user_quoted_footnote_and_no_nudge():
    result = check(ECHO)
    assert result.outcome is Outcome.PASS
    assert result.findings == ()
    assert result.nudge is None
    assert result.user_quoted == (SHA,)
    annotated = result.annotate()
    assert f"`{SHA}` {USER_QUOTED}" in annotated
    assert FIRST_FLAG not in annotated
    # The escalated wording is only for flagged findings, never for an echo.
    assert result.annotate(after_self_correction=True) == annotated


@pytest.mark.parametrize("after", [False, True], ids=["first", "after-self-correction"])
def test_clean_turn_reply_is_returned_unchanged(after):
    result = check(CLEAN)
    assert result.ok
    assert result.findings == ()
    assert result.nudge is None
    assert result.user_quoted == ()
    assert result.annotate(after_self_correction=after) == f"The latest commit is {SHA}."


def test_sha_named_only_in_an_earlier_nudge_is_still_fabricated():
    nudge = build_nudge([Finding(Kind.FABRICATED_IDENTIFIER, "m", token=SHA)])
    assert nudge is not None
    transcript = chat(
        user("hello"),
        assistant("hi"),
        user(nudge),
        assistant("Sorry, I cannot confirm any commit."),
        user("So which commit is the latest?"),
        assistant(f"The latest commit is {SHA}."),
    )
    result = check(transcript)
    assert result.turn.context[2].is_framework_nudge
    assert [f.kind for f in result.findings] == [Kind.FABRICATED_IDENTIFIER]
    assert result.user_quoted == ()
    assert result.nudge is not None


def test_same_sha_from_a_real_user_message_is_an_echo():
    transcript = chat(
        user(f"remember commit {SHA}"),
        assistant("ok"),
        user("So which commit was it?"),
        assistant(f"It was {SHA}."),
    )
    result = check(transcript)
    assert result.findings == ()
    assert result.user_quoted == (SHA,)


def test_retry_after_nudge_is_checked_as_the_same_turn():
    first = check(FABRICATED)
    assert first.nudge is not None
    retried = chat(
        *FABRICATED["messages"],
        user(first.nudge),
        assistant(f"Sorry: I have not looked it up. It might be {OTHER_SHA}."),
    )
    result = check(retried)
    assert result.turn.user_message == "What is the latest commit on wintermute/agent?"
    assert OTHER_SHA in {f.token for f in result.findings}
    assert ESCALATED in result.annotate(after_self_correction=True)


def test_check_accepts_a_turn_and_a_custom_runner():
    runner = ValidationRunner.from_settings(
        ValidationSettings(severity={Kind.FABRICATED_IDENTIFIER: Severity.FLAG})
    )
    result = check(Turn(reply=f"Commit {SHA}.", user_message="which?"), runner=runner)
    assert result.outcome is Outcome.FLAG
    # Only rejecting findings are worth a retry; a flag is still footnoted.
    assert result.nudge is None
    assert FIRST_FLAG in result.annotate()


def test_info_findings_never_annotate():
    runner = ValidationRunner.from_settings(
        ValidationSettings(severity={Kind.FABRICATED_IDENTIFIER: Severity.INFO})
    )
    result = check(FABRICATED, runner=runner)
    assert result.outcome is Outcome.PASS
    assert result.findings != ()
    assert result.nudge is None
    assert result.annotate() == result.turn.reply


# --- annotate_reply -----------------------------------------------------------------------


def _f(kind: Kind, token: str = "", severity: Severity | None = None) -> Finding:
    return Finding(kind=kind, message="m", token=token, severity=severity)


@pytest.mark.parametrize(
    ("findings", "user_quoted", "expected"),
    [
        ((), (), None),
        ((_f(Kind.VALIDATOR_ERROR),), (), None),
        ((_f(Kind.STALL, "x", Severity.INFO),), (), None),
        ((_f(Kind.STALL),), (), "does not back `stall` (stall)"),
        (
            (_f(Kind.FABRICATED_IDENTIFIER, "a"), _f(Kind.CLAIM_WITHOUT_TOOL, "pushed")),
            (),
            "does not back `a`, `pushed` (fabricated_identifier, claim_without_tool)",
        ),
        (
            (_f(Kind.FABRICATED_IDENTIFIER, "a"), _f(Kind.FABRICATED_IDENTIFIER, "a")),
            (),
            "does not back `a` (fabricated_identifier)",
        ),
        ((_f(Kind.FABRICATED_IDENTIFIER, "a"),), ("b",), "does not back `a`"),
        ((_f(Kind.VALIDATOR_ERROR),), ("b", "c"), "`b`, `c` was quoted from your message"),
    ],
    ids=[
        "nothing",
        "info-only",
        "overridden-to-info",
        "kind-stands-in-for-missing-token",
        "tokens-and-kinds-listed",
        "duplicates-listed-once",
        "flag-beats-user-quoted",
        "user-quoted-with-info-only",
    ],
)
def test_annotate_reply(findings, user_quoted, expected):
    reply = "Reply text.  \n"
    annotated = annotate_reply(reply, findings, user_quoted=user_quoted)
    if expected is None:
        assert annotated == reply
    else:
        assert annotated.startswith("Reply text.\n\n⚠️ _FactLedger note: ")
        assert expected in annotated


def test_annotate_lists_at_most_eight_tokens_and_truncates_long_ones():
    findings = tuple(_f(Kind.FABRICATED_IDENTIFIER, f"tok{i}") for i in range(11))
    long = _f(Kind.FABRICATED_IDENTIFIER, "z" * 200)
    annotated = annotate_reply("r", (long, *findings))
    assert f"`{'z' * 80}`" in annotated
    assert "z" * 81 not in annotated
    assert "tok6`" in annotated
    assert "tok7`" not in annotated
    assert "and 4 more" in annotated


def test_check_result_properties():
    result = check(FABRICATED)
    assert isinstance(result, CheckResult)
    assert result.findings == result.verdict.findings
    assert result.outcome is result.verdict.outcome


# --- nudges -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{NUDGE_MARKER} — not a user message] fix it", True),
        (f"\n   {NUDGE_MARKER}] fix it", True),
        ("[FRAMEWORK SELF-CORRECTION] fix it", True),
        (f"Please read this: {NUDGE_MARKER}", False),
        ("[factledger self-correction] lower case", False),
        ("", False),
        ("What is the latest commit?", False),
        (f"Validation feedback:\n{NUDGE_MARKER} — not a user message] x\n\nFix the errors", True),
        (f"Feedback:\n\n  {NUDGE_MARKER}] x", True),
        ("a user's long message, " * 12 + f"\n{NUDGE_MARKER}] pasted far down", False),
        (f"Here is what I got: {NUDGE_MARKER}] quoted inside a line", False),
    ],
    ids=[
        "own-marker",
        "leading-whitespace",
        "foreign-framework-marker",
        "marker-not-at-start",
        "case-matters",
        "empty",
        "user-text",
        "wrapped-by-pydantic-ai",
        "wrapped-under-a-blank-line",
        "far-into-a-user-message",
        "quoted-mid-line",
    ],
)
def test_is_framework_nudge(text, expected):
    assert is_framework_nudge(text) is expected


@pytest.mark.parametrize(
    "kinds",
    [
        (),
        (Kind.MISSING_TOOL_ARGUMENTS,),
        (Kind.VALIDATOR_ERROR, Kind.CONFABULATED_IDENTIFIER_SET),
    ],
    ids=["no-findings", "flag-kind-without-reason", "kinds-without-reason"],
)
def test_no_nudge_without_a_correctable_finding(kinds):
    assert build_nudge([_f(k, "t") for k in kinds]) is None


def test_nudge_names_reasons_once_and_caps_tokens():
    findings = [_f(Kind.FABRICATED_IDENTIFIER, f"id{i}") for i in range(15)]
    findings.append(_f(Kind.STALL))
    nudge = build_nudge(findings)
    assert nudge is not None
    assert nudge.count("identifiers that appear in no tool result") == 1
    assert "a promise to act without any tool call" in nudge
    assert "`id11`" in nudge
    assert "`id12`" not in nudge
    assert "not a new request from the user" in nudge
