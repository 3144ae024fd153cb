"""The query API in-process on the shared chDB engine: turns, detail, reject rates, the
review queue and reviews, OpenAPI, readiness and the 503 of a pipeline that is closing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from factledger.collector.app import create_app
from factledger.collector.store import Store
from factledger.settings import ServiceSettings
from tests.integration.otlp_turns import turn_request

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _send_turns(client: TestClient, count: int) -> None:
    for index in range(1, count + 1):
        body, _ = turn_request(index, hallucinate=index % 2 == 0, model=f"model-{index % 2}")
        assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200


def _wait(client: TestClient, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        turns: list[dict[str, Any]] = client.get("/api/v1/turns").json()["turns"]
        if len(turns) >= count:
            return turns
        time.sleep(0.1)
    raise AssertionError("turns were not judged in time")


def test_turns_detail_stats_and_filters(client: TestClient) -> None:
    _send_turns(client, 4)
    turns = _wait(client, 4)
    assert {t["verdict"] for t in turns} == {"pass", "reject"}
    rejected = client.get("/api/v1/turns", params={"verdict": "reject"}).json()
    assert rejected["total"] == 2
    by_kind = client.get("/api/v1/turns", params={"kind": "claim_without_tool"}).json()
    assert by_kind["total"] == 2

    detail = client.get(f"/api/v1/turns/{rejected['turns'][0]['turn_id']}").json()
    assert detail["reply"].startswith("Order #W")
    assert {f["kind"] for f in detail["findings"]} == {
        "claim_without_tool",
        "fabricated_identifier",
    }
    assert all(f["span"] is None or f["span"][0] < f["span"][1] for f in detail["findings"])
    assert [c["name"] for c in detail["tool_calls"]] == ["get_order"]
    assert len(detail["spans"]) == 4

    stats = client.get("/api/v1/stats/reject-rate", params={"group_by": "model", "bucket": "1h"})
    series = {s["key"]: s["points"] for s in stats.json()["series"]}
    assert series["model-0"][0]["rate"] == 1.0
    assert series["model-1"][0]["rate"] == 0.0
    assert client.get("/api/v1/turns/does-not-exist").status_code == 404


def test_review_takes_a_turn_out_of_the_queue(client: TestClient) -> None:
    body, _ = turn_request(9, hallucinate=False)
    assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200
    (turn,) = _wait(client, 1)
    review = {"label": "not_hallucination", "note": "fine", "reviewer": "ana"}
    created = client.post(f"/api/v1/turns/{turn['turn_id']}/reviews", json=review)
    assert created.status_code == 201
    detail = client.get(f"/api/v1/turns/{turn['turn_id']}").json()
    assert [r["label"] for r in detail["reviews"]] == ["not_hallucination"]
    bad = client.post(f"/api/v1/turns/{turn['turn_id']}/reviews", json={"label": "maybe"})
    assert bad.status_code == 422


def test_openapi_health_and_closing_pipeline(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/traces", "/api/v1/turns", "/api/v1/review-queue"} <= set(paths)
    client.app.state.service.pipeline.shutdown()  # type: ignore[attr-defined]
    body, _ = turn_request(1, hallucinate=False)
    response = client.post("/v1/traces", headers=JSON, content=body)
    assert response.status_code == 503
    assert response.headers["Retry-After"]
    assert client.get("/readyz").status_code == 503


def test_a_query_the_store_refuses_is_a_422_not_a_500(client: TestClient) -> None:
    response = client.get(
        "/api/v1/stats/reject-rate", params={"bucket": "1m", "since": "2020-01-01T00:00:00Z"}
    )
    assert response.status_code == 422
    assert response.json()["detail"]
