"""A verdict version as score-taking targets show it: the verdict, then one per kind."""

from __future__ import annotations

from dataclasses import replace

from factledger.collector.export.base import ExportedFinding
from factledger.collector.export.summary import (
    MAX_EXPLANATION_CHARS,
    latest,
    metadata,
    scores,
    stable_id,
)
from tests.integration.export_records import later, record


def test_the_verdict_first_then_each_kind_at_its_worst() -> None:
    findings = (
        ExportedFinding("claim", "flag", "shipped", "not shipped", 2),
        ExportedFinding("identifier", "reject", "ORD-1", "ORD-1 unseen", 1),
        ExportedFinding("claim", "reject", "refunded", "not refunded", 2),
    )
    found = scores(record(findings=findings))
    assert [(s.name, s.verdict, s.value) for s in found] == [
        ("factledger.verdict", "reject", 0.0),
        ("factledger.claim", "reject", 0.0),
        ("factledger.identifier", "reject", 0.0),
    ]
    assert found[1].explanation == "not shipped\nnot refunded"
    assert found[1].tokens == ("shipped", "refunded")


def test_a_clean_turn_has_only_its_verdict_with_a_word_for_it() -> None:
    [verdict] = scores(later(record()))
    assert (verdict.verdict, verdict.value, verdict.explanation) == (
        "pass",
        1.0,
        "FactLedger: pass",
    )


def test_a_long_explanation_is_cut_visibly() -> None:
    long = ExportedFinding("claim", "flag", "t", "x" * (MAX_EXPLANATION_CHARS + 50), 2)
    text = scores(record(findings=(long,)))[0].explanation
    assert len(text) == MAX_EXPLANATION_CHARS and text.endswith("…")


def test_metadata_finds_the_turn_again() -> None:
    first = record()
    verdict, kind, _ = scores(first)
    assert metadata(first, verdict) == {
        "factledger.tenant": "acme",
        "factledger.turn_id": "turn-1",
        "factledger.version": 1,
        "factledger.judged_at_ms": first.judged_at_ms,
        "factledger.cause": "judged",
        "factledger.turn_url": first.turn_url,
        "factledger.verdict": "reject",
        "factledger.tokens": "ORD-1,shipped",
    }
    assert metadata(first, kind)["factledger.kind"] == "identifier"


def test_stable_ids_depend_on_their_parts_only() -> None:
    assert stable_id("acme", "turn-1") == stable_id("acme", "turn-1")
    assert stable_id("acme", "turn-1") != stable_id("acme", "turn-2")
    assert stable_id("a", "b c") != stable_id("a b", "c")
    assert len(stable_id("x")) == 32


def test_latest_keeps_each_turns_highest_version_in_first_seen_order() -> None:
    first, other = record(), record(turn_id="turn-2")
    second = later(first)
    assert latest([first, other, second]) == [second, other]
    assert latest([second, first]) == [second]


def test_a_label_of_a_version_is_newer_than_the_version() -> None:
    judged = record()
    labelled = replace(
        judged, cause="labelled", verdict="pass", judged_at_ms=judged.judged_at_ms + 1
    )
    assert labelled.order > judged.order
    assert latest([labelled, judged]) == [labelled]
    assert latest([judged, labelled]) == [labelled]
    assert later(judged).order > labelled.order  # a later version still wins
