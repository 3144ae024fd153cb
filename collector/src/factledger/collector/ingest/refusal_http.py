"""The OTLP/HTTP answer to a refused request, read off the refusal's declared `Outcome`.

Every refusal the HTTP receiver meets goes through `refused`: it is counted in
`factledger_requests_refused_total` by its reason and logged when the operator has to act
(`collector.ingest.intake.record_refusal`, as the gRPC receiver counts its own), and
answered with its HTTP status and a `google.rpc.Status` body (code: the outcome's gRPC
status) in the request's media type. A retryable 503 carries `Retry-After`; a 401
carries `WWW-Authenticate: Bearer`; a refusal whose body may be unread closes the
connection.
"""

from __future__ import annotations

from fastapi import Response

from factledger.collector import otlp
from factledger.collector.ingest.intake import record_refusal
from factledger.collector.metrics import Metrics
from factledger.collector.refusals import RETRY_DELAY_SECONDS, Refusal

RETRY_AFTER_SECONDS = RETRY_DELAY_SECONDS


def refused(refusal: Refusal, media: str, metrics: Metrics) -> Response:
    """Count `refusal` and answer it in `media` (the reply type of the request)."""
    outcome = refusal.outcome
    record_refusal(refusal, metrics, "http")
    return Response(
        otlp.encode_status(media, outcome.grpc_status.value, refusal.client_message),
        status_code=outcome.http_status,
        media_type=media,
        headers=headers(refusal),
    )


def headers(refusal: Refusal) -> dict[str, str]:
    """The HTTP headers `refusal`'s outcome calls for."""
    outcome = refusal.outcome
    found: dict[str, str] = {}
    if outcome.retryable and outcome.http_status == 503:
        found["Retry-After"] = str(RETRY_AFTER_SECONDS)
    if outcome.http_status == 401:
        found["WWW-Authenticate"] = "Bearer"
    if outcome.closes_connection:
        found["Connection"] = "close"
    return found
