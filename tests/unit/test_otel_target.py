"""The `otel` export target (collector.export.otel, export.otel_events): one
`gen_ai.evaluation.result` event per verdict and per finding kind, parented to the reply
span, sent through the SDK's OTLP exporter to a real loopback receiver; its answers
mapped onto delivered / refused / unavailable."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from factledger.collector.export.base import (
    ExportedFinding,
    TargetRefused,
    TargetUnavailable,
    VerdictRecord,
)
from factledger.collector.export.otel import build
from factledger.collector.export.otel_events import EVENT_NAME, SCORES, evaluation_events
from factledger.logs_sink import LogsSink
from factledger.service_process import free_port

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def verdict(version: int = 1, span_id: str = SPAN) -> VerdictRecord:
    return VerdictRecord(
        tenant="default",
        turn_id="turn-1",
        version=version,
        cause="judged" if version == 1 else "late_span",
        verdict="reject",
        trace_id=TRACE,
        span_id=span_id,
        response_id="resp_42",
        service_name="shop",
        agent_name="support",
        model="gpt-4o",
        findings=(
            ExportedFinding("fabricated_identifier", "reject", "9d22a7c", "no commit 9d22a7c", 1),
            ExportedFinding("fabricated_identifier", "flag", "OPS-9001", "no ticket", 1),
            ExportedFinding("unsupported_claim", "flag", "refunded", "no refund call", 3),
        ),
        turn_url="http://127.0.0.1:8501/turns?turn_id=turn-1",
        judged_at_ms=1_700_000_000_000,
    )


@pytest.fixture
def sink() -> Iterator[LogsSink]:
    sink = LogsSink()
    yield sink
    sink.close()


def test_one_event_for_the_verdict_and_one_per_kind() -> None:
    events = evaluation_events(verdict())
    names = [e.attributes["gen_ai.evaluation.name"] for e in events if e.attributes]
    assert names == [
        "factledger.verdict",
        "factledger.fabricated_identifier",
        "factledger.unsupported_claim",
    ]
    assert {e.event_name for e in events} == {EVENT_NAME}
    verdict_event, fabricated, claim = (dict[str, Any](e.attributes or {}) for e in events)
    assert verdict_event["gen_ai.evaluation.score.label"] == "reject"
    assert list(fabricated["factledger.tokens"]) == ["9d22a7c", "OPS-9001"]
    assert fabricated["gen_ai.evaluation.score.label"] == "reject"  # the worst of the kind
    assert fabricated["gen_ai.evaluation.explanation"] == "no commit 9d22a7c\nno ticket"
    assert claim["gen_ai.evaluation.score.value"] == SCORES["flag"] == 0.5
    for attributes in (verdict_event, fabricated, claim):
        assert attributes["gen_ai.response.id"] == "resp_42"
        assert attributes["factledger.turn_id"] == "turn-1"
        assert attributes["factledger.verdict_version"] == 1
        assert attributes["factledger.turn_url"].endswith("turn_id=turn-1")


@pytest.mark.parametrize(
    ("label", "value"), [("pass", 1.0), ("flag", 0.5), ("reject", 0.0)], ids=str
)
def test_scores_are_higher_for_better_replies(label: str, value: float) -> None:
    assert SCORES[label] == value  # type: ignore[index]


def test_events_reach_a_receiver_parented_to_the_reply_span(sink: LogsSink) -> None:
    target = build({"endpoint": sink.url, "timeout_seconds": 5})
    target.deliver([verdict(), verdict(version=2)], 5.0)
    events = sink.wait_for(6)
    assert {(e.trace_id, e.span_id) for e in events} == {(TRACE, SPAN)}
    assert {e.event_name for e in events} == {EVENT_NAME}
    assert sorted({e.attributes["factledger.verdict_version"] for e in events}) == [1, 2]
    kinds = {e.attributes.get("factledger.kind") for e in events}
    assert kinds == {None, "fabricated_identifier", "unsupported_claim"}
    assert {e.service_name for e in events} == {"factledger"}
    target.shutdown()


def test_an_unknown_span_sends_the_event_unparented(sink: LogsSink) -> None:
    target = build({"endpoint": sink.url})
    target.deliver([verdict(span_id="")], 5.0)
    events = sink.wait_for(3)
    assert {(e.trace_id, e.span_id) for e in events} == {("", "")}
    assert {e.attributes["gen_ai.response.id"] for e in events} == {"resp_42"}
    target.shutdown()


@pytest.mark.parametrize("status", [400, 401, 403, 413])
def test_a_refusal_is_permanent(sink: LogsSink, status: int) -> None:
    sink.status = status
    target = build({"endpoint": sink.url, "timeout_seconds": 2})
    with pytest.raises(TargetRefused, match=str(status)):
        target.deliver([verdict()], 2.0)
    target.shutdown()


def test_throttling_is_retryable_with_its_retry_after(sink: LogsSink) -> None:
    sink.status = 429
    sink.script.append((429, {"Retry-After": "30"}))
    target = build({"endpoint": sink.url, "timeout_seconds": 1})
    with pytest.raises(TargetUnavailable) as caught:
        target.deliver([verdict()], 1.0)
    assert caught.value.retry_after_seconds == 30.0
    target.shutdown()


def test_no_receiver_is_retryable() -> None:
    port = free_port()  # nothing listens on it
    target = build({"endpoint": f"http://127.0.0.1:{port}/v1/logs", "timeout_seconds": 1})
    with pytest.raises(TargetUnavailable):
        target.deliver([verdict()], 1.0)
    target.shutdown()


def test_grpc_is_built_when_its_exporter_is_installed_and_named_when_not() -> None:
    options = {"protocol": "grpc", "endpoint": "127.0.0.1:4317"}
    if importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is None:
        with pytest.raises(ValueError, match="opentelemetry-exporter-otlp-proto-grpc"):
            build(options)
        return
    target = build(options)
    assert target.name == "otel"
    target.shutdown()


def test_grpc_without_its_exporter_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc._log_exporter", None)
    with pytest.raises(ValueError, match=r"^protocol: grpc needs .*proto-grpc$"):
        build({"protocol": "grpc", "endpoint": "127.0.0.1:4317"})
