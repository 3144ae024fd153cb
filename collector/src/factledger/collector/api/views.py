"""Stored values as the query API shows them: pure functions, no store, no HTTP.

The store keeps what the validators wrote; readers get one consistent shape of it (the
models in `collector.api.models`), whenever the row was written:

- a finding's `class` is one of `kinds.HALLUCINATION_CLASSES`, or None for a kind without a class
  (`validator_error`);
- `checked_against` names tools only; what else a finding was compared with, or why it
  was compared with no tool at all ("no tool results", "the turn's plan text"), is its
  `checked_note` (rows from before schema 010 kept both in CheckedAgainst: see
  `split_checked`);
- a tool call's `result` is a JSON value: the object or array a tool returned as JSON,
  else its text (None when no result was recorded);
- span and event times are RFC 3339 strings to the nanosecond, since Unix nanoseconds
  (about 1.7e18) are past what a JavaScript number holds exactly (2^53).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from factledger.processors.kinds import Kind, hallucination_class_of

_SCHEMA_OF = re.compile(r"(?P<tool>\S+) schema")
# Kinds whose validator compares with the conversation and the results at large: no entry
# of theirs names a tool, even a single word such as "conversation".
_NO_TOOL_KINDS = frozenset({Kind.UNGROUNDED_TOOL_ARGUMENT.value})
MAX_JSON_DEPTH = 100
"""Nesting a JSON value shown as such may have; a deeper one is shown as its text (the
response model's validation stops at about 250 levels, and no tool means that many)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NS_PER_SECOND = 1_000_000_000


def split_checked(kind: str, checked: Sequence[str]) -> tuple[list[str], str | None]:
    """A finding's CheckedAgainst as rows before schema 010 stored it (tools and notes in
    one list), split into the tool names it holds and a note for the rest (None when
    every entry is a tool).

    Tool names have no spaces (the providers' function-name rules); validators described
    anything else in words ("no tools offered", "the turn's plan text"), and named a
    tool's schema as `<tool> schema`.
    """
    tools: list[str] = []
    notes: list[str] = []
    for entry in checked:
        schema = _SCHEMA_OF.fullmatch(entry)
        if kind in _NO_TOOL_KINDS or (schema is None and any(c.isspace() for c in entry)):
            notes.append(entry)
        else:
            tools.append(schema["tool"] if schema else entry)
    return list(dict.fromkeys(tools)), ", ".join(dict.fromkeys(notes)) or None


def finding_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `findings` row (its Kind, Class, Severity, Message, Token, CheckedAgainst,
    CheckedNote, SpanStart, SpanEnd, Validator, Score, CallId and, when read, the Real
    columns) as the API shows a finding."""
    kind = str(row["Kind"])
    if row["CheckedNote"] is None:  # written before schema 010
        tools, note = split_checked(kind, list(row["CheckedAgainst"]))
    else:
        tools, note = list(row["CheckedAgainst"]), row["CheckedNote"] or None
    return {
        "kind": kind,
        "class": hallucination_class_of(str(row["Class"])),
        "severity": row["Severity"],
        "message": row["Message"],
        "token": row["Token"],
        "checked_against": tools,
        "checked_note": note,
        "span": None if row["SpanStart"] < 0 else [int(row["SpanStart"]), int(row["SpanEnd"])],
        "validator": row["Validator"],
        "score": None if row["Score"] < 0 else float(row["Score"]),
        "call_id": row["CallId"] or None,
        "real": [
            {"token": token, "tool": tool, "call_id": call_id or None}
            for token, tool, call_id in zip(
                row.get("Real.Token", ()),
                row.get("Real.Tool", ()),
                row.get("Real.CallId", ()),
                strict=True,
            )
        ],
    }


def verification_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `verifications` row as the API shows a source's answer: the name asked about,
    the finding of the version it settled (`finding`: its index, null for none), and the
    evidence (source, the exact query, the answer, when, how long)."""
    checked_ms = int(row["checked_ms"])
    return {
        "subject_kind": row["SubjectKind"],
        "name": row["Name"],
        "claimed_absent": bool(row["ClaimedAbsent"]),
        "span": None if row["SpanStart"] < 0 else [int(row["SpanStart"]), int(row["SpanEnd"])],
        "finding": None if row["FindingIdx"] < 0 else int(row["FindingIdx"]),
        "finding_kind": row["FindingKind"] or None,
        "outcome": row["Outcome"],
        "source": row["Source"],
        "query": row["Query"],
        "answer": row["Answer"],
        "reason": row["Reason"] or None,
        "checked_at": datetime.fromtimestamp(checked_ms / 1000, UTC) if checked_ms > 0 else None,
        "duration_ms": round(float(row["DurationMs"]), 3),
    }


def json_value(text: str | None) -> Any:
    """A tool's result as a JSON value: the object or array it holds when it is JSON
    text of one, else the text itself. Scalars stay text: `"42"` is what the tool said,
    not a number it returned. NaN and infinities are no JSON, so their text stays too,
    as does JSON nested deeper than MAX_JSON_DEPTH."""
    if text is None:
        return None
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or stripped[-1:] not in ("}", "]"):
        return text
    try:
        value = json.loads(stripped, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return text
    return value if _depth(value) <= MAX_JSON_DEPTH else text


def _depth(value: Any) -> int:
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def tool_call_view(stored: Mapping[str, Any]) -> dict[str, Any]:
    """One entry of a turn's stored ToolCalls (`rows.tool_call_json`) as the API shows it:
    the result as a JSON value, like the arguments (arguments nested past MAX_JSON_DEPTH
    as their JSON text)."""
    view = dict(stored)
    view["result"] = json_value(stored.get("result"))
    if _depth(view.get("arguments")) > MAX_JSON_DEPTH:
        view["arguments"] = json.dumps(view["arguments"], ensure_ascii=False)
    return view


def rfc3339_ns(unix_ns: int) -> str:
    """Unix nanoseconds as `2025-01-31T12:00:00.123456789Z` (UTC, nine digits)."""
    seconds, fraction = divmod(int(unix_ns), _NS_PER_SECOND)
    moment = _EPOCH + timedelta(seconds=seconds)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{fraction:09d}Z"


def span_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `spans` row (keyed by SPAN_COLUMNS, times in Unix nanoseconds) as the API shows
    it: snake_case keys, attributes as the stored string maps, times as RFC 3339 strings
    to the nanosecond and the duration in (fractional) milliseconds."""
    start = int(row["Timestamp"])
    duration = int(row["Duration"])
    return {
        "trace_id": row["TraceId"],
        "span_id": row["SpanId"],
        "parent_span_id": row["ParentSpanId"],
        "name": row["SpanName"],
        "kind": row["SpanKind"],
        "service": row["ServiceName"],
        "start_time": rfc3339_ns(start),
        "end_time": rfc3339_ns(start + duration),
        "duration_ms": duration / 1e6,
        "status_code": row["StatusCode"],
        "status_message": row["StatusMessage"],
        "attributes": dict(row["SpanAttributes"]),
        "resource_attributes": dict(row["ResourceAttributes"]),
        "scope_name": row["ScopeName"],
        "scope_version": row["ScopeVersion"],
        "events": [
            {"name": name, "time": rfc3339_ns(int(time)), "attributes": dict(attributes)}
            for time, name, attributes in zip(
                row["Events.Timestamp"], row["Events.Name"], row["Events.Attributes"], strict=True
            )
        ],
    }


def max_score(stored: float, has_class5: bool) -> float | None:
    """The highest class-5 score of a turn; None when it has no class-5 finding (the
    store keeps 0 then). A class-5 finding without a score counts as 0."""
    if not has_class5 or math.isnan(stored):
        return None
    return float(stored)
