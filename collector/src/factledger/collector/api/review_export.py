"""Human labels as `factledger eval` cases: a confirmed hallucination (or a confirmed false
alarm) becomes a regression case.

Each labelled turn is exported as `{"id", "otlp", "expected", "review", "turn"}`: `otlp`
is an OTLP/JSON request holding the turn's stored spans, so `factledger eval` assembles
the turn exactly as the service does; `review` and `turn` say where the case came from
(the eval reads only `id`, `otlp` and `expected`). The label sets what is expected:

- `hallucination`: the stored verdict (`flag` when it was `pass`: the validators missed
  it), with the kinds found at flag or reject severity;
- `not_hallucination`: `pass`, no kinds.

Info-severity kinds go to `allow` either way: they never change a verdict. A turn whose
spans are no longer stored cannot be replayed; it is left out with a reason. Pure
functions over the rows `Store.labelled_turns` returns.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from factledger.collector.rows import span_from_row
from factledger.processors.spans import AttributeValue, SpanRecord

_POSITIVE = ("reject", "flag")


@dataclass(frozen=True)
class Export:
    """The cases of an export, and why some labelled turns have none."""

    cases: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    """`{turn_id, reason}` per labelled turn left out."""

    def jsonl(self) -> str:
        """One case per line; a `//` line per turn left out (`factledger eval` skips them)."""
        lines = [json.dumps(case, ensure_ascii=False, sort_keys=True) for case in self.cases]
        lines += [f"// skipped {s['turn_id']}: {s['reason']}" for s in self.skipped]
        return "".join(line + "\n" for line in lines)


def export_cases(turns: Iterable[Mapping[str, Any]]) -> Export:
    """Eval cases for labelled turns (as `Store.labelled_turns` returns them)."""
    cases: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for turn in turns:
        if not turn["spans"]:
            skipped.append({"turn_id": turn["turn_id"], "reason": "its spans are no longer stored"})
            continue
        cases.append(eval_case(turn))
    return Export(cases, skipped)


def eval_case(turn: Mapping[str, Any]) -> dict[str, Any]:
    """One labelled turn (with `review`, `findings` and `spans`) as an eval case."""
    review = turn["review"]
    return {
        "id": turn["turn_id"],
        "otlp": otlp_request([span_from_row(row) for row in turn["spans"]]),
        "expected": expected(review["label"], turn["verdict"], turn["findings"]),
        "review": {
            "review_id": review["review_id"],
            "label": review["label"],
            "note": review["note"],
            "reviewer": review["reviewer"],
            "created_at": _iso(review["created_at"]),
        },
        "turn": {
            "turn_id": turn["turn_id"],
            "trace_id": turn["trace_id"],
            "model": turn["model"],
            "agent": turn["agent"],
            "verdict": turn["verdict"],
            "kinds": list(turn["kinds"]),
        },
    }


def expected(label: str, verdict: str, findings: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The eval's `expected` object for a turn's label, verdict and findings."""
    found = {str(f["kind"]) for f in findings if f["severity"] in _POSITIVE}
    allow = sorted({str(f["kind"]) for f in findings} - found)
    if label == "hallucination":
        wanted = verdict if verdict in _POSITIVE else "flag"
        return {"verdict": wanted, "kinds": sorted(found), "allow": allow}
    return {"verdict": "pass", "kinds": [], "allow": allow}


# --- OTLP/JSON ----------------------------------------------------------------------------


def otlp_request(spans: Sequence[SpanRecord]) -> dict[str, Any]:
    """An OTLP/JSON ExportTraceServiceRequest holding `spans`, grouped by resource and
    scope (ids as hex, times as decimal strings, bytes as base64, as OTLP/JSON writes
    them); `collector.otlp_json` reads back the same spans."""
    resources: dict[str, tuple[Mapping[str, AttributeValue], dict[tuple[str, str], list[Any]]]]
    resources = {}
    for span in spans:
        key = json.dumps(_attributes(span.resource_attributes), sort_keys=True)
        _, scopes = resources.setdefault(key, (span.resource_attributes, {}))
        scopes.setdefault((span.scope_name, span.scope_version), []).append(_span(span))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(attributes)},
                "scopeSpans": [
                    {"scope": {"name": name, "version": version}, "spans": encoded}
                    for (name, version), encoded in scopes.items()
                ],
            }
            for attributes, scopes in resources.values()
        ]
    }


def _span(span: SpanRecord) -> dict[str, Any]:
    encoded: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_time_unix_nano),
        "endTimeUnixNano": str(span.end_time_unix_nano),
        "attributes": _attributes(span.attributes),
        "status": {"code": span.status_code, "message": span.status_message},
    }
    if span.parent_span_id:
        encoded["parentSpanId"] = span.parent_span_id
    if span.events:
        encoded["events"] = [
            {
                "name": event.name,
                "timeUnixNano": str(event.time_unix_nano),
                "attributes": _attributes(event.attributes),
            }
            for event in span.events
        ]
    return encoded


def _attributes(attributes: Mapping[str, AttributeValue]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items()]


def _value(value: AttributeValue) -> dict[str, Any]:
    # bool before int: a bool is an int in Python.
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value if math.isfinite(value) else _non_finite(value)}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(item) for item in value]}}
    return {"stringValue": str(value)}


def _non_finite(value: float) -> str:
    # JSON has no NaN or infinities; the protobuf JSON mapping spells them as strings.
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _iso(value: datetime | str) -> str:
    return value if isinstance(value, str) else value.isoformat()
