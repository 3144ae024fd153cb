"""Verdicts as Datadog LLM Observability evaluations on the reply's span.

Each verdict version becomes categorical evaluation metrics joined on the span:
`factledger_verdict` (value reject/flag/pass) and one `factledger_<kind>` per finding
kind (Datadog's evaluation labels take letters, digits and underscores), with the
findings' messages as reasoning, `assessment` pass or fail, and FactLedger's metadata
both as the metric's `metadata` and as `key:value` tags (tags are what Datadog filters
and groups on). One POST per batch to the documented intake
`/api/intake/llm-obs/v2/eval-metric`, with the `DD-API-KEY` header.

Ids: a span sent to Datadog by OTel keeps its 128-bit trace id in hex, while Datadog
names a span by the decimal of its 64-bit id, so `span_id` is sent as that decimal.

Later versions: the intake takes no id; Datadog shows, per span and label, the
evaluation with the latest `timestamp_ms`, which is the later version's judging time. A
retried batch sends the same metrics with the same timestamps.

Not `ddtrace`'s `LLMObs.submit_evaluation`: it enables a process-global tracer and
writer, and sends from a background thread whose outcome the outbox never sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx

from factledger.collector.export import options as read
from factledger.collector.export.base import Delivered, ExportTarget, VerdictRecord
from factledger.collector.export.http_errors import Deadline, send
from factledger.collector.export.summary import Score, metadata, scores

NAME = "datadog"

INTAKE_PATH = "/api/intake/llm-obs/v2/eval-metric"

MAX_TAG_CHARS = 200
"""Datadog cuts a tag at 200 characters; a longer value is cut here, visibly."""


def label(score: Score) -> str:
    """The evaluation label of a score: Datadog takes ASCII letters, digits and
    underscores only, so anything else becomes an underscore."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in score.name)


def tags(record: VerdictRecord, score: Score) -> list[str]:
    """FactLedger's metadata as Datadog tags (`factledger_turn_id:...`)."""
    found = [f"{key.replace('.', '_')}:{value}" for key, value in metadata(record, score).items()]
    return [tag if len(tag) <= MAX_TAG_CHARS else tag[: MAX_TAG_CHARS - 1] + "…" for tag in found]


def metric(record: VerdictRecord, score: Score, ml_app: str | None) -> dict[str, object]:
    """One evaluation metric of one verdict version."""
    return {
        "join_on": {"span": {"trace_id": record.trace_id, "span_id": str(int(record.span_id, 16))}},
        # Datadog's application names are lowercase; a service name may not be.
        "ml_app": ml_app or record.service_name.lower(),
        "timestamp_ms": record.judged_at_ms,
        "metric_type": "categorical",
        "label": label(score),
        "categorical_value": score.verdict,
        "assessment": "pass" if score.verdict == "pass" else "fail",
        "reasoning": score.explanation,
        "tags": tags(record, score),
        "metadata": metadata(record, score),
    }


def intake_body(records: Sequence[VerdictRecord], ml_app: str | None) -> dict[str, object]:
    """The JSON body of one batch."""
    metrics = [metric(record, score, ml_app) for record in records for score in scores(record)]
    return {"data": {"type": "evaluation_metric", "attributes": {"metrics": metrics}}}


class DatadogTarget:
    """Evaluations in one Datadog site's LLM Observability."""

    def __init__(self, endpoint: str, api_key: str, ml_app: str | None = None) -> None:
        self._http = httpx.Client(base_url=endpoint, headers={"DD-API-KEY": api_key})
        self._ml_app = ml_app

    @property
    def name(self) -> str:
        return NAME

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        if not records:
            return Delivered(0)
        deadline = Deadline(NAME, timeout_seconds)
        body = intake_body(records, self._ml_app)
        send(NAME, self._http, self._http.build_request("POST", INTAKE_PATH, json=body), deadline)
        return Delivered(len(records))

    def shutdown(self) -> None:
        self._http.close()


def build(options: Mapping[str, object]) -> ExportTarget:
    """A Datadog target from `[export.datadog]`: `api_key`, `site` (default
    datadoghq.com) or an `endpoint` URL in its place, and `ml_app` (default: the
    record's service name)."""
    site = read.text(options, "site", "datadoghq.com")
    return DatadogTarget(
        endpoint=read.base_url(options, "endpoint", f"https://api.{site}"),
        api_key=read.text(options, "api_key"),
        ml_app=read.optional_text(options, "ml_app"),
    )
