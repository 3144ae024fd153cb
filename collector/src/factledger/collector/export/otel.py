"""The `otel` export target: `gen_ai.evaluation.result` events over OTLP logs.

Events are shaped by `export.otel_events` and sent by the OTel SDK's own OTLP log
exporter, called directly (no batch processor): its `export` result says whether the
batch was taken, so the outbox can send the batch again. Over http/protobuf the answer's
status is read from the exporter's HTTP session to tell the two failures apart:

| answer                         | outcome                                          |
|--------------------------------|--------------------------------------------------|
| 2xx                            | delivered                                        |
| 400, 401, 403, 404, 413, 415   | TargetRefused (dropped: sending again won't help)|
| 429, 5xx, no answer            | TargetUnavailable, with the answer's Retry-After |

Over grpc (the `opentelemetry-exporter-otlp-proto-grpc` package) every failure is
retryable. The exporter retries a throttled or failing request itself within its timeout
before it answers; the outbox's back-off comes after that.

Options (`[export.otel]`): `endpoint` (required: the URL of the OTLP logs path, or for
grpc host:port; there is no default, since 4318 on this host is FactLedger's own),
`protocol` (`http/protobuf` or `grpc`), `headers` (a table of header names to values:
tokens go here), `timeout_seconds` (default 10), `insecure` (grpc only, default true
for a plain `http://` or host:port endpoint).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import requests
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from factledger.collector.export.base import (
    Delivered,
    ExportTarget,
    TargetRefused,
    TargetUnavailable,
    VerdictRecord,
)
from factledger.collector.export.otel_events import evaluation_events

_REFUSED = frozenset({400, 401, 403, 404, 413, 415})
_OPTIONS = frozenset({"endpoint", "protocol", "headers", "timeout_seconds", "insecure"})
_SCOPE = InstrumentationScope("factledger.export")


class LastAnswer:
    """The status and Retry-After of the last HTTP answer an exporter's session got."""

    def __init__(self) -> None:
        self._local = threading.local()

    def clear(self) -> None:
        self._local.answer = None

    def hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self._local.answer = (response.status_code, response.headers.get("Retry-After"))

    @property
    def status(self) -> int | None:
        answer = getattr(self._local, "answer", None)
        return None if answer is None else int(answer[0])

    @property
    def retry_after_seconds(self) -> float | None:
        answer = getattr(self._local, "answer", None)
        if answer is None or answer[1] is None:
            return None
        try:
            return max(0.0, float(answer[1]))
        except ValueError:
            return None  # an HTTP date: the exporter's own retries honoured it already


class OtelTarget:
    """Sends each batch of verdict records as one OTLP logs request."""

    name = "otel"

    def __init__(
        self,
        exporter: LogRecordExporter,
        answers: LastAnswer | None = None,
        resource: Resource | None = None,
    ) -> None:
        self._exporter = exporter
        self._answers = answers
        self._resource = resource or Resource.create({"service.name": "factledger"})
        self._closed = False

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        """One export of every record's events; raises as the table in the module says."""
        batch = [
            ReadableLogRecord(event, self._resource, _SCOPE)
            for record in records
            for event in evaluation_events(record)
        ]
        if self._answers is not None:
            self._answers.clear()
        result = self._exporter.export(batch)
        if result == LogRecordExportResult.SUCCESS:
            return Delivered(len(records))
        status = self._answers.status if self._answers is not None else None
        if status in _REFUSED:
            raise TargetRefused(f"the OTLP endpoint answered {status}")
        retry_after = self._answers.retry_after_seconds if self._answers is not None else None
        reason = f"the OTLP endpoint answered {status}" if status else "no answer"
        raise TargetUnavailable(reason, retry_after)

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self._exporter.shutdown()  # type: ignore[no-untyped-call]


def build(options: Mapping[str, object]) -> ExportTarget:
    """The target `options` describe; ValueError naming the first bad key."""
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown option")
    protocol = options.get("protocol", "http/protobuf")
    if protocol not in ("http/protobuf", "grpc"):
        raise ValueError("protocol: http/protobuf or grpc")
    timeout = options.get("timeout_seconds", 10.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError("timeout_seconds: seconds above 0")
    headers = options.get("headers", {})
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise ValueError("headers: a table of header names to strings")
    endpoint = options.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        raise ValueError("endpoint: required, the URL of the OTLP logs endpoint")
    if protocol == "grpc":
        return _grpc(endpoint, dict(headers), float(timeout), options.get("insecure"))
    if not endpoint.startswith(("http://", "https://")):
        raise ValueError("endpoint: an http:// or https:// URL")
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    answers = LastAnswer()
    session = requests.Session()
    session.hooks["response"].append(answers.hook)
    exporter = OTLPLogExporter(
        endpoint=endpoint, headers=dict(headers), timeout=float(timeout), session=session
    )
    return OtelTarget(exporter, answers)


def _grpc(endpoint: str, headers: dict[str, str], timeout: float, insecure: object) -> OtelTarget:
    if insecure is not None and not isinstance(insecure, bool):
        raise ValueError("insecure: true or false")
    try:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
            OTLPLogExporter as GrpcLogExporter,
        )
    except ImportError:
        raise ValueError(
            "protocol: grpc needs the package opentelemetry-exporter-otlp-proto-grpc"
        ) from None
    plain = insecure if insecure is not None else not endpoint.startswith("https://")
    exporter = GrpcLogExporter(endpoint=endpoint, insecure=plain, headers=headers, timeout=timeout)
    return OtelTarget(exporter)
