"""Verdicts as Langfuse scores on the reply's observation.

Each verdict version becomes `factledger.verdict` (CATEGORICAL, value reject/flag/pass)
and one `factledger.<kind>` per finding kind, on trace `trace_id` and observation
`span_id` (Langfuse keeps OTel's hex ids for spans it ingests over OTLP), comment the
findings' messages, metadata FactLedger's (score 1.0/0.5/0.0 among it).

Ids: each score's id is derived from tenant, turn and score name, so a retried batch
writes the same scores again. Langfuse updates a score sent again with the same id and
the same timestamp; a later version carries its own judging time, so where Langfuse
keys a score on its day as well, a version judged on a later day shows beside the one
before: `factledger.version` in its metadata says which is newest.

With `annotation_config_id` set, the verdict score goes with `source: ANNOTATION` and
that score config (Langfuse requires one there), so it feeds an annotation queue's
reviewers as a prefilled score to confirm.

Sent with httpx, one POST /api/public/scores per score, not with the `langfuse` SDK:
its `create_score` hands the score to a background thread and never reports how the
request ended, so a 401 could not be told from a 429, and the outbox needs exactly that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import httpx

from factledger.collector.export import options as read
from factledger.collector.export.base import Delivered, ExportTarget, VerdictRecord
from factledger.collector.export.http_errors import Deadline, send
from factledger.collector.export.summary import Score, metadata, scores, stable_id

NAME = "langfuse"

SCORES_PATH = "/api/public/scores"


def score_body(
    record: VerdictRecord,
    score: Score,
    environment: str | None = None,
    annotation_config_id: str | None = None,
) -> dict[str, object]:
    """The JSON body of one score of one verdict version."""
    when = dt.datetime.fromtimestamp(record.judged_at_ms / 1000, tz=dt.UTC)
    body: dict[str, object] = {
        "id": stable_id(record.tenant, record.turn_id, score.name),
        "traceId": record.trace_id,
        "observationId": record.span_id,
        "name": score.name,
        "value": score.verdict,
        "dataType": "CATEGORICAL",
        "comment": score.explanation,
        "metadata": {**metadata(record, score), "factledger.score": score.value},
        "timestamp": when.isoformat(timespec="milliseconds"),
    }
    if environment is not None:
        body["environment"] = environment
    if annotation_config_id is not None and score.kind is None:
        body["source"] = "ANNOTATION"
        body["configId"] = annotation_config_id
    return body


class LangfuseTarget:
    """Scores in one Langfuse project, reached at `host` with its public and secret key."""

    def __init__(
        self,
        host: str,
        public_key: str,
        secret_key: str,
        environment: str | None = None,
        annotation_config_id: str | None = None,
    ) -> None:
        self._http = httpx.Client(base_url=host, auth=httpx.BasicAuth(public_key, secret_key))
        self._environment = environment
        self._annotation_config_id = annotation_config_id

    @property
    def name(self) -> str:
        return NAME

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        deadline = Deadline(NAME, timeout_seconds)
        for record in records:
            for score in scores(record):
                body = score_body(record, score, self._environment, self._annotation_config_id)
                request = self._http.build_request("POST", SCORES_PATH, json=body)
                send(NAME, self._http, request, deadline)
        return Delivered(len(records))

    def shutdown(self) -> None:
        self._http.close()


def build(options: Mapping[str, object]) -> ExportTarget:
    """A Langfuse target from `[export.langfuse]`: `host` (default
    https://cloud.langfuse.com), `public_key`, `secret_key`, and optionally
    `environment` and `annotation_config_id`."""
    return LangfuseTarget(
        host=read.base_url(options, "host", "https://cloud.langfuse.com"),
        public_key=read.text(options, "public_key"),
        secret_key=read.text(options, "secret_key"),
        environment=read.optional_text(options, "environment"),
        annotation_config_id=read.optional_text(options, "annotation_config_id"),
    )
