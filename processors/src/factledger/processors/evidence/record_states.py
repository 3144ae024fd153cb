"""The states a tool's record gives an object, and the states the turn's actions moved it to.

A record is an object of a structured tool result (JSON or a Python literal, at any depth)
that holds both an id (`order_id`, `ticket_id`, `issue_id`, `key`, `number`, `id`, or
another `*_id` key) and a state (`status` or `state`, a string). A GitHub pull request
(`"state": "closed", "merged": true`) is merged. Records of a call that failed are not read:
a failure's `"status": "failed"` is the call's, not the object's.

An action moves an object to a state: a successful call whose name starts with a verb of
`ACTION_STATES` (`cancel_pending_order`, `merge_pull_request`) and one of whose arguments
is the object's id.

State words, the tool's and the reply's, are mapped to canonical states (`canonical_state`,
`REPLY_STATE_WORDS`); `contradicts` holds the explicit pairs that cannot both be true.
Pairs not listed never contradict: "shipped" and `processed` (an order is processed when it
has shipped), "merged" and `closed` (GitHub closes a merged pull request), "refunded" and
`return requested` (the refund follows the return).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import Turn
from .outcomes import call_succeeded, structured_payload

_RECORD_STATES: Mapping[str, str] = {
    "pending": "pending",
    "processing": "processed",
    "processed": "processed",
    "in progress": "in_progress",
    "in_progress": "in_progress",
    "shipped": "shipped",
    "in transit": "shipped",
    "delivered": "delivered",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "return requested": "return_requested",
    "exchange requested": "exchange_requested",
    "returned": "returned",
    "exchanged": "exchanged",
    "refunded": "refunded",
    "paid": "paid",
    "unpaid": "unpaid",
    "open": "open",
    "opened": "open",
    "to do": "open",
    "closed": "closed",
    "resolved": "closed",
    "done": "closed",
    "merged": "merged",
    "approved": "approved",
    "rejected": "rejected",
}
"""A tool's status values, lower-cased: "pending (item modified)" reads as its head."""

REPLY_STATE_WORDS: Mapping[str, str] = {
    "delivered": "delivered",
    "shipped": "shipped",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "refunded": "refunded",
    "exchanged": "exchanged",
    "returned": "returned",
    "pending": "pending",
    "paid": "paid",
    "approved": "approved",
    "rejected": "rejected",
    "closed": "closed",
    "resolved": "closed",
    "merged": "merged",
    "geliefert": "delivered",
    "zugestellt": "delivered",
    "ausgeliefert": "delivered",
    "versandt": "shipped",
    "versendet": "shipped",
    "verschickt": "shipped",
    "storniert": "cancelled",
    "annulliert": "cancelled",
    "erstattet": "refunded",
    "rückerstattet": "refunded",
    "umgetauscht": "exchanged",
    "zurückgegeben": "returned",
    "ausstehend": "pending",
    "bezahlt": "paid",
    "genehmigt": "approved",
    "abgelehnt": "rejected",
    "geschlossen": "closed",
    "gemergt": "merged",
    "已送达": "delivered",
    "已签收": "delivered",
    "已发货": "shipped",
    "已取消": "cancelled",
    "已退款": "refunded",
    "已换货": "exchanged",
    "已退货": "returned",
    "已付款": "paid",
    "已支付": "paid",
    "已批准": "approved",
    "已关闭": "closed",
    "已合并": "merged",
}
"""The reply's words for a state (English, German, Chinese), lower-cased."""

_CONTRADICTED_BY: Mapping[str, frozenset[str]] = {
    "delivered": frozenset({"pending", "processed", "shipped", "cancelled"}),
    "shipped": frozenset({"pending", "cancelled"}),
    "cancelled": frozenset({"pending", "processed", "shipped", "delivered"}),
    "refunded": frozenset({"pending", "processed", "shipped", "delivered"}),
    "exchanged": frozenset({"pending", "processed", "shipped", "cancelled"}),
    "returned": frozenset({"pending", "processed", "shipped", "cancelled"}),
    # A return or exchange of an order can be pending while the order is not: no pair.
    "pending": frozenset({"processed", "shipped", "delivered", "cancelled"}),
    "paid": frozenset({"unpaid"}),
    "approved": frozenset({"pending", "rejected"}),
    "rejected": frozenset({"approved"}),
    "closed": frozenset({"open", "in_progress"}),
    "merged": frozenset({"open"}),
}
"""claimed state -> the recorded states it cannot stand beside."""

ACTION_STATES: Mapping[str, str] = {
    "cancel": "cancelled",
    "refund": "refunded",
    "return": "returned",
    "exchange": "exchanged",
    "ship": "shipped",
    "deliver": "delivered",
    "pay": "paid",
    "approve": "approved",
    "reject": "rejected",
    "close": "closed",
    "resolve": "closed",
    "merge": "merged",
    "reopen": "open",
}
"""A tool name's first word -> the state a successful call moves its object to."""

_ID_KEYS = ("order_id", "ticket_id", "issue_id", "pr_number", "key", "number", "id")
_STATE_KEYS = ("status", "state")
MAX_RECORDS = 2_000
"""Objects read from one turn's results; past it the rest is unread."""
_NAME_WORDS = re.compile(r"[a-z]+")


def contradicts(claimed: str, recorded: str) -> bool:
    """True when an object cannot be in the `claimed` state if its record says `recorded`."""
    return recorded in _CONTRADICTED_BY.get(claimed, frozenset())


def canonical_state(value: str) -> str | None:
    """A tool's status value as a canonical state, None when it is none this reads."""
    text = value.strip().lower()
    head = text.split("(", 1)[0].strip()
    return _RECORD_STATES.get(text) or _RECORD_STATES.get(head)


def normal_id(value: object) -> str | None:
    """An id as compared: lower-cased, without a leading `#`; None for what is no id."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip().lower().lstrip("#")
    return text if 0 < len(text) <= 64 else None


@dataclass(frozen=True)
class ObjectEvent:
    """What the call at `position` of the turn says about one object: the state its result
    records (`recorded`) and the state its action moved it to (`moved_to`)."""

    position: int
    tool: str
    recorded: str | None = None
    moved_to: str | None = None


def object_events(turn: Turn) -> dict[str, list[ObjectEvent]]:
    """Each object id of the turn's records and actions -> its events, in call order."""
    events: dict[str, list[ObjectEvent]] = {}
    count = 0
    for position, call in enumerate(turn.tool_calls):
        if call.answer or call.result is None or not call_succeeded(call):
            continue
        verb = _NAME_WORDS.findall(call.name.lower().rsplit(".", 1)[-1])[:1]
        moved = ACTION_STATES.get(verb[0]) if verb else None
        if moved is not None:
            for value in call.arguments.values():
                key = normal_id(value)
                if key is not None:
                    events.setdefault(key, []).append(ObjectEvent(position, call.name, None, moved))
        payload = structured_payload(call.result)
        if payload is None:
            continue
        for key, state in _records(payload):
            count += 1
            if count > MAX_RECORDS:
                return events
            events.setdefault(key, []).append(ObjectEvent(position, call.name, state, None))
    return events


def _records(payload: Any) -> Iterator[tuple[str, str]]:
    """(id, canonical state) of every record in a structured result."""
    stack = [payload]
    seen = 0
    while stack and seen < MAX_RECORDS:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            record = _record(value)
            if record is not None:
                yield record
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))


def _record(obj: dict[Any, Any]) -> tuple[str, str] | None:
    lowered = {str(k).lower(): v for k, v in obj.items()}
    raw = next((lowered[k] for k in _STATE_KEYS if isinstance(lowered.get(k), str)), None)
    if raw is None:
        return None
    state = "merged" if lowered.get("merged") is True else canonical_state(raw)
    if state is None:
        return None
    key = next((k for k in _ID_KEYS if k in lowered), None)
    if key is None:
        key = next((k for k in lowered if k.endswith("_id")), None)
    object_id = normal_id(lowered[key]) if key is not None else None
    return None if object_id is None else (object_id, state)
