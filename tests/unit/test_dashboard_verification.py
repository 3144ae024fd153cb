"""How the pages show what the sources of truth answered (dashboard/verification.py): the
outcome chip in its colour, the evidence line (source, query in code, answer, time of
day and duration), the answers tied to their findings, the withdrawn findings, a queue
item's summary line and the table per kind; every text escaped."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.dashboard import verification


def answer(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "subject_kind": "path",
        "name": "tests/test_cache.py",
        "claimed_absent": False,
        "span": [25, 44],
        "finding": 0,
        "finding_kind": "confabulated_identifier_set",
        "outcome": "confirmed",
        "source": "git:acme/site",
        "query": "git ls-tree HEAD -- tests/test_cache.py",
        "answer": "(nothing)",
        "reason": None,
        "checked_at": "2026-01-31T14:05:09.250000Z",
        "duration_ms": 12.4,
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    ("outcome", "css", "words"),
    [
        pytest.param("confirmed", "fl-outcome-confirmed", "confirmed: hallucination", id="red"),
        pytest.param("refuted", "fl-outcome-refuted", "refuted: it exists", id="green"),
        pytest.param("unverifiable", "fl-outcome-unverifiable", "unverifiable", id="grey"),
        pytest.param("<b>odd</b>", "fl-outcome-unverifiable", "unverifiable", id="unknown-grey"),
    ],
)
def test_the_chip_takes_the_outcome_colour(outcome: str, css: str, words: str) -> None:
    chip = verification.outcome_chip(outcome)
    assert f'class="fl-outcome {css}"' in chip
    assert f">{words}</span>" in chip
    assert "<b>" not in chip


def test_the_colours_are_reject_green_and_grey() -> None:
    assert ".fl-outcome-confirmed { background: #fed7d7" in verification.STYLES
    assert ".fl-outcome-refuted { background: #c6f6d5" in verification.STYLES
    assert ".fl-outcome-unverifiable { background: #e2e8f0" in verification.STYLES


def test_the_evidence_line_has_source_query_answer_time_and_duration() -> None:
    line = verification.evidence_html(answer())
    assert "asked <b>git:acme/site</b>" in line
    assert '<code class="fl-query">git ls-tree HEAD -- tests/test_cache.py</code>' in line
    assert "answered <code>(nothing)</code>" in line
    assert "at 14:05:09 UTC · 12 ms" in line
    assert "why unverifiable" not in line


def test_an_unverifiable_line_says_why_and_escapes_everything() -> None:
    line = verification.evidence_html(
        answer(outcome="unverifiable", query="HEAD <x>", answer="", reason="timeout")
    )
    assert "why unverifiable: timeout" in line
    assert "HEAD &lt;x&gt;" in line
    assert "answered" not in line


@pytest.mark.parametrize(
    ("checked_at", "duration", "expected"),
    [
        pytest.param("2026-01-31T23:59:01Z", 1500.0, "at 23:59:01 UTC · 1500 ms", id="time"),
        pytest.param(None, 0.25, "0.2 ms", id="no-time-sub-millisecond"),
    ],
)
def test_when_and_how_long(checked_at: str | None, duration: float, expected: str) -> None:
    assert verification.checked_when(checked_at, duration) == expected


WITHDRAWN = answer(outcome="refuted", finding=None, source="trace:list_files (call_1)")
CANDIDATE = answer(name="7d41b0a", finding=None, finding_kind=None, outcome="refuted")
SETTLED = [answer(), answer(finding=2, outcome="unverifiable"), WITHDRAWN, CANDIDATE]


def test_answers_go_to_their_finding_the_withdrawn_and_the_unattached_apart() -> None:
    by_finding = verification.settling(SETTLED)
    assert {index: [a["outcome"] for a in found] for index, found in by_finding.items()} == {
        0: ["confirmed"],
        2: ["unverifiable"],
    }
    assert verification.withdrawn(SETTLED) == [WITHDRAWN]
    assert verification.unattached(SETTLED) == [CANDIDATE]


def test_a_withdrawn_finding_quotes_the_reply_and_shows_its_evidence() -> None:
    reply = "The change is covered by tests/test_cache.py."
    shown = verification.withdrawn_html(WITHDRAWN, reply)
    assert 'data-kind="confabulated_identifier_set"' in shown
    assert "<s>tests/test_cache.py</s>" in shown
    assert 'the reply: "<i>tests/test_cache.py</i>"' in shown
    assert "trace:list_files (call_1)" in shown
    assert "fl-outcome-refuted" in shown


@pytest.mark.parametrize(
    ("tally", "line"),
    [
        pytest.param(None, "not verified: no source was asked", id="missing"),
        pytest.param(
            {"confirmed": 0, "refuted": 0, "unverifiable": 0, "reasons": []},
            "not verified: no source was asked",
            id="nothing-asked",
        ),
        pytest.param(
            {"confirmed": 0, "refuted": 0, "unverifiable": 2, "reasons": ["no source", "timeout"]},
            "no source could settle this: no source / timeout",
            id="unsettled",
        ),
        pytest.param(
            {"confirmed": 0, "refuted": 1, "unverifiable": 1, "reasons": ["unreachable"]},
            "verification: 1 refuted, 1 unverifiable (unverifiable: unreachable)",
            id="mixed",
        ),
    ],
)
def test_the_queue_line(tally: dict[str, Any] | None, line: str) -> None:
    assert verification.queue_line(tally) == line


def test_the_summary_rows_count_and_share_settled() -> None:
    summary = {
        "kinds": [
            {"kind": "fabricated_identifier", "confirmed": 3, "refuted": 1, "unverifiable": 4},
            {"kind": "stall", "confirmed": 0, "refuted": 0, "unverifiable": 0},
        ],
        "total": {"confirmed": 3, "refuted": 1, "unverifiable": 4},
    }
    assert verification.summary_rows(summary) == [
        {
            "kind": "fabricated identifier",
            "confirmed": 3,
            "refuted": 1,
            "unverifiable": 4,
            "settled": 0.5,
        },
        {"kind": "stall", "confirmed": 0, "refuted": 0, "unverifiable": 0, "settled": None},
    ]
    assert verification.summary_rows({"kinds": [], "total": {}}) == []
