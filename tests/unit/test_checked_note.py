"""What a finding was compared with: tool names in `checked_against`, words in
`checked_note`. Every finding the validators raise over the labelled corpus keeps the two
apart, and reads the same through its fields as rows from before schema 010 read through
`views.split_checked` (tools and notes in one list): the API shows old and new rows alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.collector.api.views import split_checked
from factledger.evaluation import read_cases, turn_from_otlp
from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding
from factledger.processors.runner import default_runner
from factledger.processors.validators.base import finding
from factledger.processors.validators.stall import StallValidator

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.jsonl"))


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    runner = default_runner()
    found: list[Finding] = []
    for path in CORPUS:
        for case in read_cases(path):
            if case.transcript is not None:
                turn = turn_from_transcript(case.transcript, turn_id=case.id)
            else:
                turn = turn_from_otlp(case.otlp or {})
            found.extend(runner.validate(turn).findings)
    return found


def test_the_corpus_raises_findings_with_and_without_tools(findings: list[Finding]) -> None:
    assert any(f.checked_against for f in findings)
    assert any(f.checked_note and not f.checked_against for f in findings)


def test_checked_against_names_tools_only(findings: list[Finding]) -> None:
    named = {name for f in findings for name in f.checked_against}
    assert [name for name in named if not name or any(c.isspace() for c in name)] == []
    assert all(len(set(f.checked_against)) == len(f.checked_against) for f in findings)


def test_fields_read_as_the_old_rows_did(findings: list[Finding]) -> None:
    for f in findings:
        stored = [*f.checked_against, *([f.checked_note] if f.checked_note else [])]
        assert split_checked(f.kind.value, stored) == (list(f.checked_against), f.checked_note)


@pytest.mark.parametrize(
    ("tools", "note", "nothing_checked", "expected"),
    [
        pytest.param(["a", "b", "a"], None, "none", (("a", "b"), None), id="tools-once-each"),
        pytest.param([], None, "none", ((), "none"), id="nothing-checked"),
        pytest.param([], "plan", "none", ((), "plan"), id="note-wins"),
        pytest.param(["a"], "plan", "none", (("a",), "plan"), id="tools-and-note"),
        pytest.param([], None, None, ((), None), id="neither"),
    ],
)
def test_finding_keeps_tools_once_and_notes_apart(
    tools: list[str],
    note: str | None,
    nothing_checked: str | None,
    expected: tuple[tuple[str, ...], str | None],
) -> None:
    built = finding(
        StallValidator(),
        Kind.STALL,
        "m",
        checked_against=tools,
        checked_note=note,
        nothing_checked=nothing_checked,
    )
    assert (built.checked_against, built.checked_note) == expected
