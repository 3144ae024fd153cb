"""A sub-agent's turn nested in its lead's: stored with its parent's id, shown on the
lead's detail, left out of the turn list and of the rates (they count turns of their own)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from factledger.collector.store import Store
from factledger.processors.kinds import Kind, Outcome

from .test_store import MINUTE, T0, TENANT, Seed, finding, write

LEAD = Seed("t1", Outcome.PASS, agent="planner")
NESTED = Seed(
    "t2",
    Outcome.REJECT,
    findings=(finding(Kind.CLAIM_WITHOUT_TOOL),),
    agent="writer",
    parent="t1",
)
ALONE = Seed("t3", Outcome.REJECT, findings=(finding(Kind.CLAIM_WITHOUT_TOOL),), minute=1)


def test_lead_detail_lists_its_nested_turns_and_the_nested_one_names_its_parent(store: Store):
    write(store, LEAD, NESTED)

    lead = store.get_turn(TENANT, "t1")
    nested = store.get_turn(TENANT, "t2")

    assert lead is not None and nested is not None
    assert lead["verdict"] == "pass"  # its own, not changed by the nested turn's
    assert lead["parent_turn_id"] == ""
    assert lead["nested_turns"] == [
        {"turn_id": "t2", "agent": "writer", "verdict": "reject", "kinds": ["claim_without_tool"]}
    ]
    assert (nested["parent_turn_id"], nested["nested_turns"]) == ("t1", [])


def test_the_turn_list_holds_turns_of_their_own(store: Store):
    write(store, LEAD, NESTED, ALONE)

    turns, total = store.list_turns(TENANT)

    assert ([t["turn_id"] for t in turns], total) == (["t3", "t1"], 2)


@pytest.mark.parametrize("group_by", ["model", "agent", "kind"])
def test_rates_count_turns_of_their_own(store: Store, group_by: str):
    write(store, LEAD, NESTED, ALONE)

    series = store.reject_rate(
        TENANT,
        group_by=group_by,  # type: ignore[arg-type]
        bucket="1h",
        since=T0,
        until=T0 + 2 * MINUTE + timedelta(seconds=1),
    )

    points = [(s["key"], p["turns"], p["rejected"]) for s in series for p in s["points"]]
    expected = {
        "model": [("gpt-4o", 2, 1)],
        "agent": [("support", 1, 1), ("planner", 1, 0)],
        "kind": [("claim_without_tool", 2, 1)],
    }[group_by]
    assert sorted(points) == sorted(expected)
