"""Where a finding's token occurs outside the reply: tool results, arguments, the
request; which tokens a reviewer judges; which calls they were checked against."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.dashboard import evidence
from factledger.dashboard.evidence import TokenEvidence

CALLS: list[dict[str, Any]] = [
    {
        "name": "create_ticket",
        "call_id": "call_1",
        "arguments": {"title": "VPN drops"},
        "result": '{"key": "OPS-2879", "status": "open"}',
        "ok": True,
    },
    {
        "name": "get_ticket",
        "call_id": "",
        "arguments": {"key": "OPS-1000"},
        "result": "no such ticket",
        "ok": False,
    },
]


def finding(token: str, kind: str = "fabricated_identifier", **extra: Any) -> dict[str, Any]:
    return {"token": token, "kind": kind, "severity": "reject", **extra}


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        pytest.param(
            "OPS-2977",
            TokenEvidence("OPS-2977", "fabricated_identifier", "reject", (), (), False),
            id="fabricated-token-is-in-no-result",
        ),
        pytest.param(
            "OPS-2879",
            TokenEvidence(
                "OPS-2879",
                "fabricated_identifier",
                "reject",
                ("create_ticket (call_1)",),
                (),
                False,
            ),
            id="token-in-a-result-names-the-call",
        ),
        pytest.param(
            "OPS-1000",
            TokenEvidence("OPS-1000", "fabricated_identifier", "reject", (), ("get_ticket",), True),
            id="token-in-arguments-and-request",
        ),
    ],
)
def test_token_evidence(token: str, expected: TokenEvidence):
    (got,) = evidence.token_evidence([finding(token)], CALLS, "Look at OPS-1000 please")
    assert got == expected
    assert got.grounded == bool(expected.in_results)


def test_token_evidence_skips_findings_without_tokens_and_repeats():
    findings = [finding(""), finding("X1"), finding("X1"), finding("X1", kind="stall")]
    assert [(e.token, e.kind) for e in evidence.token_evidence(findings, [], "")] == [
        ("X1", "fabricated_identifier"),
        ("X1", "stall"),
    ]


@pytest.mark.parametrize(
    ("findings", "tokens"),
    [
        pytest.param(
            [
                {"token": "a.py", "severity": "flag"},
                {"token": "b.py", "severity": "reject"},
                {"token": "a.py", "severity": "flag"},
            ],
            ["a.py"],
            id="flagged-tokens-only-once-each",
        ),
        pytest.param(
            [{"token": "b.py", "severity": "reject"}, {"token": "", "severity": "reject"}],
            ["b.py"],
            id="every-token-when-nothing-flags",
        ),
        pytest.param([], [], id="none"),
    ],
)
def test_suspicious_tokens(findings, tokens):
    assert evidence.suspicious_tokens(findings) == tokens


@pytest.mark.parametrize(
    ("findings", "names"),
    [
        ([{"checked_against": ["get_ticket"]}], ["get_ticket"]),
        ([{"checked_against": []}], ["create_ticket", "get_ticket"]),
        ([{"checked_against": ["nowhere"]}], ["create_ticket", "get_ticket"]),
    ],
    ids=["named-calls", "no-names-means-all", "unknown-names-mean-all"],
)
def test_checked_calls(findings, names):
    assert [c["name"] for c in evidence.checked_calls(findings, CALLS)] == names


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"a": 1}', '{\n  "a": 1\n}'),
        ("[1]", "[\n  1\n]"),
        ("{not json", "{not json"),
        ("plain text", "plain text"),
        ({"b": "é"}, '{\n  "b": "é"\n}'),
        (None, ""),
        ('"just a string"', '"just a string"'),
    ],
    ids=["json-object", "json-array", "broken-json", "text", "dict", "none", "json-scalar"],
)
def test_pretty(value, expected):
    assert evidence.pretty(value) == expected


def test_call_label():
    assert evidence.call_label(CALLS[0], 0) == "create_ticket (call_1)"
    assert evidence.call_label(CALLS[1], 1) == "get_ticket"
    assert evidence.call_label({}, 2) == "call 3"


ARGUMENT_CALLS: list[dict[str, Any]] = [
    {"name": "lookup", "call_id": "c1", "arguments": {}, "result": "nothing here", "ok": True},
    {
        "name": "send_email",
        "call_id": "c2",
        "arguments": {"to": "farah@acme.example"},
        "result": '{"to": "farah@acme.example", "status": "sent"}',
        "ok": True,
    },
]


def test_an_argument_finding_is_checked_against_earlier_results_by_value():
    ungrounded = {
        "token": "to=farah@acme.example",
        "kind": "ungrounded_tool_argument",
        "severity": "flag",
        "call_id": "c2",
    }
    (got,) = evidence.token_evidence([ungrounded], ARGUMENT_CALLS, "mail Farah")
    # the call's own result echoes the address; only the earlier results count
    assert got.in_results == ()
    assert got.earlier_only
    assert got.in_arguments == ("send_email (c2)",)
    assert evidence.search_texts([ungrounded, finding("X1")]) == ["farah@acme.example", "X1"]


@pytest.mark.parametrize(
    ("found", "text"),
    [
        ({"token": "a=b=c", "kind": "ungrounded_tool_argument"}, "b=c"),
        ({"token": "a=b", "kind": "fabricated_identifier"}, "a=b"),
        ({"token": "", "kind": "ungrounded_tool_argument"}, ""),
    ],
    ids=["argument-value-after-the-first-equals", "other-kinds-keep-the-token", "no-token"],
)
def test_search_text(found, text):
    assert evidence.search_text(found) == text
