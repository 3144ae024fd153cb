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

Sent with the `langfuse` SDK's REST client (`langfuse.api.LangfuseAPI`), one
`POST /api/public/scores` per batch, not with `Langfuse.create_score`: that one hands
the score to a background thread and never reports how the request ended, and the
outbox must tell a 401 from a 429. The REST client is given an httpx client of ours (so
each call keeps the batch's deadline) and no retries of its own (the outbox retries).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import httpx
from langfuse.api import LangfuseAPI
from langfuse.api.commons.types.score_data_type import ScoreDataType
from langfuse.api.core.api_error import ApiError
from langfuse.api.scores.types import (
    CreateScoreBatchResults,
    CreateScoreRequest,
    CreateScoreSource,
)

from factledger.collector.export import options as read
from factledger.collector.export.base import (
    Delivered,
    ExportTarget,
    TargetRefused,
    VerdictRecord,
)
from factledger.collector.export.http_errors import (
    Deadline,
    error_for_status,
    error_for_transport,
)
from factledger.collector.export.summary import Score, latest, metadata, scores, stable_id

NAME = "langfuse"


def score_request(
    record: VerdictRecord,
    score: Score,
    environment: str | None = None,
    annotation_config_id: str | None = None,
) -> CreateScoreRequest:
    """One score of one verdict version, as the SDK's REST client takes it."""
    request = CreateScoreRequest(
        id=stable_id(record.tenant, record.turn_id, score.name),
        trace_id=record.trace_id,
        observation_id=record.span_id,
        name=score.name,
        value=score.verdict,
        # By value: mypy reads the SDK's enum members as plain strings.
        data_type=ScoreDataType("CATEGORICAL"),
        comment=score.explanation,
        metadata={**metadata(record, score), "factledger.score": score.value},
        timestamp=dt.datetime.fromtimestamp(record.judged_at_ms / 1000, tz=dt.UTC),
    )
    # Optional fields are set only when there: the client sends a field it was given as
    # None as null, which is not the same as leaving it out.
    extra: dict[str, object] = {}
    if environment is not None:
        extra["environment"] = environment
    if annotation_config_id is not None and score.kind is None:
        extra["source"] = CreateScoreSource("ANNOTATION")
        extra["config_id"] = annotation_config_id
    return request.model_copy(update=extra) if extra else request


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
        self._deadline: Deadline | None = None
        # The client fixes a per-request timeout when it is built; this hook gives each
        # request what is left of the batch's deadline instead.
        self._http = httpx.Client(event_hooks={"request": [self._keep_deadline]})
        self._api = LangfuseAPI(
            base_url=host,
            username=public_key,
            password=secret_key,
            x_langfuse_public_key=public_key,
            x_langfuse_sdk_name="factledger",
            httpx_client=self._http,
        )
        self._environment = environment
        self._annotation_config_id = annotation_config_id

    @property
    def name(self) -> str:
        return NAME

    def _keep_deadline(self, request: httpx.Request) -> None:
        if self._deadline is not None:
            request.extensions["timeout"] = self._deadline.remaining().as_dict()

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        body = [
            score_request(record, score, self._environment, self._annotation_config_id)
            # Two versions of a turn share ids: only the later may go in one request.
            for record in latest(records)
            for score in scores(record)
        ]
        if not body:
            return Delivered(0)
        self._deadline = Deadline(NAME, timeout_seconds)
        try:
            answer = self._api.scores.create(request=body, request_options={"max_retries": 0})
        except ApiError as error:
            mapped = error_for_status(NAME, error.status_code or 0, error.headers or {})
            if mapped is not None:
                raise mapped from error
            # A 2xx whose body the client could not read: Langfuse took the batch.
            return Delivered(len(records))
        except httpx.TransportError as error:
            raise error_for_transport(NAME, error) from error
        if isinstance(answer, CreateScoreBatchResults) and answer.rejected:
            # A 207: Langfuse took some scores and will never take the others (its
            # reference: do not retry a 207). The reason counts them; the errors may
            # quote what was sent.
            raise TargetRefused(
                f"{NAME} refused {answer.rejected} of {len(body)} scores of the batch"
            )
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
