"""Stored values as the query API shows them (collector/api/views.py): finding classes, tool
names apart from notes, tool results as JSON values, span times as RFC 3339 strings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.collector.api.models import ToolCall
from factledger.collector.api.views import (
    MAX_JSON_DEPTH,
    json_value,
    max_score,
    rfc3339_ns,
    span_view,
    split_checked,
    tool_call_view,
)
from factledger.collector.rows import SPAN_COLUMNS, span_row
from factledger.processors.kinds import (
    HALLUCINATION_CLASSES,
    KIND_INFO,
    Kind,
    hallucination_class_of,
)
from factledger.processors.spans import SpanEvent, SpanRecord


@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_every_kind_has_a_documented_class_or_none(kind: Kind) -> None:
    shown = hallucination_class_of(KIND_INFO[kind].hallucination_class)
    assert shown in HALLUCINATION_CLASSES or (shown is None and kind is Kind.VALIDATOR_ERROR)


@pytest.mark.parametrize(
    ("kind", "stored", "tools", "note"),
    [
        pytest.param(
            "fabricated_identifier",
            ["get_order", "list_files"],
            ["get_order", "list_files"],
            None,
            id="tools",
        ),
        pytest.param(
            "fabricated_identifier", ["no tool results"], [], "no tool results", id="no-results"
        ),
        pytest.param(
            "stall", ["no tool calls in this turn"], [], "no tool calls in this turn", id="no-calls"
        ),
        pytest.param(
            "unregistered_tool_call",
            ["no tools offered"],
            [],
            "no tools offered",
            id="none-offered",
        ),
        pytest.param(
            "missing_tool_arguments", ["create_ticket schema"], ["create_ticket"], None, id="schema"
        ),
        pytest.param(
            "missing_tool_arguments",
            ["the turn's plan text"],
            [],
            "the turn's plan text",
            id="plan",
        ),
        pytest.param(
            "ungrounded_tool_argument",
            ["conversation", "tool results"],
            [],
            "conversation, tool results",
            id="arguments",
        ),
        pytest.param(
            "unfetched_citation", ["web.fetch", "web.fetch"], ["web.fetch"], None, id="repeated"
        ),
        pytest.param("confabulated_identifier_set", [], [], None, id="empty"),
    ],
)
def test_checked_against_holds_tool_names_only(
    kind: str, stored: list[str], tools: list[str], note: str | None
) -> None:
    assert split_checked(kind, stored) == (tools, note)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param('{"id": "TKT-1", "n": 2}', {"id": "TKT-1", "n": 2}, id="object"),
        pytest.param(' [1, "two"]\n', [1, "two"], id="array"),
        pytest.param("shipped", "shipped", id="text"),
        pytest.param("42", "42", id="number-text-stays-text"),
        pytest.param('"quoted"', '"quoted"', id="string-text-stays-text"),
        pytest.param('{"id": "TKT-1"', '{"id": "TKT-1"', id="cut-json"),
        pytest.param('{"x": NaN}', '{"x": NaN}', id="nan-is-no-json"),
        pytest.param("[" * 100_000 + "]" * 100_000, "[" * 100_000 + "]" * 100_000, id="too-deep"),
        pytest.param("", "", id="empty"),
        pytest.param(None, None, id="none"),
    ],
)
def test_a_tool_result_is_a_json_value(text: str | None, value: Any) -> None:
    assert json_value(text) == value


def test_a_tool_call_keeps_its_keys_with_the_result_parsed() -> None:
    stored = {"name": "get_order", "arguments": {"id": 1}, "result": '{"ok": true}', "ok": True}
    assert tool_call_view(stored) == {**stored, "result": {"ok": True}}


def test_json_nested_past_the_bound_is_shown_as_text() -> None:
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    assert json_value(deep) == deep
    shallow = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_value(shallow) == json.loads(shallow)
    view = tool_call_view({"name": "f", "arguments": json.loads(deep), "result": deep})
    assert (view["arguments"], view["result"]) == (deep, deep)
    ToolCall.model_validate(
        {**view, "call_id": "", "ok": True, "span_id": None, "origin": "structured"}
    )


@pytest.mark.parametrize(
    ("unix_ns", "text"),
    [
        (0, "1970-01-01T00:00:00.000000000Z"),
        (1_740_830_400_123_456_789, "2025-03-01T12:00:00.123456789Z"),
        (2**63 - 1, "2262-04-11T23:47:16.854775807Z"),
    ],
)
def test_span_times_are_rfc3339_to_the_nanosecond(unix_ns: int, text: str) -> None:
    assert rfc3339_ns(unix_ns) == text


def test_span_view_shows_stored_strings_and_no_integer_javascript_cannot_hold() -> None:
    span = SpanRecord(
        trace_id="5b8efff798038103d269b633813fc60c",
        span_id="eee19b7ec3c1b175",
        name="execute_tool create_ticket",
        kind=3,
        start_time_unix_nano=1_740_830_400_123_456_789,
        end_time_unix_nano=1_740_830_401_000_000_001,
        attributes={"sampled": True, "n": 12},
        events=(SpanEvent("gen_ai.choice", 1_740_830_400_500_000_000, {"index": 0}),),
    )
    view = span_view(dict(zip(SPAN_COLUMNS, span_row(span, 0), strict=True)))
    assert view["attributes"] == {"sampled": "true", "n": "12"}
    assert view["kind"] == "SPAN_KIND_CLIENT"
    assert (view["start_time"], view["end_time"]) == (
        "2025-03-01T12:00:00.123456789Z",
        "2025-03-01T12:00:01.000000001Z",
    )
    assert view["duration_ms"] == pytest.approx(876.543212)
    assert view["events"] == [
        {
            "name": "gen_ai.choice",
            "time": "2025-03-01T12:00:00.500000000Z",
            "attributes": {"index": "0"},
        }
    ]
    assert not [v for v in view.values() if isinstance(v, int) and abs(v) > 2**53]


@pytest.mark.parametrize(
    ("stored", "has_class5", "shown"),
    [(0.0, False, None), (0.8, True, 0.8), (0.0, True, 0.0)],
)
def test_max_score_is_null_without_a_class5_finding(
    stored: float, has_class5: bool, shown: float | None
) -> None:
    assert max_score(stored, has_class5) == shown
