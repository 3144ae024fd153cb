"""A view a module derives from a turn (`Turn.derived`) is computed once per turn and
kept with it, and never travels with the turn."""

from __future__ import annotations

import gc
import pickle

from factledger.collector.gc_tuning import THRESHOLDS, tune_collector
from factledger.processors.model import ToolCall, Turn
from factledger.processors.validators.identifiers import checked_identifiers

_CALLS: list[str] = []


def _reply_words(turn: Turn) -> tuple[str, ...]:
    _CALLS.append(turn.turn_id)
    return tuple(turn.reply.split())


def _reply_length(turn: Turn) -> int:
    return len(turn.reply)


def test_a_view_is_computed_once_per_turn_and_apart_from_other_views() -> None:
    _CALLS.clear()
    first = Turn(turn_id="t1", reply="pushed commit 9d22a7c")
    second = Turn(turn_id="t2", reply="pushed commit 9d22a7c")
    assert first.derived(_reply_words) == ("pushed", "commit", "9d22a7c")
    assert first.derived(_reply_words) is first.derived(_reply_words)
    assert first.derived(_reply_length) == 21
    assert second.derived(_reply_words) == ("pushed", "commit", "9d22a7c")
    assert _CALLS == ["t1", "t2"]


def test_a_pickled_turn_leaves_its_views_behind_and_equals_the_turn() -> None:
    turn = Turn(turn_id="t1", reply="pushed commit 9d22a7c")
    turn.derived(_reply_length)
    copy = pickle.loads(pickle.dumps(turn))
    assert "_views" in turn.__dict__ and "_views" not in copy.__dict__
    assert copy == turn


def test_validation_and_evidence_rows_share_the_checked_identifiers() -> None:
    call = ToolCall(name="git_push", arguments={}, result="pushed 9d22a7c")
    turn = Turn(reply="Pushed commit 9d22a7c.", tool_calls=(call,))
    found = checked_identifiers(turn)
    assert [i.text for i in found] == ["9d22a7c"]
    assert checked_identifiers(turn) is found


def test_the_tuned_collector_runs_at_the_thresholds_with_start_up_objects_frozen() -> None:
    before = gc.get_threshold()
    try:
        tune_collector()
        assert gc.get_threshold() == THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
