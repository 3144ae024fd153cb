"""The Datadog target against a loopback intake that records what it is sent.

Datadog itself does not run here: these tests hold the target to the documented
LLM Observability evaluation-metric intake shape and its API key header.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from factledger.collector.export import datadog
from tests.integration.export_records import later, record
from tests.integration.recording_server import Answer, RecordingServer


@pytest.fixture
def intake() -> Iterator[RecordingServer]:
    server = RecordingServer([Answer(202, {"data": {}})])
    yield server
    server.close()


def test_one_batch_one_request_joined_on_the_span(intake: RecordingServer) -> None:
    target = datadog.build({"endpoint": intake.url, "api_key": "dd-key", "ml_app": "orders"})
    first = record()
    assert target.deliver([first, record(turn_id="turn-2")], 5).count == 2
    target.shutdown()

    [sent] = intake.requests
    assert (sent.method, sent.path) == ("POST", "/api/intake/llm-obs/v2/eval-metric")
    assert sent.headers["dd-api-key"] == "dd-key"
    assert sent.body["data"]["type"] == "evaluation_metric"
    metrics = sent.body["data"]["attributes"]["metrics"]
    assert len(metrics) == 6
    verdict = metrics[0]
    assert verdict["join_on"] == {
        "span": {"trace_id": first.trace_id, "span_id": str(int(first.span_id, 16))}
    }
    assert verdict["ml_app"] == "orders"
    assert verdict["timestamp_ms"] == first.judged_at_ms
    assert (verdict["metric_type"], verdict["label"]) == ("categorical", "factledger_verdict")
    assert (verdict["categorical_value"], verdict["assessment"]) == ("reject", "fail")
    assert "ORD-1 was never returned by a tool" in verdict["reasoning"]
    assert "factledger_turn_id:turn-1" in verdict["tags"]
    assert "factledger_version:1" in verdict["tags"]
    assert verdict["metadata"]["factledger.turn_url"] == first.turn_url
    assert [m["label"] for m in metrics[:3]] == [
        "factledger_verdict",
        "factledger_identifier",
        "factledger_claim",
    ]


def test_a_later_version_is_newer_by_its_timestamp(intake: RecordingServer) -> None:
    target = datadog.build({"endpoint": intake.url, "api_key": "k"})
    first = record()
    target.deliver([first], 5)
    target.deliver([later(first)], 5)
    old, new = (r.body["data"]["attributes"]["metrics"][0] for r in intake.requests)
    assert old["join_on"] == new["join_on"] and old["label"] == new["label"]
    assert new["timestamp_ms"] > old["timestamp_ms"]
    assert (new["categorical_value"], new["assessment"]) == ("pass", "pass")
    assert new["ml_app"] == first.service_name.lower()


def test_the_site_names_the_intake_host() -> None:
    target = datadog.build({"api_key": "k", "site": "datadoghq.eu"})
    assert target._http.base_url == "https://api.datadoghq.eu"  # type: ignore[attr-defined]
