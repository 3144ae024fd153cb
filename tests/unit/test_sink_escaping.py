"""Names a sender chose (model, agent, service, reviewer, a `?turn_id=`) reach Slack and
the dashboard as text, never as markup: no mention, link or image in a notice or on a
page."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from factledger.collector.alerts.evaluator import AlertEvent, Decision
from factledger.collector.alerts.payloads import slack_payload
from factledger.collector.alerts.rules import AlertRule
from factledger.collector.alerts.slack_text import mrkdwn_text
from factledger.dashboard import labeling
from factledger.dashboard.safe_text import code_html, html_text, markdown_text, turn_link
from factledger.dashboard.screens import alerts, turn_view, turns

HOSTILE = [
    pytest.param("![](http://attacker.example/x.png)", id="markdown image"),
    pytest.param("[click](http://attacker.example)", id="markdown link"),
    pytest.param("<!channel> <http://attacker.example|docs>", id="slack mention and link"),
    pytest.param("**bold** _it_ `code` :red[x] :material/home: $x$", id="emphasis and directives"),
    pytest.param("<img src=x onerror=alert(1)>", id="html tag"),
    pytest.param("a\n# heading\n> quote", id="line breaks"),
]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _shown(markdown: str) -> str:
    """What a CommonMark renderer shows of text made only of escapes and plain text."""
    out, escaped = [], False
    for char in markdown:
        if escaped or char != "\\":
            out.append(char)
            escaped = False
        else:
            escaped = True
    return "".join(out)


def _no_markup(markdown: str) -> None:
    unescaped = markdown.replace("\\\\", "")
    for i, char in enumerate(unescaped):
        if char in "!*_`[]()<>:$#|~" and (i == 0 or unescaped[i - 1] != "\\"):
            raise AssertionError(f"unescaped {char!r} at {i} in {markdown!r}")


@pytest.mark.parametrize("name", HOSTILE)
def test_markdown_text_shows_the_text_and_nothing_else(name: str) -> None:
    escaped = markdown_text(name)
    _no_markup(escaped)
    assert "\n" not in escaped
    assert _shown(escaped) == name.replace("\n", " ")


@pytest.mark.parametrize("name", HOSTILE)
def test_html_text_has_no_tag_or_attribute_break(name: str) -> None:
    escaped = html_text(name)
    assert not set("<>\"'") & set(escaped)


@pytest.mark.parametrize("name", HOSTILE)
def test_code_html_adds_no_tag_but_code(name: str) -> None:
    shown = code_html(f"key `{name}` and {name}")
    without_code = shown.replace("<code>", "").replace("</code>", "")
    assert not set("<>\"'") & set(without_code)


@pytest.mark.parametrize(
    ("message", "html"),
    [
        pytest.param("key `OPS-2173` is new", "key <code>OPS-2173</code> is new", id="one"),
        pytest.param("`a_b`, `<c>`", "<code>a_b</code>, <code>&lt;c&gt;</code>", id="two-escaped"),
        pytest.param("a lone ` stays", "a lone ` stays", id="unpaired"),
        pytest.param("`across\nlines`", "`across\nlines`", id="not-across-lines"),
    ],
)  # fmt: skip
def test_code_html_shows_quoted_identifiers_as_code(message: str, html: str) -> None:
    assert code_html(message) == html


def test_a_turn_link_keeps_the_id_inside_its_parameter() -> None:
    link = turn_link('x"&next=/evil#<a>')
    assert link == "turns?turn_id=x%22%26next%3D%2Fevil%23%3Ca%3E"


@pytest.mark.parametrize("name", HOSTILE)
def test_mrkdwn_text_has_no_control_sequence(name: str) -> None:
    escaped = mrkdwn_text(name)
    assert "<" not in escaped and ">" not in escaped
    assert escaped.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == name


def _event(key: str) -> AlertEvent:
    decision = Decision(
        key=key,
        firing=True,
        value=0.5,
        turns=10,
        hits=5,
        limit=0.3,
        baseline=None,
        baseline_turns=0,
        reason="",
    )
    return AlertEvent("firing", "spikes", key, "a1", T0, T0, 0.3, decision)


@pytest.mark.parametrize("group_by", ["model", "agent", "service"])
def test_a_slack_notice_names_a_hostile_group_as_text(group_by: Any) -> None:
    rule = AlertRule(name="spikes", group_by=group_by)
    key = "<!channel> <http://attacker.example|login> & more"
    body = slack_payload(rule, _event(key), tenant="acme", dashboard_url="http://dash")
    texts = [body["text"], body["blocks"][0]["text"]["text"]]
    for text in texts:
        assert "<!channel>" not in text and "<http://attacker" not in text
        assert "&lt;!channel&gt; &lt;http://attacker.example|login&gt; &amp; more" in text
    assert "<http://dash|dashboard>" in body["blocks"][2]["elements"][0]["text"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_firing_alert_line_shows_a_hostile_group_as_text(name: str) -> None:
    entry = {"rule": "spikes", "group_by": "model", "key": name, "value": 0.5, "limit": 0.3}
    line = alerts.firing_line({**entry, "reason": name})
    assert "![](" not in line and "](http" not in line and "<img" not in line.replace("\\<", "")
    assert markdown_text(name) in line


@pytest.mark.parametrize("name", HOSTILE)
def test_the_label_caption_shows_a_hostile_reviewer_as_text(name: str) -> None:
    caption = labeling.label_caption(
        {"label": "hallucination", "reviewer": name, "created_at": T0.isoformat()}
    )
    assert markdown_text(name) in caption
    assert "![](" not in caption and "](http" not in caption


@pytest.mark.parametrize("name", HOSTILE)
def test_an_unknown_turn_id_from_the_address_is_shown_as_text(name: str) -> None:
    notice = turns.missing_turn_notice(name)
    assert markdown_text(name) in notice
    assert "![](" not in notice and "](http" not in notice


@pytest.mark.parametrize("name", HOSTILE)
def test_a_turn_title_shows_a_hostile_id_as_text(name: str) -> None:
    title = turn_view.turn_title(name)
    _no_markup(title)
