"""Near-duplicate suspicions: what counts as the same reply pattern, and how queue items
gather into groups one label can cover."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.collector.api.review_groups import group_key, group_queue, reply_pattern


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("I sent the e-mail to Farah.", "I sent the e-mail to Dana.", id="names"),
        pytest.param(
            "Pushed commit 3f2a9c81d2e4 to main.",
            "Pushed commit 9b1c0d2e3f4a5 to main.",
            id="shas",
        ),
        pytest.param("Ticket OPS-4821 is closed.", "Ticket OPS-17 is closed.", id="ticket-keys"),
        pytest.param("Refunded 12.50 EUR.", "Refunded 3 EUR.", id="numbers"),
        pytest.param('Saved as "draft one".', 'Saved as "final".', id="quoted-text"),
        pytest.param("Done:  all   GOOD.", "done: all good.", id="case-and-spaces"),
        pytest.param(
            "Mail to ana@acme.example sent.", "Mail to bo.li@corp.example sent.", id="e-mails"
        ),
    ],
)
def test_repeats_that_differ_only_in_what_varies_share_a_pattern(first: str, second: str) -> None:
    assert reply_pattern(first) == reply_pattern(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("I sent the e-mail to Farah.", "I could not send the e-mail.", id="wording"),
        pytest.param("Deployed to staging.", "Deployed to production.", id="lower-case-word"),
    ],
)
def test_different_replies_have_different_patterns(first: str, second: str) -> None:
    assert reply_pattern(first) != reply_pattern(second)


def test_a_sentence_keeps_its_first_word() -> None:
    assert reply_pattern("Farah got it. Dana too.") == "farah got it. dana too."


def _item(turn_id: str, agent: str, reply: str, kinds: tuple[str, ...] = ("stall",)) -> Any:
    return {"turn_id": turn_id, "agent": agent, "kinds": list(kinds), "reply": reply}


def test_same_agent_same_pattern_same_kinds_is_one_group_in_queue_order() -> None:
    items = [
        _item("t1", "support", "I sent the e-mail to Farah.", ("ungrounded_tool_argument",)),
        _item("t2", "coder", "One moment, let me check."),
        _item("t3", "support", "I sent the e-mail to Dana.", ("ungrounded_tool_argument",)),
        _item("t4", "support", "One moment, let me check."),
        _item("t5", "coder", "One moment, let me check.", ("stall", "claim_without_tool")),
    ]
    groups = group_queue(items)
    assert [[t["turn_id"] for t in g["turns"]] for g in groups] == [
        ["t1", "t3"],
        ["t2"],
        ["t4"],
        ["t5"],
    ]
    first = groups[0]
    assert first["size"] == 2
    assert first["agent"] == "support"
    assert first["kinds"] == ["ungrounded_tool_argument"]
    assert first["pattern"] == "i sent the e-mail to ‹name›."
    assert first["group_id"] == group_key(
        "support", ["ungrounded_tool_argument"], items[0]["reply"]
    )
    assert all("reply" not in turn for g in groups for turn in g["turns"])


def test_kinds_order_does_not_split_a_group() -> None:
    assert group_key("a", ["x", "y"], "r") == group_key("a", ["y", "x", "y"], "r")
    assert group_key("a", ["x"], "r") != group_key("b", ["x"], "r")


def test_an_empty_queue_has_no_groups() -> None:
    assert group_queue([]) == []
