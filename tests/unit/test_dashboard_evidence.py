"""The tool trace as the page shows it: payloads pretty-printed, a token found in the
shown text as it stands there, a failed call's error, which tokens a reviewer judges and
which calls they were checked against."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.dashboard import evidence
from factledger.dashboard.evidence import Trace, shown_form

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


@pytest.mark.parametrize(
    ("text", "needle", "fold", "form"),
    [
        ('{\n  "key": "OPS-2879"\n}', "OPS-2879", False, "OPS-2879"),
        ('{\n  "title": "The \\"Ops\\" book"\n}', 'The "Ops" book', False, 'The \\"Ops\\" book'),
        ("def Retry_With_Backoff():", "retry_with_backoff", True, "Retry_With_Backoff"),
        ("def Retry_With_Backoff():", "retry_with_backoff", False, None),
        ("anything", "", False, None),
    ],
    ids=["as-is", "json-escaped", "case-folded", "case-kept", "empty-needle"],
)
def test_shown_form(text: str, needle: str, fold: bool, form: str | None):
    assert shown_form(text, needle, fold=fold) == form


def test_trace_lookups():
    trace = Trace.of(CALLS, "Look at OPS-1000 please")
    assert trace.holding("OPS-2879", "result") == [(0, "OPS-2879")]
    assert trace.holding("OPS-1000", "arguments") == [(1, "OPS-1000")]
    assert trace.holding("OPS-2879", "result", calls=[1]) == []
    assert trace.index_of({"call_id": "call_1"}) == 0
    assert trace.index_of({"call_id": "nope"}) is None
    assert trace.index_of({}) is None
    assert trace.named(["get_ticket"]) == [1]
    assert [trace.failed(i) for i in range(2)] == [False, True]
    assert trace.label(0) == "create_ticket (call_1)"


@pytest.mark.parametrize(
    ("result", "spans", "said", "lines"),
    [
        pytest.param("no such ticket", [], "no such ticket", ["no such ticket"], id="plain-text"),
        pytest.param(
            "Traceback (most recent call last):\n  File x\nKeyError: 'key'",
            [],
            "KeyError: 'key'",
            ["KeyError: 'key'"],
            id="the-telling-line",
        ),
        pytest.param(
            '{"ok": false, "detail": "quota exceeded"}',
            [],
            '{"ok": false, "detail": "quota exceeded"}',
            ['"ok": false,', '"detail": "quota exceeded"'],
            id="json-on-one-line-its-error-lines-marked",
        ),
        pytest.param(
            None,
            [{"span_id": "s1", "status_message": "HTTP 503"}],
            "HTTP 503",
            [],
            id="no-result-the-span-status",
        ),
        pytest.param(None, [], "", [], id="nothing-recorded"),
        pytest.param("x" * 300, [], "x" * 160, ["x" * 300], id="cut-in-the-sentence"),
    ],
)
def test_error(result: str | None, spans: list[dict[str, Any]], said: str, lines: list[str]):
    failed: dict[str, Any] = {
        "name": "t",
        "result": result,
        "ok": False,
        "span_id": "s1",
        "arguments": {},
    }
    assert Trace.of([failed], "", spans).error(0) == (said, lines)


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


def test_search_texts_are_distinct_and_argument_findings_give_their_value():
    findings = [
        {"token": "to=farah@acme.example", "kind": "ungrounded_tool_argument"},
        {"token": "X1", "kind": "fabricated_identifier"},
        {"token": "X1", "kind": "stall"},
        {"token": "", "kind": "stall"},
    ]
    assert evidence.search_texts(findings) == ["farah@acme.example", "X1"]
