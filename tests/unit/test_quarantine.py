"""The turn note and quarantine: the turn being validated is readable from another handle
on the file while it runs, and only then; a quarantined turn is never validated."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest

from factledger.collector.judge.quarantine import NOTE_BYTES, QuarantiningRunner, TurnNote
from factledger.processors.model import Turn, Verdict
from factledger.processors.runner import outcome_of


@pytest.fixture
def note() -> Iterator[TurnNote]:
    with tempfile.TemporaryFile() as file:
        yield TurnNote(file.fileno())


class Recording:
    """A runner that records what the note said while it validated."""

    def __init__(self, note: TurnNote, *, fail: bool = False) -> None:
        self.note = note
        self.fail = fail
        self.seen: list[str] = []

    def validate(self, turn: Turn) -> Verdict:
        self.seen.append(self.note.read())
        if self.fail:
            raise RuntimeError("validator crashed")
        return Verdict(outcome_of(()))


def test_an_empty_note_reads_empty(note: TurnNote) -> None:
    assert note.read() == ""


def test_the_note_holds_the_turn_while_it_is_validated(note: TurnNote) -> None:
    runner = Recording(note)
    guarded = QuarantiningRunner(runner, note)
    guarded.validate(Turn(reply="a", turn_id="f" * 64))
    guarded.validate(Turn(reply="b", turn_id="a1"))
    # The shorter id overwrote the longer one completely.
    assert runner.seen == ["f" * 64, "a1"]
    assert note.read() == ""


def test_the_note_is_cleared_when_validation_raises(note: TurnNote) -> None:
    guarded = QuarantiningRunner(Recording(note, fail=True), note)
    with pytest.raises(RuntimeError):
        guarded.validate(Turn(reply="a", turn_id="t1"))
    assert note.read() == ""


def test_an_overlong_id_is_cut_to_the_note(note: TurnNote) -> None:
    note.write("x" * (NOTE_BYTES + 10))
    assert note.read() == "x" * NOTE_BYTES


def test_a_quarantined_turn_is_stored_unvalidated(note: TurnNote) -> None:
    runner = Recording(note)
    guarded = QuarantiningRunner(runner, note, quarantined={"stuck"})
    verdict = guarded.validate(Turn(reply="I refunded it.", turn_id="stuck"))
    assert runner.seen == []
    assert [f.kind.value for f in verdict.findings] == ["validator_error"]
    assert "stopped the judge worker" in verdict.findings[0].message
    assert verdict.outcome.value == "pass"  # validator_error is informational
    guarded.validate(Turn(reply="fine", turn_id="other"))
    assert runner.seen == ["other"]
