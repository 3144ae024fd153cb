"""The Langfuse target against a loopback intake that records what it is sent.

Langfuse itself does not run here: these tests hold the target, through the `langfuse`
SDK's REST client, to `POST /api/public/scores`: its shape, its Basic auth, its upsert
ids and its 202/207 answers.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from factledger.collector.export import langfuse
from factledger.collector.export.base import TargetRefused
from factledger.collector.export.summary import stable_id
from tests.integration.export_records import later, record
from tests.integration.recording_server import Answer, RecordingServer

ACCEPTED = Answer(202, {"message": "Accepted"})


@pytest.fixture
def intake() -> Iterator[RecordingServer]:
    server = RecordingServer([ACCEPTED])
    yield server
    server.close()


def test_one_score_for_the_verdict_and_one_per_kind_on_the_span(intake: RecordingServer) -> None:
    target = langfuse.build({"host": intake.url, "public_key": "pk-lf", "secret_key": "sk-lf"})
    first = record()
    assert target.deliver([first], timeout_seconds=5).count == 1
    target.shutdown()

    [sent] = intake.requests
    assert (sent.method, sent.path) == ("POST", "/api/public/scores")
    assert sent.headers["authorization"] == "Basic " + base64.b64encode(b"pk-lf:sk-lf").decode()
    bodies = {body["name"]: body for body in sent.body}
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
    assert verdict["timestamp"].startswith("2026-05-28T")
    assert "source" not in verdict
    claim = bodies["factledger.claim"]
    assert (claim["value"], claim["metadata"]["factledger.tokens"]) == ("flag", "shipped")


def test_ids_are_the_same_in_a_retry_and_a_later_version(intake: RecordingServer) -> None:
    target = langfuse.build({"host": intake.url, "public_key": "pk", "secret_key": "sk"})
    first = record()
    target.deliver([first], 5)
    target.deliver([first], 5)
    target.deliver([later(first)], 5)
    sent, retried, second = (r.body for r in intake.requests)
    assert retried == sent
    assert [body["id"] for body in second] == [sent[0]["id"]]
    assert sent[0]["id"] == stable_id("acme", "turn-1", "factledger.verdict")
    assert second[0]["value"] == "pass"
    target.deliver([record(turn_id="turn-2")], 5)
    assert intake.requests[-1].body[0]["id"] not in {body["id"] for body in sent}


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
    verdict, *kinds = intake.requests[0].body
    assert (verdict["source"], verdict["configId"]) == ("ANNOTATION", "cfg-1")
    assert all("source" not in body for body in kinds)
    assert {body["environment"] for body in (verdict, *kinds)} == {"production"}


def test_scores_langfuse_rejects_in_a_207_are_refused() -> None:
    server = RecordingServer(
        [Answer(207, {"accepted": 2, "rejected": 1, "errors": [{"message": "bad config"}]})]
    )
    target = langfuse.build({"host": server.url, "public_key": "pk", "secret_key": "sk"})
    try:
        with pytest.raises(TargetRefused, match="refused 1 of 3 scores"):
            target.deliver([record()], 5)
    finally:
        target.shutdown()
        server.close()


def test_a_batch_with_two_versions_of_a_turn_sends_the_later(intake: RecordingServer) -> None:
    target = langfuse.build({"host": intake.url, "public_key": "pk", "secret_key": "sk"})
    first = record()
    assert target.deliver([first, later(first)], 5).count == 2
    [sent] = intake.requests
    assert [(body["name"], body["metadata"]["factledger.version"]) for body in sent.body] == [
        ("factledger.verdict", 2)
    ]
