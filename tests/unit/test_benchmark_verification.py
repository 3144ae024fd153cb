"""benchmarks.verification in its smallest run: a repository of a few dozen commits, a
loopback link server, every figure printed, and the answers right on the truth it built."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from benchmarks.verification import QUICK, Sizes, main, measure, table
from benchmarks.verification_repo import build

ROWS = (
    "git checkout, cold",
    "git checkout, warm",
    "git mirror, cold (clone)",
    "git mirror, warm",
    "links, cold",
    "links, warm (cache)",
)
TINY = ["--quick", "--commits", "60", "--files", "40", "--turns", "21", "--links", "8"]


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    report = measure(Sizes(commits=60, files=40, turns=21, links=8))
    return {
        "table": table(report),
        "rows": {row.name: row.figures() for row in report.rows},
        "wrong": [
            (a.planted.shape, a.planted.exists, a.answer.outcome.value)
            for row in report.rows
            for a in row.asked
            if a.wrong and a.answer is not None
        ],
        "extraction": report.git_extraction,
    }


def test_every_row_has_every_figure(figures: dict[str, Any]) -> None:
    assert tuple(figures["rows"]) == ROWS
    for name, row in figures["rows"].items():
        assert row["asked"] > 0, name
        for key in ("settled", "first_ms", "p50_ms", "p99_ms", "per_second"):
            assert not math.isnan(row[key]), (name, key)
        assert row["p50_ms"] <= row["p99_ms"]


@pytest.mark.parametrize("row", ROWS)
def test_answers_are_right_on_the_synthetic_truth(figures: dict[str, Any], row: str) -> None:
    got = figures["rows"][row]
    assert got["settled"] == 1.0
    assert got["confirmed_precision"] == 1.0
    assert got["refuted_precision"] == 1.0
    assert got["confirmed_recall"] == 1.0
    assert got["refuted_recall"] == 1.0


def test_no_answer_is_wrong(figures: dict[str, Any]) -> None:
    # A bare file name (`x.py` for `src/pkg_0/sub_1/x.py`) is looked up in the whole tree.
    assert figures["wrong"] == []


def test_the_trace_settles_the_names_of_a_listed_directory(figures: dict[str, Any]) -> None:
    assert 0 < figures["rows"]["git checkout, cold"]["by_trace"] < 1


def test_most_planted_names_become_subjects(figures: dict[str, Any]) -> None:
    extraction = figures["extraction"]
    assert sum(extraction.extracted.values()) >= 0.8 * sum(extraction.planted.values())


def test_the_mirror_clone_is_the_first_ask_of_its_cold_pass(figures: dict[str, Any]) -> None:
    cold = figures["rows"]["git mirror, cold (clone)"]
    assert cold["first_ms"] > cold["p50_ms"]


def test_the_table_prints_every_row_side_by_side(figures: dict[str, Any]) -> None:
    text = "\n".join(figures["table"])
    assert "conf P" in text and "verif/s" in text
    for name in ROWS:
        assert any(line.startswith(name) for line in figures["table"])


def test_json_has_the_rows_and_the_extraction(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*TINY, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert tuple(printed["rows"]) == ROWS
    assert printed["sizes"]["commits"] == 60 and QUICK.commits == 300
    assert printed["extraction"]["links"]["planted"]


def test_the_repository_has_its_commits_and_files(tmp_path) -> None:
    _, truth = build(tmp_path, commits=50, files=30)
    assert len(truth.commits) == len(set(truth.commits)) == 50
    assert len(truth.files) == 30
    assert truth.path_exists("src/") and truth.commit_exists(truth.commits[-1][:7])
