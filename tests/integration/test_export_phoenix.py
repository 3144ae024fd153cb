"""The Phoenix target against a real Phoenix server on loopback (.peers/phoenix): an
agent's spans reach Phoenix over OTLP, verdicts are delivered as span annotations, and
Phoenix's own REST API reads them back on that span."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from factledger.collector.export import phoenix
from factledger.collector.export.base import (
    ExportTarget,
    TargetUnavailable,
    VerdictRecord,
)
from tests.integration.export_records import later, record
from tests.integration.peers import phoenix_server

PROJECT = "factledger-export"


@pytest.fixture(scope="module")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


def agent_span(url: str) -> tuple[str, str]:
    """Send an agent's LLM span to Phoenix with the OTel SDK; its trace and span ids."""
    provider = TracerProvider(
        resource=Resource.create(
            {"service.name": "orders-agent", "openinference.project.name": PROJECT}
        )
    )
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    tracer = provider.get_tracer("orders-agent")
    with (
        tracer.start_as_current_span("invoke_agent support"),
        tracer.start_as_current_span("chat gpt-test") as span,
    ):
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("openinference.span.kind", "LLM")
        context = span.get_span_context()
    provider.shutdown()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def deliver_when_stored(target: ExportTarget, records: list[VerdictRecord]) -> None:
    """Phoenix stores spans in the background: until it has, it answers 404, which the
    target reads as retryable, as the outbox would."""
    deadline = time.monotonic() + 60
    while True:
        try:
            target.deliver(records, timeout_seconds=10)
            return
        except TargetUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def stored_annotations(url: str, span_id: str) -> dict[str, list[dict[str, Any]]]:
    response = httpx.get(
        f"{url}/v1/projects/{PROJECT}/span_annotations", params={"span_ids": span_id}
    )
    response.raise_for_status()
    found: dict[str, list[dict[str, Any]]] = {}
    for annotation in response.json()["data"]:
        found.setdefault(annotation["name"], []).append(annotation)
    return found


def test_verdicts_show_on_the_span_and_a_later_version_replaces(phoenix_url: str) -> None:
    trace_id, span_id = agent_span(phoenix_url)
    target = phoenix.build({"endpoint": phoenix_url, "project": PROJECT})
    first = record(trace_id=trace_id, span_id=span_id)
    deliver_when_stored(target, [first])

    found = stored_annotations(phoenix_url, span_id)
    assert sorted(found) == ["factledger.claim", "factledger.identifier", "factledger.verdict"]
    [verdict] = found["factledger.verdict"]
    assert verdict["span_id"] == span_id
    assert verdict["annotator_kind"] == "CODE"
    assert verdict["result"]["label"] == "reject"
    assert verdict["result"]["score"] == 0.0
    assert "ORD-1 was never returned by a tool" in verdict["result"]["explanation"]
    assert verdict["metadata"]["factledger.turn_id"] == "turn-1"
    assert verdict["metadata"]["factledger.version"] == 1
    [claim] = found["factledger.claim"]
    assert (claim["result"]["label"], claim["result"]["score"]) == ("flag", 0.5)

    target.deliver([first], 10)
    assert {name: len(rows) for name, rows in stored_annotations(phoenix_url, span_id).items()} == {
        "factledger.verdict": 1,
        "factledger.identifier": 1,
        "factledger.claim": 1,
    }

    second = later(first)
    target.deliver([second], 10)
    target.deliver([second], 10)
    now = stored_annotations(phoenix_url, span_id)
    assert {name: len(rows) for name, rows in now.items()} == {
        "factledger.verdict": 1,
        "factledger.identifier": 1,
        "factledger.claim": 1,
    }
    for name in ("factledger.verdict", "factledger.identifier", "factledger.claim"):
        [row] = now[name]
        assert (row["result"]["label"], row["result"]["score"]) == ("pass", 1.0), name
        assert row["metadata"]["factledger.version"] == 2
    assert "no longer finds identifier" in now["factledger.identifier"][0]["result"]["explanation"]
    target.shutdown()


def test_a_batch_with_two_versions_of_a_turn_leaves_the_later(phoenix_url: str) -> None:
    trace_id, span_id = agent_span(phoenix_url)
    target = phoenix.build({"endpoint": phoenix_url, "project": PROJECT})
    first = record(trace_id=trace_id, span_id=span_id, turn_id="turn-batch")
    deliver_when_stored(target, [later(first), first])
    [verdict] = stored_annotations(phoenix_url, span_id)["factledger.verdict"]
    assert verdict["metadata"]["factledger.version"] == 2
    target.shutdown()


def test_a_later_version_read_in_another_project_is_retried_saying_so(phoenix_url: str) -> None:
    trace_id, span_id = agent_span(phoenix_url)
    right = phoenix.build({"endpoint": phoenix_url, "project": PROJECT})
    first = record(trace_id=trace_id, span_id=span_id, turn_id="turn-project")
    deliver_when_stored(right, [first])
    wrong = phoenix.build({"endpoint": phoenix_url, "project": "no-such-project"})
    with pytest.raises(TargetUnavailable, match="another project"):
        wrong.deliver([later(first)], 10)
    right.shutdown()
    wrong.shutdown()


def test_a_span_phoenix_never_received_stays_retryable(phoenix_url: str) -> None:
    target = phoenix.build({"endpoint": phoenix_url})
    with pytest.raises(TargetUnavailable, match="404"):
        target.deliver([record(span_id="00000000000000ab")], 10)
    target.shutdown()
