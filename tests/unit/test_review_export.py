"""Labels as eval cases: the label decides what is expected, the turn's spans travel as an
OTLP/JSON request that decodes back to the same spans, and `factledger eval` reads the
JSONL an export writes."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from factledger.collector import otlp
from factledger.collector.api.review_export import eval_case, expected, export_cases, otlp_request
from factledger.collector.rows import SPAN_COLUMNS, span_row
from factledger.evaluation import read_cases
from factledger.processors.spans import SpanEvent, SpanRecord

FLAG = {"kind": "confabulated_identifier_set", "severity": "flag"}
REJECT = {"kind": "fabricated_identifier", "severity": "reject"}
INFO = {"kind": "validator_error", "severity": "info"}


@pytest.mark.parametrize(
    ("label", "verdict", "findings", "wanted"),
    [
        pytest.param(
            "hallucination",
            "flag",
            [FLAG, INFO],
            {"verdict": "flag", "kinds": [FLAG["kind"]], "allow": [INFO["kind"]]},
            id="confirmed-flag-keeps-its-kinds",
        ),
        pytest.param(
            "hallucination",
            "reject",
            [REJECT, FLAG],
            {"verdict": "reject", "kinds": sorted([REJECT["kind"], FLAG["kind"]]), "allow": []},
            id="confirmed-reject",
        ),
        pytest.param(
            "hallucination",
            "pass",
            [],
            {"verdict": "flag", "kinds": [], "allow": []},
            id="missed-hallucination-expects-at-least-a-flag",
        ),
        pytest.param(
            "not_hallucination",
            "flag",
            [FLAG, INFO],
            {"verdict": "pass", "kinds": [], "allow": [INFO["kind"]]},
            id="false-alarm-expects-pass",
        ),
    ],
)
def test_the_label_decides_what_is_expected(
    label: str, verdict: str, findings: list[dict[str, str]], wanted: dict[str, Any]
) -> None:
    assert expected(label, verdict, findings) == wanted


def _span(span_id: str, parent: str = "", **attributes: Any) -> SpanRecord:
    return SpanRecord(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id=span_id,
        name=f"span {span_id}",
        parent_span_id=parent,
        kind=3,
        start_time_unix_nano=1_767_225_600_000_000_000,
        end_time_unix_nano=1_767_225_600_500_000_000,
        status_code=2,
        status_message="tool failed",
        attributes=attributes,
        events=(SpanEvent("exception", 1_767_225_600_100_000_000, {"exception.type": "E"}),),
        resource_attributes={"service.name": "shop", "host.cores": 2},
        scope_name="tests",
        scope_version="1.0",
    )


def test_otlp_request_decodes_back_to_the_same_spans() -> None:
    spans = [
        _span("b7ad6b7169203331"),
        _span(
            "00f067aa0ba902b7",
            "b7ad6b7169203331",
            text="héllo",
            flag=True,
            count=-3,
            ratio=0.25,
            raw=b"\x00\xff",
            items=["a", 1, None],
            nested={"k": [1.5, False]},
            empty=None,
        ),
    ]
    body = json.dumps(otlp_request(spans)).encode()
    decoded = otlp.decode_request(body, otlp.JSON)
    assert decoded.rejected == 0
    assert list(decoded.spans) == spans


def test_non_finite_doubles_are_spelled_as_strings() -> None:
    request = otlp_request([_span("b7ad6b7169203331", nan=math.nan, up=math.inf)])
    attributes = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    assert [a["value"] for a in attributes] == [{"doubleValue": "NaN"}, {"doubleValue": "Infinity"}]
    json.dumps(request, allow_nan=False)  # strict JSON


def _labelled(turn_id: str, label: str, spans: list[SpanRecord]) -> dict[str, Any]:
    created = datetime(2026, 1, 1, 12, tzinfo=UTC)
    rows = [
        dict(zip(SPAN_COLUMNS, span_row(span, 1_767_225_600_000), strict=True)) for span in spans
    ]
    return {
        "turn_id": turn_id,
        "trace_id": "0af7651916cd43dd8448eb211c80319c",
        "model": "gpt-4o",
        "agent": "coder",
        "verdict": "flag",
        "kinds": [FLAG["kind"]],
        "findings": [FLAG],
        "review": {
            "review_id": f"r-{turn_id}",
            "label": label,
            "note": "checked",
            "reviewer": "ana",
            "created_at": created,
        },
        "spans": rows,
    }


def test_an_export_is_a_file_factledger_eval_reads(tmp_path: Path) -> None:
    span = _span("b7ad6b7169203331", **{"gen_ai.operation.name": "chat"})
    export = export_cases(
        [
            _labelled("t1", "hallucination", [span]),
            _labelled("t2", "not_hallucination", [span]),
            _labelled("gone", "hallucination", []),
        ]
    )
    assert [case["id"] for case in export.cases] == ["t1", "t2"]
    assert export.skipped == [{"turn_id": "gone", "reason": "its spans are no longer stored"}]
    assert export.cases[0]["review"]["created_at"] == "2026-01-01T12:00:00+00:00"
    assert export.cases[1]["expected"] == {"verdict": "pass", "kinds": [], "allow": []}
    path = tmp_path / "reviews.jsonl"
    path.write_text(export.jsonl(), encoding="utf-8")
    cases = list(read_cases(path))
    assert [(c.id, c.verdict, sorted(c.kinds)) for c in cases] == [
        ("t1", "flag", [FLAG["kind"]]),
        ("t2", "pass", []),
    ]
    assert cases[0].otlp == eval_case(_labelled("t1", "hallucination", [span]))["otlp"]
    assert path.read_text().splitlines()[-1].startswith("// skipped gone:")
