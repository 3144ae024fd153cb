"""The dashboard's HTML highlighting: findings marked and labelled, coloured by severity
(red a reject, amber a flag) never by kind, every piece of text escaped, overlaps and
findings without offsets handled."""

from __future__ import annotations

import re
from typing import Any

import pytest

from factledger.dashboard import palette
from factledger.dashboard.highlight import (
    MAX_MARKS_PER_TOKEN,
    css_class,
    highlight_reply,
    kind_label,
    kind_severities,
    label_html,
    locate,
    mark_tokens,
    stylesheet,
)


def finding(
    kind: str = "fabricated_identifier",
    span: list[int] | None = None,
    token: str = "",
    severity: str = "reject",
    message: str = "not in any tool result",
) -> dict[str, Any]:
    return {"kind": kind, "span": span, "token": token, "severity": severity, "message": message}


def marks(markup: str) -> list[str]:
    return re.findall(r"<mark [^>]*>(.*?)</mark>", markup)


@pytest.mark.parametrize(
    ("reply", "findings", "marked"),
    [
        pytest.param(
            "I created OPS-2977 for you.",
            [finding(span=[10, 18], token="OPS-2977")],
            ["OPS-2977"],
            id="offsets-mark-the-token",
        ),
        pytest.param(
            "Pushed a1b2c3d to main.",
            [finding(token="a1b2c3d")],
            ["a1b2c3d"],
            id="no-offsets-fall-back-to-the-token",
        ),
        pytest.param(
            "SHA abc1234 and again abc1234.",
            [finding(token="abc1234")],
            ["abc1234", "abc1234"],
            id="token-fallback-marks-every-occurrence",
        ),
        pytest.param(
            "Short reply.",
            [finding(span=[5, 400], token="reply")],
            ["reply"],
            id="offsets-past-the-end-fall-back-to-the-token",
        ),
        pytest.param(
            "Nothing to see.",
            [finding(kind="stall", token="")],
            [],
            id="no-offsets-and-no-token-marks-nothing",
        ),
        pytest.param(
            "abcdef",
            [finding(span=[0, 4]), finding(kind="stall", span=[2, 6], severity="flag")],
            ["ab", "cd", "ef"],
            id="overlapping-findings-split-into-segments",
        ),
        pytest.param("", [finding(span=[0, 1])], [], id="empty-reply"),
    ],
)
def test_findings_are_marked(reply: str, findings: list[dict[str, Any]], marked: list[str]):
    assert marks(highlight_reply(reply, findings)) == marked


def test_text_and_attributes_are_escaped():
    reply = '<script>alert("x")</script> & OPS-1 "quoted"'
    start = reply.index("OPS-1")
    markup = highlight_reply(
        reply,
        [finding(span=[start, start + 5], message='<img src=x onerror="boom">', kind='a"b')],
    )
    assert "<script>" not in markup
    assert "&lt;script&gt;" in markup
    assert "&amp; " in markup
    assert "<img" not in markup
    assert 'class="fl-mark fl-sev-reject fl-kind-a-b"' in markup


def test_a_mark_carries_its_kind_class_and_a_label():
    markup = highlight_reply("I created OPS-2977.", [finding(span=[10, 18])])
    assert '<mark class="fl-mark fl-sev-reject fl-kind-fabricated_identifier"' in markup
    assert (
        '<span class="fl-label fl-sev-reject fl-kind-fabricated_identifier">fabricated identifier'
        in markup
    )
    assert markup.startswith('<div class="fl-reply">') and markup.endswith("</div>")


def test_overlap_labels_each_finding_where_it_ends_and_ranks_the_worse_severity_first():
    markup = highlight_reply(
        "abcdef",
        [finding(kind="stall", span=[2, 6], severity="flag"), finding(span=[0, 4])],
    )
    middle = re.search(r'<mark class="([^"]*)"[^>]*>cd</mark>', markup)
    assert middle is not None
    assert middle.group(1) == "fl-mark fl-sev-reject fl-kind-fabricated_identifier fl-kind-stall"
    labels = re.findall(r'<span class="fl-label [^"]*">([^<]*)</span>', markup)
    assert labels == ["fabricated identifier", "stall"]


def test_token_fallback_is_bounded():
    reply = "x " * (MAX_MARKS_PER_TOKEN + 5)
    assert len(locate(reply, [finding(token="x")])) == MAX_MARKS_PER_TOKEN


@pytest.mark.parametrize(
    ("text", "marks", "error", "expected"),
    [
        pytest.param(
            '{"key": "OPS-2879"}',
            [("OPS-2977", "backed")],
            False,
            '<pre class="fl-result">{&quot;key&quot;: &quot;OPS-2879&quot;}</pre>',
            id="absent-token-marks-nothing",
        ),
        pytest.param(
            "sha a1b2c3d ok",
            [("a1b2c3d", "backed")],
            False,
            '<pre class="fl-result">sha <mark class="fl-tone fl-backed">a1b2c3d</mark> ok</pre>',
            id="backed-is-the-only-green",
        ),
        pytest.param(
            "Error: rejected",
            [("Error: rejected", "against")],
            True,
            '<pre class="fl-result fl-error"><mark class="fl-tone fl-against">Error: rejected'
            "</mark></pre>",
            id="a-findings-own-evidence-is-against",
        ),
        pytest.param(
            "sha a1b2c3d ok",
            ["a1b2c3d"],
            False,
            '<pre class="fl-result">sha <mark class="fl-tone fl-seen">a1b2c3d</mark> ok</pre>',
            id="a-bare-token-is-seen-not-backed",
        ),
        pytest.param(
            "abcabc",
            [("abc", "seen"), ("bca", "backed")],
            True,
            '<pre class="fl-result fl-error"><mark class="fl-tone fl-seen">abc</mark>'
            '<mark class="fl-tone fl-seen">abc</mark></pre>',
            id="overlapping-marks-keep-the-first",
        ),
        pytest.param(
            "x@acme.example",
            [("x@acme.example", "seen"), ("x@acme.example", "against")],
            False,
            '<pre class="fl-result"><mark class="fl-tone fl-against">x@acme.example</mark></pre>',
            id="at-one-place-against-wins",
        ),
        pytest.param(
            "<b>",
            [("<b>", "backed")],
            False,
            '<pre class="fl-result"><mark class="fl-tone fl-backed">&lt;b&gt;</mark></pre>',
            id="marked-text-is-escaped",
        ),
    ],
)
def test_mark_tokens(text: str, marks: list[Any], error: bool, expected: str):
    assert mark_tokens(text, marks, error=error) == expected


def test_each_tone_has_a_colour_and_only_evidence_is_green():
    css = stylesheet()
    for tone in ("backed", "real", "against", "seen"):
        assert f"mark.fl-{tone} {{" in css
    green = (palette.EVIDENCE, palette.EVIDENCE_MARK, palette.EVIDENCE_BACKGROUND)
    greens = {s for s, body in _rules(css).items() if any(c in body for c in green)}
    assert greens, "the evidence colour is drawn somewhere"
    assert all("backed" in s or "fl-real" in s for s in greens), greens


def _rules(css: str) -> dict[str, str]:
    return {selector.strip(): body for selector, body in re.findall(r"([^{}\n]+)\{([^}]*)\}", css)}


def test_marks_and_chips_take_the_severity_colour_and_no_kind_has_one():
    rules = _rules(stylesheet())
    assert not [s for s in rules if "fl-kind-" in s]
    assert palette.REJECT_BACKGROUND in rules[".fl-label.fl-sev-reject"]
    assert palette.FLAG_BACKGROUND in rules[".fl-label.fl-sev-flag"]
    assert palette.REJECT in rules[".fl-mark.fl-sev-reject"]
    assert palette.FLAG in rules[".fl-mark.fl-sev-flag"]


def test_red_is_only_for_rejects_and_amber_only_for_flags():
    rules = _rules(stylesheet())
    red = {
        s
        for s, body in rules.items()
        if palette.REJECT in body or palette.REJECT_BACKGROUND in body
    }
    amber = {
        s for s, body in rules.items() if palette.FLAG in body or palette.FLAG_BACKGROUND in body
    }
    assert {".fl-mark.fl-sev-flag", ".fl-label.fl-sev-flag"} <= amber
    assert all("fl-sev-flag" in s for s in amber), amber
    # A reject's marks and chips, and the evidence a finding rests on.
    assert all("reject" in s or "against" in s for s in red), red
    assert not [s for s in red if "fl-sev-flag" in s]


def test_a_chip_is_coloured_by_its_findings_severity_whatever_its_kind():
    assert 'class="fl-label fl-sev-flag fl-kind-fabricated_identifier"' in label_html(
        "fabricated_identifier", "flag"
    )
    assert 'class="fl-label fl-sev-reject fl-kind-stall"' in label_html("stall", "reject")
    assert "fl-sev-info" in label_html("stall", "withdrawn")
    severities = kind_severities(
        [
            {"kind": "stall", "severity": "flag"},
            {"kind": "stall", "severity": "reject"},
            {"kind": "x", "severity": "flag"},
        ]
    )
    assert severities == {"stall": "reject", "x": "flag"}


def test_a_mark_leaves_room_below_the_descent_for_underscores():
    body = _rules(stylesheet())[".fl-mark"]
    padding = re.search(r"padding: ([^;]+);", body)
    assert padding is not None
    bottom = padding.group(1).split()[2]
    assert bottom.endswith("em") and float(bottom[:-2]) >= 0.2


@pytest.mark.parametrize(
    ("kind", "cls", "label"),
    [
        ("fabricated_identifier", "fl-kind-fabricated_identifier", "fabricated identifier"),
        ("Weird Kind!", "fl-kind-weird-kind-", "Weird Kind!"),
    ],
)
def test_kind_names(kind: str, cls: str, label: str):
    assert css_class(kind) == cls
    assert kind_label(kind) == label
