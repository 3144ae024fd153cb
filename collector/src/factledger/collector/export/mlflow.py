"""Verdicts as MLflow feedback assessments on the trace, attached to the reply's span.

Each verdict version becomes `factledger.verdict` (feedback value reject/flag/pass,
rationale the findings' messages) and one `factledger.<kind>` per finding kind, source
CODE `factledger`, on trace `tr-<trace_id>` (MLflow's id of a trace whose OTel id is
`trace_id`) and span `span_id`, with FactLedger's metadata (score 1.0/0.5/0.0 among it).

Later versions update in place. Assessment ids are MLflow's own, so each record first
reads the trace's valid assessments: one of the same turn and name is updated when it
is older (`factledger.version`, then `factledger.judged_at_ms`: a label comes after the
version it labels) and left alone when it is not (a retried batch writes nothing
twice). One whose kind the new version no longer finds is overridden by a `pass`
assessment of that version (MLflow's override: the old one is marked not valid and kept
as history); the tracking server's update cannot set `valid` itself. New names are
created.

Sent over the tracking server's REST API (`/api/3.0/mlflow/traces/...`) with httpx, not
with `mlflow-skinny`: its client retries with back-off set by process-wide environment
variables, which would outlast the outbox's timeout, and it brings a cloud SDK and
cryptography along for a handful of JSON requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from factledger.collector.export import options as read
from factledger.collector.export.base import Delivered, ExportTarget, VerdictRecord
from factledger.collector.export.http_errors import Deadline, send
from factledger.collector.export.summary import Score, latest, metadata, scores

NAME = "mlflow"

SOURCE_ID = "factledger"

# MLflow answers 404 for a trace it has not stored yet; the agent's spans reach it on a
# path of their own, so the verdict may be first: worth a retry.
_TRACE_NOT_THERE_YET = frozenset({404})


def mlflow_trace_id(record: VerdictRecord) -> str:
    """MLflow's id of the trace whose OTel trace id is `record.trace_id`."""
    return f"tr-{record.trace_id}"


def assessment(record: VerdictRecord, score: Score) -> dict[str, object]:
    """One feedback assessment of one verdict version, as the REST API takes it."""
    found = {key: str(value) for key, value in metadata(record, score).items()}
    found["factledger.score"] = str(score.value)
    return {
        "assessment_name": score.name,
        "trace_id": mlflow_trace_id(record),
        "span_id": record.span_id,
        "source": {"source_type": "CODE", "source_id": SOURCE_ID},
        "feedback": {"value": score.verdict},
        "rationale": score.explanation,
        "metadata": found,
    }


def cleared(record: VerdictRecord, name: str, prior_id: str) -> dict[str, object]:
    """An assessment that overrides `prior_id`: a kind the new version no longer finds.
    MLflow marks the overridden one not valid and shows this one in its place."""
    kind = name.removeprefix("factledger.")
    score = Score(name, kind, "pass", 1.0, f"FactLedger no longer finds {kind} issues.", ())
    return {**assessment(record, score), "overrides": prior_id}


def _order(existing: Mapping[str, Any]) -> tuple[int, int]:
    """`VerdictRecord.order` of the record an assessment came from (MLflow keeps metadata
    as strings)."""
    found = existing.get("metadata", {})
    try:
        return (
            int(found.get("factledger.version", "0")),
            int(found.get("factledger.judged_at_ms", "0")),
        )
    except ValueError:
        return (0, 0)


def _of_turn(existing: Mapping[str, Any], record: VerdictRecord) -> bool:
    found = existing.get("metadata", {})
    return bool(
        existing.get("source", {}).get("source_id") == SOURCE_ID
        and found.get("factledger.tenant") == record.tenant
        and found.get("factledger.turn_id") == record.turn_id
    )


class MlflowTarget:
    """Feedback assessments in one MLflow tracking server (`tracking_uri`)."""

    def __init__(self, tracking_uri: str, token: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=f"{tracking_uri}/api/3.0/mlflow", headers=headers)

    @property
    def name(self) -> str:
        return NAME

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        deadline = Deadline(NAME, timeout_seconds)
        for record in latest(records):
            self._deliver_one(record, deadline)
        return Delivered(len(records))

    def _deliver_one(self, record: VerdictRecord, deadline: Deadline) -> None:
        path = f"/traces/{mlflow_trace_id(record)}"
        info = self._call("GET", path, None, deadline).json()["trace"]["trace_info"]
        ours = {
            a["assessment_name"]: a
            for a in info.get("assessments", [])
            if _of_turn(a, record) and a.get("valid", True)
        }
        if any(_order(prior) > record.order for prior in ours.values()):
            return  # a later version is there already: this one would only step back
        wanted = scores(record)
        for score in wanted:
            prior = ours.get(score.name)
            if prior is None:
                self._create(path, assessment(record, score), deadline)
            elif _order(prior) < record.order:
                update = {
                    "assessment": assessment(record, score),
                    "update_mask": "feedback,rationale,metadata",
                }
                self._call(
                    "PATCH", f"{path}/assessments/{prior['assessment_id']}", update, deadline
                )
        names = {score.name for score in wanted}
        for name, prior in ours.items():
            if name not in names and _order(prior) < record.order:
                self._create(path, cleared(record, name, prior["assessment_id"]), deadline)

    def _create(self, path: str, body: dict[str, object], deadline: Deadline) -> None:
        self._call("POST", f"{path}/assessments", {"assessment": body}, deadline)

    def _call(
        self, method: str, path: str, body: object | None, deadline: Deadline
    ) -> httpx.Response:
        request = self._http.build_request(method, path, json=body)
        return send(NAME, self._http, request, deadline, _TRACE_NOT_THERE_YET)

    def shutdown(self) -> None:
        self._http.close()


def build(options: Mapping[str, object]) -> ExportTarget:
    """An MLflow target from `[export.mlflow]`: `tracking_uri` (default
    http://localhost:5000) and `token` (optional, sent as a bearer token)."""
    return MlflowTarget(
        tracking_uri=read.base_url(options, "tracking_uri", "http://localhost:5000"),
        token=read.optional_text(options, "token"),
    )
