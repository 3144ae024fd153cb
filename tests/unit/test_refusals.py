"""Every refusal class declares its outcome, and the one OTLP/HTTP mapping answers by it.

The classes are found by walking `Refusal`'s subclasses once every collector module is
imported, so a class added anywhere without an outcome of its own fails here.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import factledger.collector
from factledger.collector import otlp
from factledger.collector.ingest.refusal_http import RETRY_AFTER_SECONDS, refused
from factledger.collector.metric_catalogue import CATALOGUE
from factledger.collector.metrics import Metrics
from factledger.collector.refusals import (
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
    assert metrics.value("factledger_requests_refused_total", reason=reason) == 1
    assert metrics.total("factledger_requests_refused_total") == 1


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
