"""GET /api/v1/turns as the dashboard's Turns table reads it, in-process on the shared
chDB engine with turns sent as OTLP: the service filter, the reply window around the
first flagged token, and `until` before `since` refused in the statistics' 422 shape."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.collector.store.preview import LEAD_CHARS
from tests.integration.otlp_turns import turn_request

JSON = {"Content-Type": "application/json"}
FILLER = "Here is the whole story of your order, from the warehouse to your door. " * 6


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _send(client: TestClient, body: bytes) -> None:
    assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200


def _listed(client: TestClient, count: int, **params: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        turns: list[dict[str, Any]] = client.get("/api/v1/turns", params=params).json()["turns"]
        if len(turns) >= count:
            return turns
        time.sleep(0.1)
    raise AssertionError("turns were not judged in time")


def test_turns_filter_by_service(client: TestClient) -> None:
    shop, _ = turn_request(1, hallucinate=True)
    billing, _ = turn_request(2, hallucinate=True)
    _send(client, shop)
    _send(client, billing.replace(b'"shop-agent"', b'"billing-agent"'))
    assert {t["service"] for t in _listed(client, 2)} == {"shop-agent", "billing-agent"}
    only = client.get("/api/v1/turns", params={"service": "billing-agent"}).json()
    assert only["total"] == 1
    assert [t["service"] for t in only["turns"]] == ["billing-agent"]


def test_a_long_reply_is_previewed_around_its_first_flagged_token(client: TestClient) -> None:
    reply = f"Order #W0000003 has shipped. {FILLER}I have refunded the fee, ticket OPS-9003."
    body, _ = turn_request(3, hallucinate=True, reply=reply)
    _send(client, body)
    (turn,) = _listed(client, 1)
    assert turn["verdict"] == "reject"
    assert "OPS-9003" not in turn["reply_preview"]  # the stored preview stops before it
    window = turn["flagged_preview"]
    assert window.startswith("…") and len(window) <= 200
    detail = client.get(f"/api/v1/turns/{turn['turn_id']}").json()
    first = min(f["span"][0] for f in detail["findings"] if f["span"])
    flagged = reply[first : first + 8]
    assert flagged in window and window.index(flagged) <= LEAD_CHARS + 1


def test_a_short_reply_is_its_own_preview(client: TestClient) -> None:
    body, _ = turn_request(4, hallucinate=True)
    _send(client, body)
    (turn,) = _listed(client, 1)
    assert turn["flagged_preview"] == turn["reply_preview"]


@pytest.mark.parametrize("path", ["/api/v1/turns", "/api/v1/stats/reject-rate"])
def test_until_before_since_is_a_422_on_every_list(client: TestClient, path: str) -> None:
    params = {"since": "2025-01-02T00:00:00Z", "until": "2025-01-01T00:00:00Z"}
    answer = client.get(path, params=params)
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["query", "until"]
    assert error["msg"] == "until must be after since"
