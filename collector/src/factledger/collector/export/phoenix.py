"""Verdicts as Arize Phoenix span annotations on the reply's LLM span.

Each verdict version becomes annotations of kind CODE on span `span_id`:
`factledger.verdict` (label reject/flag/pass, score 0.0/0.5/1.0, explanation the findings'
messages) and one `factledger.<kind>` per finding kind, all with FactLedger's metadata.

Phoenix keeps one annotation per (span, name, identifier) and replaces it on a new POST.
The identifier here is derived from tenant and turn alone, so a later version of a turn
replaces the one before, and a retried batch writes the same rows again instead of adding.

Sent with Phoenix's own client (`arize-phoenix-client`): it is maintained with the server,
types the request body, and installs beside our pins. It is given an httpx client of ours,
so each call keeps the batch's deadline. `sync=True` makes Phoenix answer for the batch:
asynchronously it would accept annotations for spans it never stores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx
from phoenix.client import Client
from phoenix.client.__generated__.v1 import SpanAnnotationData

from factledger.collector.export import options as read
from factledger.collector.export.base import Delivered, ExportTarget, VerdictRecord
from factledger.collector.export.http_errors import (
    Deadline,
    check_answer,
    error_for_transport,
)
from factledger.collector.export.summary import metadata, scores, stable_id

NAME = "phoenix"

# Phoenix answers 404 for a span it has not stored; the agent's spans reach Phoenix on a
# path of their own, often after the verdict is ready, so a 404 is worth a retry.
_SPAN_NOT_THERE_YET = frozenset({404})


def span_annotations(record: VerdictRecord) -> list[SpanAnnotationData]:
    """The annotations of one verdict version, keyed for replacement by later versions."""
    identifier = f"factledger:{stable_id(record.tenant, record.turn_id)}"
    return [
        SpanAnnotationData(
            name=score.name,
            annotator_kind="CODE",
            span_id=record.span_id,
            identifier=identifier,
            result={
                "label": score.verdict,
                "score": score.value,
                "explanation": score.explanation,
            },
            metadata=metadata(record, score),
        )
        for score in scores(record)
    ]


class PhoenixTarget:
    """Span annotations in one Phoenix server (`endpoint`, e.g. http://localhost:6006)."""

    def __init__(self, endpoint: str, api_key: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=endpoint, headers=headers)
        self._client = Client(http_client=self._http)

    @property
    def name(self) -> str:
        return NAME

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        body = [annotation for record in records for annotation in span_annotations(record)]
        if not body:
            return Delivered(0)
        self._http.timeout = Deadline(NAME, timeout_seconds).remaining()
        try:
            self._client.spans.log_span_annotations(span_annotations=body, sync=True)
        except httpx.HTTPStatusError as error:
            check_answer(NAME, error.response, _SPAN_NOT_THERE_YET)
            raise
        except httpx.TransportError as error:
            raise error_for_transport(NAME, error) from error
        return Delivered(len(records))

    def shutdown(self) -> None:
        self._http.close()


def build(options: Mapping[str, object]) -> ExportTarget:
    """A Phoenix target from `[export.phoenix]`: `endpoint` (default
    http://localhost:6006) and `api_key` (optional, sent as a bearer token)."""
    return PhoenixTarget(
        endpoint=read.base_url(options, "endpoint", "http://localhost:6006"),
        api_key=read.optional_text(options, "api_key"),
    )
