"""Values the tools recorded: a record's state contradicted, a number no tool returned."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.processors.evidence.record_states import REPLY_STATE_WORDS
from factledger.processors.validators import record_state
from factledger.processors.validators.quantities import parse_number
from tests.unit.transcripts import Call, chat, kinds_of

STATE = "contradicted_record_state"
QUANTITY = "ungrounded_quantity"


def order(order_id: str, status: str, **fields: Any) -> str:
    return json.dumps({"order_id": order_id, "user_id": "ana_1", "status": status, **fields})


def read(order_id: str, status: str, **fields: Any) -> Call:
    return Call(
        "get_order_details", {"order_id": order_id}, result=order(order_id, status, **fields)
    )


CONTRADICTED = [
    pytest.param(
        chat("Order #W2378156 has been delivered.", calls=[read("#W2378156", "processed")]),
        id="delivered-vs-processed",
    ),
    pytest.param(
        chat("Your order #W1 was refunded to your card.", calls=[read("#W1", "pending")]),
        id="refunded-vs-pending",
    ),
    pytest.param(
        chat("**Order #W6390527** (Delivered): a desk lamp.", calls=[read("#W6390527", "pending")]),
        id="label-in-parentheses",
    ),
    pytest.param(
        chat("The status of #W7 is: cancelled.", calls=[read("#W7", "delivered")]),
        id="status-label",
    ),
    pytest.param(
        chat("Die Bestellung #W5 wurde bereits storniert.", calls=[read("#W5", "pending")]),
        id="german-passive",
    ),
    pytest.param(chat("订单 #W8 已发货。", calls=[read("#W8", "pending")]), id="chinese"),
    pytest.param(
        chat("Your order has been delivered.", calls=[read("#W9", "processed")]),
        id="the-only-order-of-the-turn",
    ),
    pytest.param(
        chat(
            "Order #W3 is cancelled.",
            calls=[
                Call("cancel_pending_order", {"order_id": "#W3"}, result=order("#W3", "cancelled")),
                read("#W3", "pending"),
            ],
        ),
        id="a-later-read-undoes-the-action",
    ),
    pytest.param(
        chat(
            "PR #42 has been merged.",
            calls=[
                Call(
                    "get_pull_request",
                    {"number": 42},
                    result=json.dumps({"number": 42, "state": "open", "merged": False}),
                )
            ],
        ),
        id="pull-request-still-open",
    ),
]

CONSISTENT = [
    pytest.param(
        chat("Order #W2 has been delivered.", calls=[read("#W2", "delivered")]),
        id="reports-the-tools-state",
    ),
    pytest.param(
        chat(
            "Your pending order (#W8367380) has been successfully canceled.",
            calls=[
                Call(
                    "cancel_pending_order",
                    {"order_id": "#W8367380"},
                    result=order("#W8367380", "cancelled"),
                )
            ],
        ),
        id="attributive-former-state-beside-the-action",
    ),
    pytest.param(
        chat(
            "Order #W3 is now cancelled.",
            calls=[
                read("#W3", "pending"),
                Call("cancel_pending_order", {"order_id": "#W3"}, result="ok"),
            ],
        ),
        id="the-state-a-successful-action-moved-it-to",
    ),
    pytest.param(
        chat(
            "The items were exchanged: order #W4 is in exchange.",
            calls=[
                read("#W4", "delivered"),
                Call(
                    "exchange_delivered_order_items",
                    {"order_id": "#W4"},
                    result=order("#W4", "exchange requested"),
                ),
            ],
        ),
        id="exchange-action",
    ),
    pytest.param(
        chat("Order #W1 will be shipped tomorrow.", calls=[read("#W1", "pending")]), id="future"
    ),
    pytest.param(
        chat("Order #W1 has not been delivered yet.", calls=[read("#W1", "processed")]),
        id="negated",
    ),
    pytest.param(
        chat(
            "Order #W1 can't be cancelled because it is delivered.",
            calls=[read("#W1", "delivered")],
        ),
        id="modal",
    ),
    pytest.param(
        chat("Has order #W1 been delivered?", calls=[read("#W1", "processed")]), id="question"
    ),
    pytest.param(
        chat("Order #W1 has shipped.", calls=[read("#W1", "processed")]), id="shipped-is-processed"
    ),
    pytest.param(
        chat(
            "Order #W1 is pending, but order #W2 is delivered.",
            calls=[read("#W1", "pending"), read("#W2", "delivered")],
        ),
        id="another-objects-state",
    ),
    pytest.param(
        chat(
            "Your order has been delivered.",
            calls=[read("#W1", "processed"), read("#W2", "delivered")],
        ),
        id="no-id-and-two-orders",
    ),
    pytest.param(
        chat(
            "PR #42 was merged.",
            calls=[
                Call(
                    "get_pull_request",
                    {"number": 42},
                    result=json.dumps({"number": 42, "state": "closed", "merged": True}),
                )
            ],
        ),
        id="merged-pull-request-is-closed",
    ),
    pytest.param(
        chat(
            "Order #W1 is delivered.",
            calls=[
                Call(
                    "get_order_details",
                    {"order_id": "#W1"},
                    result=json.dumps({"error": "timeout", "status": "failed"}),
                )
            ],
        ),
        id="a-failed-call-records-nothing",
    ),
]


@pytest.mark.parametrize("transcript", CONTRADICTED)
def test_a_state_the_record_contradicts_is_found(transcript: dict[str, Any]) -> None:
    assert STATE in kinds_of(transcript)


@pytest.mark.parametrize("transcript", CONSISTENT)
def test_a_state_the_record_backs_or_that_is_not_claimed_passes(transcript: dict[str, Any]) -> None:
    assert STATE not in kinds_of(transcript)


ITEMS = json.dumps(
    {"order_id": "#W1", "status": "pending", "items": [{"price": 20.5}, {"price": 33.71}]}
)
SEARCH = json.dumps({"results": [{"title": "a"}, {"title": "b"}, {"title": "c"}]})

UNGROUNDED = [
    pytest.param(
        chat(
            "According to the order record, the total is $99.10.",
            calls=[read("#W1", "pending", total=54.21)],
        ),
        id="money",
    ),
    pytest.param(
        chat("The search returned 4 results.", calls=[Call("search", {"q": "x"}, result=SEARCH)]),
        id="count",
    ),
    pytest.param(
        chat(
            "Laut der Datenbank gibt es 12 Einträge.",
            calls=[Call("query", {"sql": "x"}, result="7 rows")],
        ),
        id="german",
    ),
    pytest.param(
        chat("The API returned five records.", calls=[Call("search", {"q": "x"}, result=SEARCH)]),
        id="number-word",
    ),
]
GROUNDED = [
    pytest.param(
        chat("Laut README ist Python 3.11 das Minimum.", calls=[read("#W1", "pending")]),
        id="a-version-after-its-name",
    ),
    pytest.param(
        chat(
            "According to the page, the bridge had four lanes.",
            calls=[Call("fetch", {"url": "u"}, result="The bridge carried four lanes.")],
        ),
        id="a-number-word-in-a-text-result",
    ),
    pytest.param(
        chat(
            "According to the order record, the total is $54.21.",
            calls=[read("#W1", "pending", total=54.21)],
        ),
        id="equal",
    ),
    pytest.param(
        chat(
            "According to the record, the total is $54.",
            calls=[read("#W1", "pending", total=54.21)],
        ),
        id="rounded-to-the-shown-precision",
    ),
    pytest.param(
        chat(
            "Laut dem System beträgt die Summe 54,21 €.",
            calls=[read("#W1", "pending", total=54.21)],
        ),
        id="german-format",
    ),
    pytest.param(
        chat("The record shows $1,234.50 due.", calls=[read("#W1", "pending", due="1234.5")]),
        id="thousands-and-text",
    ),
    pytest.param(
        chat(
            "According to the order, the items add up to $54.21.",
            calls=[Call("get_order_details", {}, result=ITEMS)],
        ),
        id="sum-of-one-list",
    ),
    pytest.param(
        chat("The search returned 3 results.", calls=[Call("search", {"q": "x"}, result=SEARCH)]),
        id="list-length",
    ),
    pytest.param(
        chat(
            "The search returned three results.", calls=[Call("search", {"q": "x"}, result=SEARCH)]
        ),
        id="number-word-grounded",
    ),
    pytest.param(
        chat(
            "The report shows 12% growth.",
            calls=[Call("report", {}, result=json.dumps({"growth": 0.12}))],
        ),
        id="percent-of-a-fraction",
    ),
    pytest.param(
        chat(
            "The API returned order #W2378156 on 2024-05-01 for v2.3.1 in `retry(5)`.",
            calls=[read("#W1", "pending")],
        ),
        id="ids-dates-versions-code",
    ),
    pytest.param(
        chat(
            "According to the release notes it shipped on April 20, 2018.",
            calls=[read("#W1", "pending")],
        ),
        id="month-name-date",
    ),
    pytest.param(
        chat(
            "The tool returned a refund for your card ending in 6081.",
            calls=[read("#W1", "pending")],
        ),
        id="card-ending",
    ),
    pytest.param(
        chat(
            "The system reported your budget of $300.",
            user="My budget is $300.",
            calls=[read("#W1", "pending")],
        ),
        id="a-number-the-user-gave",
    ),
    pytest.param(
        chat(
            "The total comes to $99.10 after the discount.",
            calls=[read("#W1", "pending", total=54.21)],
        ),
        id="a-figure-without-a-source",
    ),
]


@pytest.mark.parametrize("transcript", UNGROUNDED)
def test_a_number_no_tool_returned_is_flagged(transcript: dict[str, Any]) -> None:
    assert QUANTITY in kinds_of(transcript)


@pytest.mark.parametrize("transcript", GROUNDED)
def test_a_number_a_tool_returned_or_no_quantity_passes(transcript: dict[str, Any]) -> None:
    assert QUANTITY not in kinds_of(transcript)


@pytest.mark.parametrize(
    ("text", "value", "decimals"),
    [
        ("1,234.50", 1234.5, 2),
        ("1.234,50", 1234.5, 2),
        ("54,21", 54.21, 2),
        ("1,234", 1234.0, 0),
        ("7", 7.0, 0),
    ],
)
def test_written_numbers_are_read_as_values(text: str, value: float, decimals: int) -> None:
    assert parse_number(text) == (value, decimals)


_STATE_WORDS = sorted(REPLY_STATE_WORDS)
_BESIDE = ["", " ", "-", "_", "x", "1", "ü", ".", "(", "\n", "已", "un", "s"]


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(_STATE_WORDS + _BESIDE), max_size=12))
def test_a_state_word_is_found_exactly_where_it_stands_alone(parts: list[str]) -> None:
    # The words as the reference pattern finds them: a word with no letter, digit, `_`
    # or `-` on either side (CJK words anywhere).
    text = "".join(parts)
    latin = [w for w in _STATE_WORDS if w[0] < "\u3000"]
    reference = re.compile(
        r"(?<![\w-])(?:"
        + "|".join(sorted(latin, key=len)[::-1])
        + r")(?![\w-])|"
        + "|".join(w for w in _STATE_WORDS if w[0] >= "\u3000")
    )
    found = [m.span() for m in record_state._STATE_WORD.finditer(text)]
    assert found == [m.span() for m in reference.finditer(text)]
