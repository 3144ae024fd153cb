"""Verdict records from a judged turn's stored rows (collector.export.records): keyed to
the reply's span, findings as stored, why the version exists, a link to the turn."""

from __future__ import annotations

import dataclasses

import pytest

from factledger.collector import otlp, rows
from factledger.collector.export.labels import labelled_record, reply_step
from factledger.collector.export.records import (
    validator_class,
    verdict_records,
    version_cause,
)
from factledger.collector.judge.turn_judge import Judged, TurnJudge
from factledger.collector.redaction import Redactor
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord
from tests.integration.otlp_turns import turn_request
from tests.unit.span_turns import FakeClock

SHA = "9d22a7c"
REPLY = f"Order #W0000001 has shipped; the fix is commit {SHA}."
DASHBOARD = "https://factledger.example/"


def _with_response_id(spans: list[SpanRecord], span_id: str) -> list[SpanRecord]:
    return [
        dataclasses.replace(s, attributes={**s.attributes, "gen_ai.response.id": "resp_42"})
        if s.span_id == span_id
        else s
        for s in spans
    ]


def _judged(reply: str = REPLY, redactor: Redactor | None = None) -> tuple[Judged, list[str]]:
    clock = FakeClock()
    judge = TurnJudge(
        default_runner(), grace_seconds=1.0, max_wait_seconds=60.0, clock=clock, redactor=redactor
    )
    body, ids = turn_request(1, hallucinate=False, reply=reply)
    spans = _with_response_id(list(otlp.decode_request(body, otlp.JSON).spans), ids[3])
    judge.judge(spans)
    clock.now = 5.0
    return judge.judge([]), ids


def test_a_judged_turn_makes_one_record_keyed_to_its_reply_span() -> None:
    judged, ids = _judged()
    (record,) = verdict_records(judged.turn_rows, judged.finding_rows, judged.replies, DASHBOARD)
    assert (record.trace_id, record.span_id) == (f"{1:032x}", ids[3])  # the last chat span
    assert record.response_id == "resp_42"
    assert (record.version, record.cause, record.verdict) == (1, "judged", "reject")
    assert [(f.kind, f.verdict, f.token) for f in record.findings] == [
        ("fabricated_identifier", "reject", SHA)
    ]
    assert record.findings[0].message
    assert record.turn_url == f"https://factledger.example/turns?turn_id={record.turn_id}"
    assert (record.service_name, record.agent_name, record.model) != ("", "", "")


def test_a_record_carries_the_stored_redacted_text() -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    judged, _ = _judged(f"Commit {secret}x is the fix.", Redactor.default())
    (record,) = verdict_records(judged.turn_rows, judged.finding_rows, judged.replies, DASHBOARD)
    stored = [
        (row[rows.FINDING_COLUMNS.index("Message")], row[rows.FINDING_COLUMNS.index("Token")])
        for row in judged.finding_rows
    ]
    assert [(f.message, f.token) for f in record.findings] == stored
    assert secret not in repr(record)


def test_a_row_without_its_reply_ref_goes_unparented() -> None:
    judged, _ = _judged()
    (record,) = verdict_records(judged.turn_rows, judged.finding_rows, [], DASHBOARD)
    assert (record.span_id, record.response_id, record.cause) == ("", None, "judged")


def test_refs_of_other_versions_do_not_apply() -> None:
    judged, _ = _judged()
    (ref,) = judged.replies
    other = dataclasses.replace(ref, version=2, span_id="ffffffffffffffff")
    (record,) = verdict_records(judged.turn_rows, judged.finding_rows, [other], DASHBOARD)
    assert record.span_id == ""


@pytest.mark.parametrize(
    ("version", "settled", "cause"),
    [
        pytest.param(1, False, "judged", id="first-version-is-judged"),
        pytest.param(3, False, "late_span", id="later-version-is-a-late-span"),
        pytest.param(2, True, "verified", id="a-settlement-is-verified"),
    ],
)
def test_version_cause(version: int, settled: bool, cause: str) -> None:
    assert version_cause(version, settled=settled) == cause


@pytest.mark.parametrize(
    ("stored", "number"),
    [("1", 1), ("4b", 4), ("5", 5), ("mirror", 0), ("citation", 0), ("-", 0)],
)
def test_validator_class_is_the_leading_number(stored: str, number: int) -> None:
    assert validator_class(stored) == number


def test_a_label_is_a_verdict_on_the_reply_span() -> None:
    body, ids = turn_request(1, hallucinate=False, reply=REPLY)
    spans = _with_response_id(list(otlp.decode_request(body, otlp.JSON).spans), ids[3])
    reply = reply_step(spans, ids)
    assert reply is not None and (reply.span_id, reply.response_id) == (ids[3], "resp_42")
    assert reply_step(spans, ids[:2]) is not None  # only the turn's own spans count
    assert reply_step(spans, ids[:2]).span_id == ids[1]  # type: ignore[union-attr]
    turn = {
        "turn_id": "t-1",
        "trace_id": f"{1:032x}",
        "version": 2,
        "service": "shop",
        "agent": "support",
        "model": "gpt-4o",
        "findings": [
            {
                "kind": "fabricated_identifier",
                "class": "1",
                "severity": "reject",
                "message": "no such commit",
                "token": SHA,
            },
        ],
    }
    record = labelled_record("default", turn, "hallucination", reply, DASHBOARD, 5)
    assert record is not None
    assert (record.cause, record.verdict, record.version) == ("labelled", "reject", 2)
    assert (record.span_id, record.judged_at_ms) == (ids[3], 5)
    assert [(f.kind, f.validator_class) for f in record.findings] == [("fabricated_identifier", 1)]
    passed = labelled_record("default", turn, "not_hallucination", None, DASHBOARD, 5)
    assert passed is not None and (passed.verdict, passed.span_id) == ("pass", "")
    assert labelled_record("default", turn, "maybe", reply, DASHBOARD, 5) is None
