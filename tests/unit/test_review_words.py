"""The review flow's words: an empty queue says whether anything was ever there to
review, and labels carry FACTLEDGER_REVIEWER until a name is typed."""

from __future__ import annotations

from factledger.dashboard.labeling import REVIEWER_ENV, default_reviewer
from factledger.dashboard.screens.verify import empty_queue_notice


def test_an_empty_store_has_nothing_to_review_yet() -> None:
    notice = empty_queue_notice(reviewed=0)
    assert notice.startswith("**Nothing to review yet.**")
    assert "Every flagged turn has a label" not in notice


def test_a_queue_emptied_by_labels_says_every_flagged_turn_has_one() -> None:
    assert "Every flagged turn has a label" in empty_queue_notice(reviewed=12)


def test_the_default_reviewer_comes_from_the_environment() -> None:
    assert REVIEWER_ENV == "FACTLEDGER_REVIEWER"
    assert default_reviewer({REVIEWER_ENV: "  ana  "}) == "ana"
    assert default_reviewer({}) == ""
    assert len(default_reviewer({REVIEWER_ENV: "x" * 500})) == 200  # the API's limit
