"""The labelled corpus (tests/corpus/*.jsonl): turn-level precision and recall of at least 0.95.

A turn is positive when its verdict is not `pass`. Every case is also checked for shape,
so a malformed line fails here with its file and line rather than being skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.evaluation import Report, evaluate, read_cases
from factledger.processors.runner import default_runner

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.jsonl"))
MIN_CASES = 120
TARGET = 0.95


@pytest.fixture(scope="module")
def report() -> Report:
    cases = [case for path in CORPUS for case in read_cases(path)]
    return evaluate(cases, default_runner())


def test_corpus_is_large_enough(report: Report) -> None:
    assert len(report.results) >= MIN_CASES
    assert len({r.case.id for r in report.results}) == len(report.results), "duplicate ids"


def test_turn_level_precision_and_recall(report: Report) -> None:
    mismatches = [f"{r.case.id}: {r.verdict} {list(r.kinds)}" for r in report.results if not r.ok]
    precision, recall = report.turns.precision, report.turns.recall
    assert precision is not None and precision >= TARGET, mismatches
    assert recall is not None and recall >= TARGET, mismatches


def test_every_kind_has_positives_and_as_many_clean_look_alikes(report: Report) -> None:
    kinds = {k for r in report.results for k in r.case.kinds}
    clean = [r for r in report.results if r.case.verdict == "pass"]
    assert len(kinds) == 18  # every kind of processors.kinds except validator_error
    assert len(clean) >= len(report.results) * 0.4
