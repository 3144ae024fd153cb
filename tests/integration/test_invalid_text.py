"""Text no UTF-8 can encode (a lone surrogate escape such as `\\ud800`, which JSON allows)
in what senders and reviewers write: it becomes U+FFFD at the edge and is never fatal.
A reply carrying one keeps its verdict, over OTLP/JSON and protobuf; a review note or
reviewer name carrying one is stored, not a 500."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from tests.integration.otlp_turns import turn_request

LONE = "\ud800"
REPLY = f"Order #W0000001 has shipped {LONE}. I have refunded the fee, ticket OPS-9001."


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _as_protobuf(body: bytes) -> bytes:
    """The OTLP/JSON body as protobuf: the JSON mapping of bytes is base64, not hex."""
    document: dict[str, Any] = json.loads(body)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return ParseDict(document, ExportTraceServiceRequest()).SerializeToString()


def _judged(client: TestClient, trace_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = client.get("/api/v1/turns", params={"limit": 50}).json()["turns"]
        found = [t for t in listed if t["trace_id"] == trace_id]
        if found:
            answer = client.get(f"/api/v1/turns/{found[0]['turn_id']}")
            assert answer.status_code == 200, answer.text
            turn: dict[str, Any] = answer.json()
            return turn
        time.sleep(0.1)
    raise AssertionError(f"trace {trace_id} was not judged in time")


@pytest.mark.parametrize(
    ("content_type", "encode"),
    [("application/json", lambda body: body), ("application/x-protobuf", _as_protobuf)],
    ids=["otlp-json", "protobuf"],
)
def test_a_reply_with_a_lone_surrogate_keeps_its_verdict(
    client: TestClient, content_type: str, encode: Any
) -> None:
    body, _ = turn_request(1, hallucinate=False, reply=REPLY)
    sent = client.post("/v1/traces", headers={"Content-Type": content_type}, content=encode(body))
    assert sent.status_code == 200, sent.text
    turn = _judged(client, f"{1:032x}")
    assert turn["verdict"] == "reject"
    assert "\ufffd" in json.dumps(turn, ensure_ascii=False)


@pytest.mark.parametrize("field", ["note", "reviewer"])
def test_a_review_with_a_lone_surrogate_is_stored_or_refused_cleanly(
    client: TestClient, field: str
) -> None:
    body, _ = turn_request(2, hallucinate=True)
    assert client.post("/v1/traces", headers={"Content-Type": "application/json"}, content=body)
    turn = _judged(client, f"{2:032x}")
    label = {"turn_ids": [turn["turn_id"]], "label": "hallucination", field: f"x{LONE}y"}
    # Written by hand: a JSON encoder that meets a lone surrogate writes this escape too.
    raw = json.dumps(label)
    answer = client.post(
        "/api/v1/reviews", content=raw, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code in (201, 422), answer.text
    if answer.status_code == 201:
        shown = client.get(f"/api/v1/turns/{turn['turn_id']}").json()
        assert "x\ufffdy" in json.dumps(shown, ensure_ascii=False)


def test_a_refused_body_echoing_a_lone_surrogate_is_a_clean_422(client: TestClient) -> None:
    raw = json.dumps({"turn_ids": ["t1"], "label": f"maybe{LONE}"})
    answer = client.post(
        "/api/v1/reviews", content=raw, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["input"] == "maybe\ufffd"
