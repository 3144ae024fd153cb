"""What a verdict rests on, token by token: the call that backs each identifier of the
reply, the nearest real identifier a fabricated one stands beside, the real names of a
class-5 set, and how they become stored rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from factledger.collector.evidence_rows import TURN_EVIDENCE_COLUMNS, turn_evidence_row
from factledger.collector.redaction import SECRET_RULES, Redactor
from factledger.processors.evidence.result_tokens import Backing, NearestReal, identifier_backings
from factledger.processors.identifiers import extract_identifiers
from factledger.processors.kinds import Kind, Outcome
from factledger.processors.model import Finding, ResultToken, ToolCall, Turn, Verdict
from factledger.processors.validators.confabulation import ConfabulationValidator
from factledger.processors.validators.identifiers import (
    IdentifierValidator,
    checked_identifiers,
)

SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _turn(reply: str, *calls: ToolCall) -> Turn:
    return Turn(reply=reply, tool_calls=calls, turn_id="t-1")


SEARCH = ToolCall(
    "jira_search",
    "call_2",
    result='{"issues": [{"key": "OPS-1200"}, {"key": "OPS-5680"}, {"key": "CT-5707"}]}',
)


@pytest.mark.parametrize(
    ("reply", "calls", "expected"),
    [
        pytest.param(
            "I filed OPS-5707.",
            (SEARCH,),
            ResultToken("OPS-5680", "jira_search", "call_2"),
            id="a-key-beside-the-closest-key-of-its-project",
        ),
        pytest.param(
            f"Pushed as commit {SHA[:-1]}0.",
            (ToolCall("git_log", "call_1", result=f"commit {SHA[:8]}ffffffff\n"),),
            ResultToken(f"{SHA[:8]}ffffffff", "git_log", "call_1"),
            id="a-sha-beside-a-sha",
        ),
        pytest.param(
            "I filed OPS-5707.",
            (ToolCall("jira_search", "call_2", result='{"key": "CT-5707"}'),),
            None,
            id="no-key-of-its-project-no-near-match",
        ),
        pytest.param(
            "I wrote to ana.ops@acme.example.",
            (
                ToolCall(
                    "directory",
                    "call_3",
                    result="bruno@acme.example ana@acme.example zoe@other.example",
                ),
            ),
            ResultToken("ana@acme.example", "directory", "call_3"),
            id="an-e-mail-beside-the-most-alike",
        ),
        pytest.param("I filed OPS-5707.", (), None, id="no-tool-result"),
    ],
)
def test_a_fabricated_identifier_names_the_nearest_real_one(
    reply: str, calls: tuple[ToolCall, ...], expected: ResultToken | None
) -> None:
    findings = IdentifierValidator()(_turn(reply, *calls))
    assert [f.kind for f in findings] == [Kind.FABRICATED_IDENTIFIER]
    assert findings[0].real == (() if expected is None else (expected,))


def test_the_nearest_real_identifier_skips_the_token_itself() -> None:
    turn = _turn("x", ToolCall("t", "c", result="OPS-5707 OPS-5708"))
    (ident,) = extract_identifiers("OPS-5707")
    assert NearestReal(turn)(ident) == ResultToken("OPS-5708", "t", "c")


def test_each_backed_identifier_names_the_first_call_that_holds_it() -> None:
    reply = f"Pushed {SHA} and filed OPS-5680; OPS-9999 is new."
    turn = _turn(
        reply,
        ToolCall("jira_search", "call_1", result="OPS-5680"),
        ToolCall("git_push", "call_2", result=f"pushed {SHA} to main"),
        ToolCall("final", "call_3", result=reply, answer=True),
    )
    backings = identifier_backings(turn, checked_identifiers(turn))
    start = reply.index(SHA)
    key = reply.index("OPS-5680")
    assert backings == (
        Backing(SHA, start, start + len(SHA), "git_push", "call_2"),
        Backing("OPS-5680", key, key + 8, "jira_search", "call_1"),
    )


def test_a_class5_set_records_its_real_names_with_each_finding() -> None:
    turn = _turn(
        "The repo has tests/test_memory_store.py, tests/test_memory_cache.py, "
        "tests/test_memory_index.py and src/memory.py.",
        ToolCall("list_files", "call_1", result="src/memory.py\nREADME.md"),
    )
    findings = ConfabulationValidator()(turn)
    assert [f.token for f in findings] == [
        "tests/test_memory_store.py",
        "tests/test_memory_cache.py",
        "tests/test_memory_index.py",
    ]
    assert {f.real for f in findings} == {(ResultToken("src/memory.py", "list_files", "call_1"),)}


def test_backings_become_the_turn_evidence_row_redacted_and_moved() -> None:
    secret = "sk-proj-Cx7Rq2Lm9Tz4Wv8Kp1Nb6Hd3"
    reply = f"Key {secret} opened OPS-5680."
    turn = _turn(reply, ToolCall("jira_search", "call_1", result="OPS-5680"))
    backings = identifier_backings(turn, checked_identifiers(turn))
    redactor = Redactor(SECRET_RULES)
    _, _, stored = redactor.evidence(turn, (), (), backings)
    row: dict[str, Any] = dict(
        zip(
            TURN_EVIDENCE_COLUMNS,
            turn_evidence_row(
                "default",
                "t-1",
                version=1,
                started_at=T0,
                snapshots=(),
                citations=(),
                backings=stored,
            ),
            strict=True,
        )
    )
    stored_reply = redactor.judged(turn, Verdict(Outcome.PASS))[0].reply
    assert secret not in stored_reply
    start, end = int(row["Backings.SpanStart"][0]), int(row["Backings.SpanEnd"][0])
    assert stored_reply[start:end] == "OPS-5680"
    assert (row["Backings.Token"], row["Backings.Tool"], row["Backings.CallId"]) == (
        ["OPS-5680"],
        ["jira_search"],
        ["call_1"],
    )


def test_a_failed_call_backs_nothing() -> None:
    reply = "I sent the e-mail to ana@partner.example."
    turn = _turn(
        reply,
        ToolCall(
            "send_email",
            "call_1",
            result="Error: recipient rejected: ana@partner.example",
            error=True,
        ),
    )
    assert identifier_backings(turn, checked_identifiers(turn)) == ()


def test_a_real_token_its_calls_stored_result_no_longer_shows_is_not_stored() -> None:
    secret = "sk-proj-Cx7Rq2Lm9Tz4Wv8Kp1Nb6Hd3"
    turn = _turn("x", ToolCall("vault", "call_1", result=f"https://k.example/{secret} OPS-5680"))
    leaked = ResultToken(f"https://k.example/{secret}", "vault", "call_1")
    plain = ResultToken("OPS-5680", "vault", "call_1")
    finding = Finding(Kind.FABRICATED_IDENTIFIER, "m", token="OPS-5707", real=(leaked, plain))
    _, verdict = Redactor(SECRET_RULES).judged(turn, Verdict(Outcome.REJECT, (finding,)))
    assert verdict.findings[0].real == (plain,)


def test_a_backed_token_a_secret_in_context_is_not_stored() -> None:
    # A bare 32-hex token is no secret; after Mailgun's `key-` the reply's redaction takes it.
    key = "0123456789abcdef0123456789abcdef"
    reply = f"The mailgun key is key-{key} and it is active."
    turn = _turn(reply, ToolCall("config", "call_1", result=f"mailgun: key-{key}"))
    backings = identifier_backings(turn, checked_identifiers(turn))
    assert [b.token for b in backings] == [key]
    _, _, stored = Redactor(SECRET_RULES).evidence(turn, (), (), backings)
    assert stored == ()
