"""factledger.evaluation: cases, counts, precision/recall and the JSON report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from factledger.evaluation import (
    Case,
    CaseResult,
    Counts,
    Report,
    evaluate,
    parse_case,
    read_cases,
)
from factledger.processors.errors import TranscriptError
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, Turn
from factledger.processors.runner import ValidationRunner

TRANSCRIPT = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}


def case(verdict: str, kinds: Sequence[str] = (), allow: Sequence[str] = (), id: str = "c") -> Case:
    return Case(id, TRANSCRIPT, verdict, frozenset(kinds), frozenset(allow))


def result(expected: Case, verdict: str, kinds: Sequence[str] = ()) -> CaseResult:
    return CaseResult(expected, verdict, tuple(kinds))


# --- turn-level counts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "got", "bucket"),
    [
        ("reject", "reject", "tp"),
        ("flag", "reject", "tp"),
        ("reject", "flag", "tp"),
        ("pass", "flag", "fp"),
        ("pass", "reject", "fp"),
        ("reject", "pass", "fn"),
        ("flag", "pass", "fn"),
        ("pass", "pass", "tn"),
    ],
    ids=[
        "reject-caught",
        "flag-expected-reject-got-still-positive",
        "reject-expected-flag-got-still-positive",
        "clean-flagged",
        "clean-rejected",
        "reject-missed",
        "flag-missed",
        "clean-passed",
    ],
)
def test_turn_counts(expected, got, bucket):
    report = Report()
    report.add(result(case(expected), got))
    counts = report.turns
    assert {"tp": counts.tp, "fp": counts.fp, "fn": counts.fn, "tn": counts.tn} == {
        k: int(k == bucket) for k in ("tp", "fp", "fn", "tn")
    }


def test_turn_precision_and_recall_on_a_small_set():
    report = Report()
    report.add(result(case("reject"), "reject"))  # tp
    report.add(result(case("reject"), "reject"))  # tp
    report.add(result(case("pass"), "flag"))  # fp
    report.add(result(case("reject"), "pass"))  # fn
    report.add(result(case("reject"), "pass"))  # fn
    report.add(result(case("pass"), "pass"))  # tn
    t = report.turns
    assert (t.tp, t.fp, t.fn, t.tn) == (2, 1, 2, 1)
    assert t.precision == pytest.approx(2 / 3)
    assert t.recall == pytest.approx(2 / 4)
    data = report.as_json()
    assert data["turns"] == {
        "tp": 2,
        "fp": 1,
        "fn": 2,
        "tn": 1,
        "precision": 0.6667,
        "recall": 0.5,
    }
    assert data["cases"] == 6


def test_precision_and_recall_are_undefined_without_positives():
    assert (Counts().precision, Counts().recall) == (None, None)
    assert (Counts(fp=1).precision, Counts(fp=1).recall) == (0.0, None)
    assert (Counts(fn=1).precision, Counts(fn=1).recall) == (None, 0.0)


def test_undefined_ratios_are_null_in_json_and_na_in_the_table():
    report = Report()
    report.add(result(case("pass"), "pass"))  # tn only: nothing found, nothing to find
    report.add(result(case("pass", id="x"), "flag", ["stall"]))  # a false positive kind
    data = report.as_json()
    assert data["turns"]["recall"] is None
    assert data["turns"]["precision"] == 0.0
    assert data["kinds"]["stall"] == {"tp": 0, "fp": 1, "fn": 0, "precision": 0.0, "recall": None}
    table = report.table()
    stall_row = next(line for line in table.splitlines() if line.startswith("stall "))
    assert stall_row.split()[-2:] == ["0.000", "n/a"]
    assert "precision=0.000 recall=n/a" in table


# --- per-kind counts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "allow", "found", "expected"),
    [
        (["stall"], [], ["stall"], {"stall": (1, 0, 0)}),
        (["stall"], [], [], {"stall": (0, 0, 1)}),
        ([], [], ["stall"], {"stall": (0, 1, 0)}),
        ([], ["stall"], ["stall"], {"stall": (0, 0, 0)}),
        (["stall"], ["stall"], [], {"stall": (0, 0, 1)}),
        (
            ["fabricated_identifier"],
            ["claim_without_tool"],
            ["fabricated_identifier", "claim_without_tool", "stall"],
            {
                "fabricated_identifier": (1, 0, 0),
                "claim_without_tool": (0, 0, 0),
                "stall": (0, 1, 0),
            },
        ),
    ],
    ids=[
        "expected-and-found-is-tp",
        "expected-not-found-is-fn",
        "found-not-expected-is-fp",
        "allowed-extra-is-not-fp",
        "allow-does-not-excuse-a-miss",
        "mixed",
    ],
)
def test_kind_counts(kinds, allow, found, expected):
    report = Report()
    report.add(result(case("reject", kinds, allow), "reject", found))
    got = {k: (c.tp, c.fp, c.fn) for k, c in report.kinds.items()}
    assert got == expected


@pytest.mark.parametrize(
    ("expected", "verdict", "found", "ok"),
    [
        (case("reject", ["stall"]), "reject", ["stall"], True),
        (case("reject", ["stall"]), "flag", ["stall"], False),
        (case("reject", ["stall"]), "reject", [], False),
        (case("reject", ["stall"]), "reject", ["stall", "claim_without_tool"], False),
        (
            case("reject", ["stall"], ["claim_without_tool"]),
            "reject",
            ["stall", "claim_without_tool"],
            True,
        ),
        (case("pass"), "pass", [], True),
    ],
    ids=[
        "exact-match",
        "wrong-verdict",
        "missing-kind",
        "extra-kind",
        "extra-kind-allowed",
        "clean",
    ],
)
def test_case_result_ok(expected, verdict, found, ok):
    assert result(expected, verdict, found).ok is ok


def test_report_json_shape():
    report = Report()
    report.add(result(case("reject", ["stall"], id="one"), "reject", ["stall", "stall"]))
    report.add(result(case("pass", id="two"), "flag", ["missing_tool_arguments"]))
    data = json.loads(json.dumps(report.as_json()))
    assert set(data) == {"cases", "turns", "kinds", "results"}
    assert set(data["turns"]) == {"tp", "fp", "fn", "tn", "precision", "recall"}
    assert list(data["kinds"]) == ["missing_tool_arguments", "stall"]
    assert data["kinds"]["stall"] == {"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0}
    assert data["kinds"]["missing_tool_arguments"]["fp"] == 1
    assert data["results"] == [
        {
            "id": "one",
            "verdict": "reject",
            "kinds": ["stall", "stall"],
            "expected_verdict": "reject",
            "expected_kinds": ["stall"],
            "ok": True,
        },
        {
            "id": "two",
            "verdict": "flag",
            "kinds": ["missing_tool_arguments"],
            "expected_verdict": "pass",
            "expected_kinds": [],
            "ok": False,
        },
    ]


def test_table_lists_kinds_turns_and_mismatches():
    report = Report()
    report.add(result(case("reject", ["stall"], id="good"), "reject", ["stall"]))
    report.add(result(case("pass", id="bad-one"), "flag", ["stall"]))
    table = report.table()
    assert table.splitlines()[0].split() == ["kind", "tp", "fp", "fn", "precision", "recall"]
    assert "turns: 2 cases  tp=1 fp=1 fn=0 tn=0" in table
    assert "mismatches: 1" in table
    assert "bad-one: got flag ['stall'], expected pass []" in table
    assert "good:" not in table


# --- parsing cases ----------------------------------------------------------------------------


def test_parse_case_reads_expectations():
    parsed = parse_case(
        {
            "id": 7,
            "transcript": TRANSCRIPT,
            "expected": {"verdict": "flag", "kinds": ["stall"], "allow": ["claim_without_tool"]},
        },
        "f.jsonl:3",
    )
    assert parsed == Case(
        "7",
        TRANSCRIPT,
        "flag",
        frozenset({"stall"}),
        frozenset({"claim_without_tool"}),
        where="f.jsonl:3",
    )


def test_case_without_id_is_named_by_its_place():
    parsed = parse_case({"transcript": TRANSCRIPT, "expected": {"verdict": "pass"}}, "f:9")
    assert (parsed.id, parsed.kinds, parsed.allow) == ("f:9", frozenset(), frozenset())


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ([1], "a case must be a JSON object"),
        ({"expected": {"verdict": "pass"}}, "no 'transcript' object"),
        ({"transcript": "x", "expected": {"verdict": "pass"}}, "no 'transcript' object"),
        ({"transcript": TRANSCRIPT}, "no 'expected' object"),
        ({"transcript": TRANSCRIPT, "expected": {"verdict": "fail"}}, "expected.verdict"),
        ({"transcript": TRANSCRIPT, "expected": {}}, "reject, flag, pass"),
    ],
    ids=[
        "not-an-object",
        "missing-transcript",
        "transcript-not-an-object",
        "missing-expected",
        "unknown-verdict",
        "missing-verdict",
    ],
)
def test_bad_case_names_its_place(record, needle):
    with pytest.raises(TranscriptError) as info:
        parse_case(record, "cases.jsonl:4")
    assert str(info.value).startswith("cases.jsonl:4: ")
    assert needle in str(info.value)


def _line(id: str, verdict: str = "pass") -> str:
    return json.dumps({"id": id, "transcript": TRANSCRIPT, "expected": {"verdict": verdict}})


def test_read_cases_skips_blank_and_comment_lines(tmp_path: Path):
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(["// header", _line("a"), "", "   ", "  // note", _line("b", "reject")]) + "\n"
    )
    assert [(c.id, c.verdict) for c in read_cases(path)] == [("a", "pass"), ("b", "reject")]


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([_line("a"), "{not json"], ":2: invalid JSON"),
        (["// c", "", _line("a"), "[1, 2]"], ":4: a case must be a JSON object"),
        ([_line("a"), json.dumps({"transcript": TRANSCRIPT})], ":2: case has no 'expected'"),
    ],
    ids=["malformed-json", "line-numbers-count-skipped-lines", "bad-shape"],
)
def test_read_cases_names_file_and_line(tmp_path: Path, lines, where):
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptError) as info:
        list(read_cases(path))
    assert f"{path}{where}" in str(info.value)


# --- evaluate ----------------------------------------------------------------------------------


class KindFromReply:
    """Reports a stall when the reply says 'stall' and a flag-level kind when it says 'flag'."""

    name = "fake"
    version = "1"
    kinds = frozenset({Kind.STALL, Kind.MISSING_TOOL_ARGUMENTS})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        out = []
        if "stall" in turn.reply:
            out.append(Finding(Kind.STALL, "stalled"))
        if "flag" in turn.reply:
            out.append(Finding(Kind.MISSING_TOOL_ARGUMENTS, "missing"))
        return out


def _transcript(reply: str) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": reply}]
    }


def test_evaluate_runs_each_case_and_reports_progress():
    cases = [
        Case("s", _transcript("I will stall"), "reject", frozenset({"stall"}), frozenset()),
        Case("f", _transcript("flag me"), "pass", frozenset(), frozenset()),
        Case("ok", _transcript("fine"), "pass", frozenset(), frozenset()),
        Case("miss", _transcript("fine"), "reject", frozenset({"stall"}), frozenset()),
    ]
    seen: list[str] = []
    report = evaluate(
        cases, ValidationRunner([KindFromReply()]), on_result=lambda r: seen.append(r.case.id)
    )
    assert seen == ["s", "f", "ok", "miss"]
    assert [(r.case.id, r.verdict, r.kinds, r.ok) for r in report.results] == [
        ("s", "reject", ("stall",), True),
        ("f", "flag", ("missing_tool_arguments",), False),
        ("ok", "pass", (), True),
        ("miss", "pass", (), False),
    ]
    t = report.turns
    assert (t.tp, t.fp, t.fn, t.tn) == (1, 1, 1, 1)
    assert (report.kinds["stall"].tp, report.kinds["stall"].fn) == (1, 1)
    assert report.kinds["missing_tool_arguments"].fp == 1


@pytest.mark.parametrize(
    ("where", "prefix"),
    [("cases.jsonl:5", "cases.jsonl:5 (case x): "), ("", "x (case x): ")],
    ids=["names-file-and-line", "falls-back-to-id"],
)
def test_evaluate_names_the_case_with_a_bad_transcript(where, prefix):
    bad = Case("x", {"messages": []}, "pass", frozenset(), frozenset(), where=where)
    with pytest.raises(TranscriptError) as info:
        evaluate([bad], ValidationRunner([KindFromReply()]))
    assert str(info.value).startswith(prefix)
    assert "no 'messages'" in str(info.value)
