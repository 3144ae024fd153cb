"""The Langfuse target against a loopback intake that records what it is sent.

Langfuse itself does not run here: these tests hold the target to Langfuse's documented
`POST /api/public/scores` shape, its Basic auth and its upsert ids.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from factledger.collector.export import langfuse
from factledger.collector.export.summary import stable_id
from tests.integration.export_records import later, record
from tests.integration.recording_server import RecordingServer


@pytest.fixture
def intake() -> Iterator[RecordingServer]:
    server = RecordingServer()
    yield server
    server.close()


def test_one_score_for_the_verdict_and_one_per_kind_on_the_span(intake: RecordingServer) -> None:
    target = langfuse.build({"host": intake.url, "public_key": "pk-lf", "secret_key": "sk-lf"})
    first = record()
    assert target.deliver([first], timeout_seconds=5).count == 1
    target.shutdown()

    assert [(r.method, r.path) for r in intake.requests] == [("POST", "/api/public/scores")] * 3
    expected_auth = "Basic " + base64.b64encode(b"pk-lf:sk-lf").decode()
    assert {r.headers["authorization"] for r in intake.requests} == {expected_auth}
    bodies = {r.body["name"]: r.body for r in intake.requests}
    assert list(bodies) == ["factledger.verdict", "factledger.identifier", "factledger.claim"]
    verdict = bodies["factledger.verdict"]
    assert verdict["traceId"] == first.trace_id
    assert verdict["observationId"] == first.span_id
    assert (verdict["value"], verdict["dataType"]) == ("reject", "CATEGORICAL")
    assert "ORD-1 was never returned by a tool" in verdict["comment"]
    assert verdict["metadata"]["factledger.turn_id"] == "turn-1"
    assert verdict["metadata"]["factledger.version"] == 1
    assert verdict["metadata"]["factledger.score"] == 0.0
    assert verdict["metadata"]["factledger.turn_url"] == first.turn_url
    assert verdict["timestamp"].endswith("+00:00")
    assert "source" not in verdict
    claim = bodies["factledger.claim"]
    assert (claim["value"], claim["metadata"]["factledger.tokens"]) == ("flag", "shipped")


def test_ids_are_the_same_in_a_retry_and_a_later_version(intake: RecordingServer) -> None:
    target = langfuse.build({"host": intake.url, "public_key": "pk", "secret_key": "sk"})
    first = record()
    target.deliver([first], 5)
    target.deliver([first], 5)
    target.deliver([later(first)], 5)
    ids = [r.body["id"] for r in intake.requests]
    first_ids, retry_ids, later_ids = ids[:3], ids[3:6], ids[6:]
    assert first_ids == retry_ids
    assert [r.body["timestamp"] for r in intake.requests[:3]] == [
        r.body["timestamp"] for r in intake.requests[3:6]
    ]
    assert later_ids == [stable_id("acme", "turn-1", "factledger.verdict")] == first_ids[:1]
    assert intake.requests[6].body["value"] == "pass"
    other_turn = record(turn_id="turn-2")
    target.deliver([other_turn], 5)
    assert intake.requests[-1].body["id"] not in ids


def test_an_annotation_config_sends_the_verdict_to_review_queues(intake: RecordingServer) -> None:
    target = langfuse.build(
        {
            "host": intake.url,
            "public_key": "pk",
            "secret_key": "sk",
            "annotation_config_id": "cfg-1",
            "environment": "production",
        }
    )
    target.deliver([record()], 5)
    verdict, *kinds = [r.body for r in intake.requests]
    assert (verdict["source"], verdict["configId"]) == ("ANNOTATION", "cfg-1")
    assert all("source" not in body for body in kinds)
    assert {body["environment"] for body in (verdict, *kinds)} == {"production"}
