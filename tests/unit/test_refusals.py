"""Every refusal class declares its outcome, and the OTLP/HTTP and OTLP/gRPC mappings each
answer by it.

The classes are found by walking `Refusal`'s subclasses once every collector module is
imported, so a class added anywhere without an outcome of its own fails here.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import grpc
import pytest
from google.rpc.error_details_pb2 import RetryInfo  # type: ignore[import-untyped]
from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

import factledger.collector
from factledger.collector import otlp
from factledger.collector.ingest.refusal_grpc import (
    RETRY_INFO_KEY,
    STATUS_DETAILS_KEY,
    answer,
)
from factledger.collector.ingest.refusal_http import RETRY_AFTER_SECONDS, refused
from factledger.collector.metric_catalogue import CATALOGUE
from factledger.collector.metrics import Metrics
from factledger.collector.refusals import (
    RETRY_DELAY_SECONDS,
    RETRYABLE_GRPC,
    RETRYABLE_HTTP,
    Refusal,
    RequestTooLarge,
    declared_outcome,
    refusal_classes,
)
from factledger.processors.errors import FactLedgerError

for _module in pkgutil.walk_packages(factledger.collector.__path__, "factledger.collector."):
    importlib.import_module(_module.name)

CLASSES = sorted(refusal_classes(), key=lambda cls: cls.__name__)
CONCRETE = [cls for cls in CLASSES if declared_outcome(cls) is not None]

# What each refusal answered before outcomes were declared on the classes: HTTP status,
# google.rpc.Code of the body, reason label, Retry-After sent, Connection: close sent.
ANSWERED = {
    "Unauthenticated": (401, 16, "401", False, False),
    "OtlpDecodeError": (400, 3, "400", False, False),
    "UnsupportedMediaType": (415, 3, "415", False, False),
    "UnsupportedEncoding": (415, 3, "415", False, False),
    "PayloadTooLarge": (413, 8, "413", False, False),
    "RequestTooLarge": (413, 8, "too_many_spans", False, False),
    "BodyTimeout": (408, 4, "body_timeout", False, True),
    "BodiesInFlight": (503, 14, "bodies_in_flight", True, True),
    "PipelineFull": (503, 14, "queue_full", True, False),
    "PipelineClosed": (503, 14, "shutting_down", True, False),
    "StoreUnavailable": (503, 14, "store_unavailable", True, False),
    "WalUnavailable": (503, 14, "wal_unavailable", True, False),
}

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ingest.md"


def _instance(cls: type[Refusal]) -> Refusal:
    if cls is RequestTooLarge:
        return RequestTooLarge(120, 100)
    return cls("the detail of this refusal")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_refusal_declares_its_outcome_or_is_a_base(cls: type[Refusal]) -> None:
    assert issubclass(cls, FactLedgerError)
    if declared_outcome(cls) is None:
        assert cls.__subclasses__(), f"{cls.__name__} declares no outcome and has no subclass"


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda cls: cls.__name__)
def test_the_outcome_is_consistent_across_transports(cls: type[Refusal]) -> None:
    outcome = cls.outcome
    if outcome.retryable:
        assert outcome.grpc_status in RETRYABLE_GRPC
    else:
        assert outcome.grpc_status not in RETRYABLE_GRPC
        assert outcome.http_status not in RETRYABLE_HTTP
        assert 400 <= outcome.http_status < 500
    if outcome.http_status in RETRYABLE_HTTP:
        assert outcome.retryable
    reasons = CATALOGUE["factledger_requests_refused_total"].known["reason"]
    assert outcome.reason in reasons


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("media", [otlp.JSON, otlp.PROTOBUF])
def test_the_http_answer_is_read_off_the_outcome(cls: type[Refusal], media: str) -> None:
    status, code, reason, retry_after, closes = ANSWERED[cls.__name__]
    refusal = _instance(cls)
    metrics = Metrics()
    response = refused(refusal, media, metrics)
    assert response.status_code == status == cls.outcome.http_status
    assert code == cls.outcome.grpc_status.value
    assert response.media_type == media
    expected = otlp.encode_status(media, code, refusal.client_message)
    assert bytes(response.body) == expected
    assert ("retry-after" in response.headers) is retry_after
    if retry_after:
        assert response.headers["retry-after"] == str(RETRY_AFTER_SECONDS)
    assert (response.headers.get("connection") == "close") is closes
    assert (response.headers.get("www-authenticate") == "Bearer") is (status == 401)
    assert metrics.value("factledger_requests_refused_total", reason=reason, transport="http") == 1
    assert metrics.total("factledger_requests_refused_total") == 1


# What each refusal answers over OTLP/gRPC: the status code, and whether RetryInfo says
# the sender may send it again (the OTLP specification's "Failures" and "Throttling").
GRPC_ANSWERED = {
    "Unauthenticated": (grpc.StatusCode.UNAUTHENTICATED, False),
    "OtlpDecodeError": (grpc.StatusCode.INVALID_ARGUMENT, False),
    "UnsupportedMediaType": (grpc.StatusCode.INVALID_ARGUMENT, False),
    "UnsupportedEncoding": (grpc.StatusCode.INVALID_ARGUMENT, False),
    "PayloadTooLarge": (grpc.StatusCode.RESOURCE_EXHAUSTED, False),
    "RequestTooLarge": (grpc.StatusCode.RESOURCE_EXHAUSTED, False),
    "BodyTimeout": (grpc.StatusCode.DEADLINE_EXCEEDED, True),
    "BodiesInFlight": (grpc.StatusCode.UNAVAILABLE, True),
    "PipelineFull": (grpc.StatusCode.UNAVAILABLE, True),
    "PipelineClosed": (grpc.StatusCode.UNAVAILABLE, True),
    "StoreUnavailable": (grpc.StatusCode.UNAVAILABLE, True),
    "WalUnavailable": (grpc.StatusCode.UNAVAILABLE, True),
}


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda cls: cls.__name__)
def test_the_grpc_answer_is_read_off_the_outcome(cls: type[Refusal]) -> None:
    """The code and message, a `google.rpc.Status` in the rich-error trailer, and RetryInfo
    (in that Status and on its own, where the Python exporter reads it) exactly when the
    refusal is retryable."""
    code, retry = GRPC_ANSWERED[cls.__name__]
    refusal = _instance(cls)
    answered = answer(refusal)
    assert answered.code == code
    assert answered.code.value[0] == cls.outcome.grpc_status.value
    assert answered.details == refusal.client_message
    trailers = dict(answered.trailing_metadata)
    assert len(trailers) == len(answered.trailing_metadata), "a trailer sent twice"
    status = Status.FromString(trailers[STATUS_DETAILS_KEY])
    assert (status.code, status.message) == (code.value[0], refusal.client_message)
    assert (RETRY_INFO_KEY in trailers) is retry
    assert len(status.details) == (1 if retry else 0)
    if retry:
        packed = RetryInfo()
        assert status.details[0].Unpack(packed)
        alone = RetryInfo.FromString(trailers[RETRY_INFO_KEY])
        assert packed == alone
        assert alone.retry_delay.ToTimedelta().total_seconds() == RETRY_DELAY_SECONDS
    assert set(trailers) <= {STATUS_DETAILS_KEY, RETRY_INFO_KEY}
    assert all(key.endswith("-bin") and isinstance(v, bytes) for key, v in trailers.items())


def test_resource_exhausted_is_never_sent_with_retry_info() -> None:
    """OTLP clients retry RESOURCE_EXHAUSTED only with RetryInfo: a request too large for
    any retry must not carry it, or an exporter would send it again and again."""
    exhausted = [
        cls for cls in CONCRETE if answer(_instance(cls)).code is grpc.StatusCode.RESOURCE_EXHAUSTED
    ]
    assert exhausted
    for cls in exhausted:
        assert RETRY_INFO_KEY not in dict(answer(_instance(cls)).trailing_metadata)


def test_every_refusal_answered_over_grpc_is_in_the_table() -> None:
    assert {cls.__name__ for cls in CONCRETE} == set(GRPC_ANSWERED)


def test_every_refusal_answered_before_is_still_a_class() -> None:
    assert {cls.__name__ for cls in CONCRETE} == set(ANSWERED)


@pytest.mark.parametrize(
    ("cls_name", "message"),
    [
        ("OtlpDecodeError", "the detail of this refusal"),
        ("PipelineFull", "pipeline is full, retry later"),
        ("BodiesInFlight", "too many request bytes in flight, retry later"),
        ("WalUnavailable", "the write-ahead log cannot be written (disk full or failing)"),
    ],
)
def test_a_fixed_message_keeps_the_detail_out_of_the_reply(cls_name: str, message: str) -> None:
    cls = next(cls for cls in CONCRETE if cls.__name__ == cls_name)
    body = json.loads(bytes(refused(_instance(cls), otlp.JSON, Metrics()).body))
    assert body["message"].startswith(message)


def test_the_docs_table_is_the_declared_one() -> None:
    rows = re.findall(
        r"^\| `(\w+)` \| (yes|no) \| (\d{3}) \| (\w+) \| `(\w+)` \|$", DOCS.read_text(), re.M
    )
    documented = {
        name: (retry == "yes", int(http), grpc, reason) for name, retry, http, grpc, reason in rows
    }
    declared = {
        cls.__name__: (
            cls.outcome.retryable,
            cls.outcome.http_status,
            cls.outcome.grpc_status.name,
            cls.outcome.reason,
        )
        for cls in CONCRETE
    }
    assert documented == declared
