"""Spans as FactLedger sees them: decoded once at the edge, then plain frozen values.

Protobuf and OTLP/JSON types never leave `collector.otlp`; everything downstream (turn
assembly, storage rows, the in-process span processor) reads `SpanRecord`s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

AttributeValue = Any
"""str, bool, int, float, bytes, None (an empty OTLP value), a list of those, or a Mapping
for OTLP kvlists."""

LOG_RECORD_MARKER = "factledger.log_record"
"""Span attribute (true) of a *log span*: a zero-length span made from an OTLP log record,
the child of the span the record names, carrying the record as its one event
(`collector.otlp_logs`). Turn assembly folds that event into the span it names."""

STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_unix_nano: int = 0
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)


@dataclass(frozen=True)
class SpanRecord:
    """One span. Ids are lower-case hex (trace 32, span 16 characters; parent "" at a root).

    `kind` and `status_code` keep OTLP's enum numbers (status: 0 unset, 1 ok, 2 error).
    `received_at_unix_nano` is when the service stored it, by the service's clock (its
    `IngestedAt`; 0 when unknown): not part of what the span is, so never compared.
    """

    trace_id: str
    span_id: str
    name: str
    parent_span_id: str = ""
    kind: int = 0
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0
    status_code: int = STATUS_UNSET
    status_message: str = ""
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    resource_attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    scope_name: str = ""
    scope_version: str = ""
    tenant: str = "default"
    received_at_unix_nano: int = field(default=0, compare=False)

    @property
    def service_name(self) -> str:
        value = self.resource_attributes.get("service.name", "")
        return value if isinstance(value, str) else str(value)

    @property
    def is_error(self) -> bool:
        return self.status_code == STATUS_ERROR


def is_log_span(span: SpanRecord) -> bool:
    """Whether the span was made from a log record (`LOG_RECORD_MARKER`)."""
    return span.attributes.get(LOG_RECORD_MARKER) is True
