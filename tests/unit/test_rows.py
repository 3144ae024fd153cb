"""Row shaping for the ClickHouse tables: pure functions, no server."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from factledger.collector.rows import (
    ALERT_COLUMNS,
    ALERT_DELIVERY_COLUMNS,
    FINDING_COLUMNS,
    REPLY_PREVIEW_CHARS,
    REVIEW_COLUMNS,
    SPAN_COLUMNS,
    TURN_COLUMNS,
    alert_delivery_row,
    alert_row,
    attribute_string,
    attribute_value,
    epoch_ms,
    finding_rows,
    first_verdict_delays,
    from_epoch_ms,
    review_row,
    span_from_row,
    span_row,
    turn_row,
)
from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.guard_activity import GuardActivity
from factledger.processors.kinds import Kind, Outcome
from factledger.processors.model import Finding, TextRange, Turn, Verdict
from factledger.processors.runner import default_runner
from factledger.processors.spans import STATUS_ERROR, SpanEvent, SpanRecord
from tests.unit.transcripts import Call, chat

T0 = datetime(2025, 3, 1, 12, 0, 0, 123_000, tzinfo=UTC)
TRACE = "5b8efff798038103d269b633813fc60c"

# --- attributes -------------------------------------------------------------------------

ATTRIBUTES = [
    pytest.param("hello", "hello", "str", id="string-as-is"),
    pytest.param("", "", "str", id="empty-string"),
    pytest.param("héllo 世界", "héllo 世界", "str", id="unicode-string"),
    pytest.param(True, "true", "bool", id="true"),
    pytest.param(False, "false", "bool", id="false-not-zero"),
    pytest.param(42, "42", "int", id="int-repr"),
    pytest.param(-7, "-7", "int", id="negative-int"),
    pytest.param(2**63 - 1, "9223372036854775807", "int", id="int64-max"),
    pytest.param(1.5, "1.5", "float", id="float-repr"),
    pytest.param(1e20, "1e+20", "float", id="large-float-repr"),
    pytest.param(0.1, "0.1", "float", id="float-shortest-repr"),
    pytest.param(b"\x01\xff", "01ff", "bytes", id="bytes-as-hex"),
    pytest.param(["stop", "length"], '["stop","length"]', "json", id="string-list-as-json"),
    pytest.param([1, 2.5, True], "[1,2.5,true]", "json", id="mixed-list-as-json"),
    pytest.param({"a": 1, "b": ["x"]}, '{"a":1,"b":["x"]}', "json", id="map-as-json"),
    pytest.param(["é"], '["é"]', "json", id="json-keeps-unicode"),
    pytest.param([], "[]", "json", id="empty-list"),
]


@pytest.mark.parametrize(("value", "stored", "kind"), ATTRIBUTES)
def test_attribute_is_stored_as_a_string(value: Any, stored: str, kind: str) -> None:
    assert attribute_string(value) == (stored, kind)


@pytest.mark.parametrize(("value", "stored", "kind"), ATTRIBUTES)
def test_attribute_string_decodes_back(value: Any, stored: str, kind: str) -> None:
    assert attribute_value(stored, kind) == value


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        pytest.param(("a", "b"), '["a","b"]', id="tuple-as-json-list"),
        pytest.param([b"\x00\x01"], '["0001"]', id="bytes-inside-list-as-hex"),
        pytest.param({"k": (1, 2)}, '{"k":[1,2]}', id="tuple-inside-map"),
    ],
)
def test_containers_are_json_with_plain_values(value: Any, stored: str) -> None:
    assert attribute_string(value) == (stored, "json")


# --- times ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "ms"),
    [
        pytest.param(datetime(1970, 1, 1, tzinfo=UTC), 0, id="epoch"),
        pytest.param(T0, 1_740_830_400_123, id="milliseconds-exact-not-float-rounded"),
        pytest.param(T0.replace(tzinfo=None), 1_740_830_400_123, id="naive-read-as-utc"),
        pytest.param(
            T0.astimezone(timezone(timedelta(hours=5, minutes=30))),
            1_740_830_400_123,
            id="other-zone-same-instant",
        ),
        pytest.param(T0 + timedelta(microseconds=999), 1_740_830_400_123, id="rounds-down"),
    ],
)
def test_epoch_ms(moment: datetime, ms: int) -> None:
    assert epoch_ms(moment) == ms


def test_from_epoch_ms_is_aware_utc() -> None:
    assert from_epoch_ms(1_740_830_400_123) == T0
    assert from_epoch_ms(0).tzinfo is UTC


# --- spans ------------------------------------------------------------------------------

PLAIN = SpanRecord(trace_id=TRACE, span_id="eee19b7ec3c1b174", name="chat gpt-4o")
TYPED = SpanRecord(
    trace_id=TRACE,
    span_id="eee19b7ec3c1b175",
    parent_span_id="eee19b7ec3c1b174",
    name="execute_tool create_ticket",
    kind=3,
    start_time_unix_nano=1_740_830_400_123_456_789,
    end_time_unix_nano=1_740_830_401_000_000_001,
    status_code=STATUS_ERROR,
    status_message="boom",
    attributes={
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.response.finish_reasons": ["stop"],
        "sampled": True,
        "temperature": 0.2,
        "raw": b"\xde\xad",
        "looks.like.json": '["not", "a list"]',
        "looks.like.bool": "true",
    },
    events=(
        SpanEvent("gen_ai.choice", 1_740_830_400_500_000_000, {"index": 0, "message": "{}"}),
        SpanEvent("exception", 1_740_830_400_600_000_000, {"exception.escaped": False}),
    ),
    resource_attributes={"service.name": "support-bot", "process.pid": 4242},
    scope_name="opentelemetry.instrumentation.openai_v2",
    scope_version="2.1b0",
    tenant="acme",
)
UNKNOWN_KIND = SpanRecord(trace_id=TRACE, span_id="eee19b7ec3c1b176", name="x", kind=9)


@pytest.mark.parametrize(
    "span",
    [
        pytest.param(PLAIN, id="defaults"),
        pytest.param(TYPED, id="typed-attributes-events-error-status"),
        pytest.param(UNKNOWN_KIND, id="unknown-span-kind-number"),
    ],
)
def test_span_row_round_trips(span: SpanRecord) -> None:
    row = span_row(span, ingested_at_ms=1_740_830_402_000)
    assert len(row) == len(SPAN_COLUMNS)
    assert span_from_row(dict(zip(SPAN_COLUMNS, row, strict=True))) == span


def test_span_row_columns_use_the_exporter_names_and_string_maps() -> None:
    row = dict(zip(SPAN_COLUMNS, span_row(TYPED, ingested_at_ms=7), strict=True))
    assert row["SpanKind"] == "SPAN_KIND_CLIENT"
    assert row["StatusCode"] == "STATUS_CODE_ERROR"
    assert row["ServiceName"] == "support-bot"
    assert row["Duration"] == 876_543_212
    assert row["SpanAttributes"]["gen_ai.usage.input_tokens"] == "12"
    assert row["SpanAttributes"]["gen_ai.response.finish_reasons"] == '["stop"]'
    assert row["ResourceAttributes"]["process.pid"] == "4242"
    assert row["Events.Attributes"][1] == {"exception.escaped": "false"}
    assert row["AttributeTypes"] == {
        "s:gen_ai.usage.input_tokens": "int",
        "s:gen_ai.response.finish_reasons": "json",
        "s:sampled": "bool",
        "s:temperature": "float",
        "s:raw": "bytes",
        "r:process.pid": "int",
        "e0:index": "int",
        "e1:exception.escaped": "bool",
    }
    assert row["IngestedAt"] == 7


def test_a_span_ending_before_it_starts_gets_zero_duration() -> None:
    span = SpanRecord(TRACE, "eee19b7ec3c1b177", "x", start_time_unix_nano=10, end_time_unix_nano=5)
    row = dict(zip(SPAN_COLUMNS, span_row(span, 0), strict=True))
    assert row["Duration"] == 0
    assert span_from_row(row).end_time_unix_nano == 10


# --- turns and findings -----------------------------------------------------------------

FABRICATED = chat(
    "I created ticket TKT-4821 for you.",
    calls=[Call("create_ticket", {"title": "printer"}, result='{"id": "TKT-1001"}')],
)
CONFABULATED = chat(
    "The existing memory tests are test_memory_persistence.py, test_memory_recall.py, "
    "test_memory_validation.py and test_memory_eviction.py.",
    calls=[Call("list_files", {"path": "tests"}, result="tests/test_agent.py\n")],
)
CLEAN = chat("Ticket TKT-1001 is created.", calls=[Call("create_ticket", result="TKT-1001")])


def judged(transcript: dict[str, Any]) -> tuple[Turn, Verdict]:
    turn = turn_from_transcript(transcript, turn_id="turn-1", conversation_id="conv-1")
    return turn, default_runner().validate(turn)


def shaped_turn(transcript: dict[str, Any]) -> dict[str, Any]:
    turn, verdict = judged(transcript)
    row = turn_row(
        turn,
        verdict,
        version=2,
        started_at=T0,
        ended_at=T0 + timedelta(seconds=3),
        validated_at=T0 + timedelta(seconds=4),
        span_ids=["eee19b7ec3c1b174"],
    )
    assert len(row) == len(TURN_COLUMNS)
    return dict(zip(TURN_COLUMNS, row, strict=True))


@pytest.mark.parametrize(
    ("transcript", "expected"),
    [
        pytest.param(
            FABRICATED,
            {
                "Verdict": "reject",
                "Kinds": ["fabricated_identifier"],
                "HasClass5": 0,
                "MaxScore": 0,
            },
            id="reject-without-class5",
        ),
        pytest.param(
            CONFABULATED,
            {
                "Verdict": "flag",
                "Kinds": ["confabulated_identifier_set"],
                "HasClass5": 1,
                "MaxScore": 1.0,
            },
            id="class5-flag-with-score",
        ),
        pytest.param(
            CLEAN, {"Verdict": "pass", "Kinds": [], "HasClass5": 0, "MaxScore": 0}, id="pass"
        ),
    ],
)
def test_turn_row_carries_the_verdict(transcript: dict[str, Any], expected: dict[str, Any]) -> None:
    row = shaped_turn(transcript)
    assert {key: row[key] for key in expected} == expected


def test_turn_row_carries_ids_times_and_tool_calls() -> None:
    row = shaped_turn(FABRICATED)
    assert row["TurnId"] == "turn-1"
    assert row["ConversationId"] == "conv-1"
    assert row["Tenant"] == "default"
    assert row["Version"] == 2
    assert (row["StartedAt"], row["EndedAt"], row["ValidatedAt"]) == (
        1_740_830_400_123,
        1_740_830_403_123,
        1_740_830_404_123,
    )
    assert row["SpanIds"] == ["eee19b7ec3c1b174"]
    assert "identifiers@1.2" in row["Validators"]
    assert json.loads(row["ToolCalls"]) == [
        {
            "name": "create_ticket",
            "call_id": "call_0",
            "arguments": {"title": "printer"},
            "result": '{"id": "TKT-1001"}',
            "ok": True,
            "span_id": None,
            "origin": "structured",
        }
    ]


@pytest.mark.parametrize(
    ("reply", "preview"),
    [
        pytest.param("short", "short", id="short-reply-whole"),
        pytest.param("x" * 500, "x" * REPLY_PREVIEW_CHARS, id="long-reply-cut"),
    ],
)
def test_reply_preview(reply: str, preview: str) -> None:
    row = turn_row(
        Turn(reply=reply),
        Verdict(outcome=Outcome.PASS),
        version=1,
        started_at=T0,
        ended_at=T0,
        validated_at=T0,
        span_ids=(),
    )
    assert dict(zip(TURN_COLUMNS, row, strict=True))["ReplyPreview"] == preview


def test_first_verdict_delays_count_first_versions_from_the_turn_end() -> None:
    def row(version: int, ended_at: datetime) -> list[Any]:
        return turn_row(
            Turn(reply="ok"),
            Verdict(outcome=Outcome.PASS),
            version=version,
            started_at=T0,
            ended_at=ended_at,
            validated_at=T0,
            span_ids=(),
        )

    now_ms = epoch_ms(T0 + timedelta(seconds=10))
    rows = [
        row(1, T0 + timedelta(seconds=7.5)),
        row(2, T0),  # a late span's version: left out
        row(1, T0 + timedelta(seconds=11)),  # ends after now (client clock ahead)
    ]
    assert first_verdict_delays(rows, now_ms) == [2.5, 0.0]


def test_failed_tool_call_is_not_ok() -> None:
    turn, verdict = judged(
        chat("It failed.", calls=[Call("deploy", result="Error: denied", is_error=True)])
    )
    row = turn_row(
        turn, verdict, version=1, started_at=T0, ended_at=T0, validated_at=T0, span_ids=()
    )
    calls = json.loads(dict(zip(TURN_COLUMNS, row, strict=True))["ToolCalls"])
    assert [c["ok"] for c in calls] == [False]


def test_finding_rows_from_a_validated_turn() -> None:
    turn, verdict = judged(FABRICATED)
    rows = [
        dict(zip(FINDING_COLUMNS, r, strict=True))
        for r in finding_rows(turn, verdict, version=3, started_at=T0)
    ]
    assert rows == [
        {
            "Tenant": "default",
            "TurnId": "turn-1",
            "Version": 3,
            "Idx": 0,
            "Kind": "fabricated_identifier",
            "Class": "1",
            "Severity": "reject",
            "Message": verdict.findings[0].message,
            "Token": "TKT-4821",
            "CheckedAgainst": ["create_ticket"],
            "CheckedNote": "",
            "SpanStart": 17,
            "SpanEnd": 25,
            "Validator": verdict.findings[0].validator,
            "Score": -1.0,
            "CallId": "",
            "Model": "test-model",
            "AgentName": "",
            "StartedAt": 1_740_830_400_123,
            # the real key of the trace that the fabricated one stands beside
            "Real.Token": ["TKT-1001"],
            "Real.Tool": ["create_ticket"],
            "Real.CallId": ["call_0"],
        }
    ]


@pytest.mark.parametrize(
    ("finding", "expected"),
    [
        pytest.param(
            Finding(Kind.STALL, "m"),
            {"SpanStart": -1, "SpanEnd": -1, "Score": -1.0, "Severity": "reject"},
            id="no-span-no-score-default-severity",
        ),
        pytest.param(
            Finding(
                Kind.CONFABULATED_IDENTIFIER_SET,
                "m",
                span=TextRange(3, 9),
                score=0.75,
                call_id="c1",
            ),
            {"SpanStart": 3, "SpanEnd": 9, "Score": 0.75, "Class": "5", "CallId": "c1"},
            id="class5-span-score-call",
        ),
    ],
)
def test_finding_row_marks_missing_values(finding: Finding, expected: dict[str, Any]) -> None:
    verdict = Verdict(outcome=Outcome.FLAG, findings=(finding,))
    (row,) = finding_rows(Turn(reply="r"), verdict, version=1, started_at=T0)
    shaped = dict(zip(FINDING_COLUMNS, row, strict=True))
    assert {key: shaped[key] for key in expected} == expected


def test_finding_indexes_follow_the_verdict_order() -> None:
    turn, verdict = judged(CONFABULATED)
    rows = finding_rows(turn, verdict, version=1, started_at=T0)
    assert [r[FINDING_COLUMNS.index("Idx")] for r in rows] == list(range(len(verdict.findings)))


# --- reviews and alerts -----------------------------------------------------------------


def test_review_row() -> None:
    row = review_row(
        tenant="acme",
        turn_id="turn-1",
        review_id="6f1c2f0e-3b7a-4c1d-9e55-0f6b1f7c2a10",
        label="hallucination",
        note="made up",
        reviewer="ana",
        created_at=T0,
    )
    assert dict(zip(REVIEW_COLUMNS, row, strict=True)) == {
        "Tenant": "acme",
        "TurnId": "turn-1",
        "ReviewId": "6f1c2f0e-3b7a-4c1d-9e55-0f6b1f7c2a10",
        "Label": "hallucination",
        "Note": "made up",
        "Reviewer": "ana",
        "CreatedAt": 1_740_830_400_123,
    }


def test_review_label_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError, match="review label"):
        review_row(
            tenant="acme",
            turn_id="t",
            review_id="r",
            label="maybe",  # type: ignore[arg-type]
            note="",
            reviewer="",
            created_at=T0,
        )


@pytest.mark.parametrize(
    ("resolved_at", "stored"),
    [pytest.param(None, None, id="firing-no-resolution"), pytest.param(T0, 1_740_830_400_123)],
)
def test_alert_row(resolved_at: datetime | None, stored: int | None) -> None:
    row = alert_row(
        tenant="acme",
        alert_id="a1",
        rule="reject_rate",
        group_key="model=gpt-4o",
        state="firing" if resolved_at is None else "resolved",
        value=0.4,
        threshold=0.2,
        turns=50,
        fired_at=T0,
        resolved_at=resolved_at,
        message="reject rate 40%",
    )
    shaped = dict(zip(ALERT_COLUMNS, row, strict=True))
    assert shaped["ResolvedAt"] == stored
    assert shaped["FiredAt"] == 1_740_830_400_123


def test_alert_state_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError, match="alert state"):
        alert_row(
            tenant="acme",
            alert_id="a1",
            rule="r",
            group_key="",
            state="pending",  # type: ignore[arg-type]
            value=0,
            threshold=0,
            turns=0,
            fired_at=T0,
            resolved_at=None,
            message="",
        )


def test_alert_delivery_row() -> None:
    row = alert_delivery_row(
        tenant="acme",
        alert_id="a1",
        target="https://hooks.example/x",
        attempt=2,
        ok=False,
        status_code=503,
        error="unavailable",
        at=T0,
    )
    shaped = dict(zip(ALERT_DELIVERY_COLUMNS, row, strict=True))
    assert (shaped["Ok"], shaped["Attempt"], shaped["At"]) == (0, 2, 1_740_830_400_123)


@pytest.mark.parametrize(
    ("guard", "expected"),
    [
        pytest.param(
            None,
            {"GuardChecks": 0, "GuardNudges": 0, "GuardOutcome": "", "GuardAction": "",
             "GuardResult": "unguarded"},
            id="unguarded",
        ),
        pytest.param(
            GuardActivity(2, 1, "pass", "pass"),
            {"GuardChecks": 2, "GuardNudges": 1, "GuardOutcome": "pass", "GuardAction": "pass",
             "GuardResult": "corrected"},
            id="nudged-and-corrected",
        ),
    ],
)  # fmt: skip
def test_turn_row_carries_what_the_guard_did(
    guard: GuardActivity | None, expected: dict[str, Any]
) -> None:
    turn, verdict = judged(CLEAN)
    if guard is not None:
        turn = replace(turn, guard=guard)
    row = turn_row(
        turn, verdict, version=1, started_at=T0, ended_at=T0, validated_at=T0, span_ids=[]
    )
    shaped = dict(zip(TURN_COLUMNS, row, strict=True))
    assert {k: shaped[k] for k in expected} == expected
