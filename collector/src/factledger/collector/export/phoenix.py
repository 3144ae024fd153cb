"""Verdicts as Arize Phoenix span annotations on the reply's LLM span.

Each verdict version becomes annotations of kind CODE on span `span_id`:
`factledger.verdict` (label reject/flag/pass, score 0.0/0.5/1.0, explanation the findings'
messages) and one `factledger.<kind>` per finding kind, all with FactLedger's metadata.

Phoenix keeps one annotation per (span, name, identifier) and replaces it on a new POST.
The identifier here is derived from tenant and turn alone, so a later version of a turn
replaces the one before, and a retried batch writes the same rows again instead of adding.
A later version also reads the span's annotations in `project` (Phoenix reads them per
project only): a `factledger.<kind>` of this turn that the version no longer finds is
replaced by a `pass` of that version, so no stale kind stays on the span.

Sent with Phoenix's own client (`arize-phoenix-client`): it is maintained with the server,
types the request body, and installs beside our pins. It is given an httpx client of ours,
so each call keeps the batch's deadline. `sync=True` makes Phoenix answer for the batch
once it has looked at the spans: asynchronously it answers first, and an annotation for
a span it lacks would be lost unseen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx
from phoenix.client import Client
from phoenix.client.__generated__.v1 import SpanAnnotationData

from factledger.collector.export import options as read
from factledger.collector.export.base import (
    Delivered,
    ExportTarget,
    TargetUnavailable,
    VerdictRecord,
)
from factledger.collector.export.http_errors import (
    Deadline,
    check_answer,
    error_for_transport,
)
from factledger.collector.export.summary import (
    VERDICT_NAME,
    Score,
    latest,
    metadata,
    scores,
    stable_id,
)

NAME = "phoenix"

# Phoenix answers 404 for a span it has not stored; the agent's spans reach Phoenix on a
# path of their own, often after the verdict is ready, so a 404 is worth a retry.
_SPAN_NOT_THERE_YET = frozenset({404})


def identifier(record: VerdictRecord) -> str:
    """The same for every version of one turn: what makes a later version replace."""
    return f"factledger:{stable_id(record.tenant, record.turn_id)}"


def annotation(record: VerdictRecord, score: Score) -> SpanAnnotationData:
    """One annotation of one verdict version on the reply's span."""
    return SpanAnnotationData(
        name=score.name,
        annotator_kind="CODE",
        span_id=record.span_id,
        identifier=identifier(record),
        result={"label": score.verdict, "score": score.value, "explanation": score.explanation},
        metadata=metadata(record, score),
    )


def span_annotations(record: VerdictRecord) -> list[SpanAnnotationData]:
    """The annotations of one verdict version, keyed for replacement by later versions."""
    return [annotation(record, score) for score in scores(record)]


def cleared(record: VerdictRecord, name: str) -> SpanAnnotationData:
    """A `pass` of `record`'s version for a kind an earlier version found and it does not."""
    kind = name.removeprefix("factledger.")
    text = f"FactLedger no longer finds {kind} issues (version {record.version})."
    return annotation(record, Score(name, kind, "pass", 1.0, text, ()))


class PhoenixTarget:
    """Span annotations in one Phoenix server (`endpoint`, e.g. http://localhost:6006)."""

    def __init__(self, endpoint: str, api_key: str | None = None, project: str = "default") -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=endpoint, headers=headers)
        self._client = Client(http_client=self._http)
        self._project = project

    @property
    def name(self) -> str:
        return NAME

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        if not records:
            return Delivered(0)
        deadline = Deadline(NAME, timeout_seconds)
        # One POST may not hold two versions of a turn: which would stand is Phoenix's pick.
        standing = latest(records)
        body = [found for record in standing for found in span_annotations(record)]
        body += self._no_longer_found(standing, deadline)
        self._http.timeout = deadline.remaining()
        try:
            self._client.spans.log_span_annotations(span_annotations=body, sync=True)
        except httpx.HTTPStatusError as error:
            check_answer(NAME, error.response, _SPAN_NOT_THERE_YET)
            raise
        except httpx.TransportError as error:
            raise error_for_transport(NAME, error) from error
        return Delivered(len(records))

    def _no_longer_found(
        self, records: Sequence[VerdictRecord], deadline: Deadline
    ) -> list[SpanAnnotationData]:
        """`cleared` annotations for kinds that earlier versions left on these spans."""
        later = {(r.span_id, identifier(r)): r for r in records if r.version > 1}
        if not later:
            return []
        self._http.timeout = deadline.remaining()
        try:
            stored = self._client.spans.get_span_annotations(
                span_ids=sorted({span_id for span_id, _ in later}),
                project_identifier=self._project,
            )
        except httpx.HTTPStatusError as error:
            if error.response.status_code == 404:
                # Not yet stored, or not in that project: Phoenix cannot say which, so the
                # reason names both and the outbox retries within its own limits.
                raise TargetUnavailable(
                    f"{NAME} answered HTTP 404 for the spans' annotations: not stored yet, "
                    "or in another project than the `project` option names"
                ) from error
            check_answer(NAME, error.response)
            raise
        except httpx.TransportError as error:
            raise error_for_transport(NAME, error) from error
        found: list[SpanAnnotationData] = []
        for row in stored:
            record = later.get((row["span_id"], row.get("identifier", "")))
            if record is None or row["name"] == VERDICT_NAME:
                continue
            if row["name"] not in {score.name for score in scores(record)}:
                found.append(cleared(record, row["name"]))
        return found

    def shutdown(self) -> None:
        self._http.close()


def build(options: Mapping[str, object]) -> ExportTarget:
    """A Phoenix target from `[export.phoenix]`: `endpoint` (default
    http://localhost:6006), `api_key` (optional, sent as a bearer token) and `project`
    (the agent's Phoenix project, default `default`)."""
    return PhoenixTarget(
        endpoint=read.base_url(options, "endpoint", "http://localhost:6006"),
        api_key=read.optional_text(options, "api_key"),
        project=read.text(options, "project", "default"),
    )
