"""Review writes need a review token: a read token may look but not label or take labels
back; each withdrawal records who took it back and is listed for audit; bulk reads are
capped per page and logged with their tenant, rows and token."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from factledger.collector.access import AccessConfig, token_fingerprint
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from tests.integration.otlp_turns import turn_request

ACME_IN = "acme-ingest-token-0001"
ACME_READ = "acme-read-token-000003"
ACME_REVIEW = "acme-review-token-0005"
GLOBEX_REVIEW = "globex-review-token-06"
JSON = {"Content-Type": "application/json"}
LABEL = {"label": "hallucination", "note": "checked", "reviewer": "ana"}


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    access = AccessConfig.load(
        ingest_env=f"acme:{ACME_IN}",
        read_env=f"acme:{ACME_READ}",
        review_env=f"acme:{ACME_REVIEW},globex:{GLOBEX_REVIEW}",
    )
    settings = ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, access=access
    )
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _turns(client: TestClient, count: int) -> list[str]:
    """Send `count` turns for acme; their ids once all are judged."""
    for index in range(1, count + 1):
        body, _ = turn_request(index, hallucinate=True)
        sent = client.post("/v1/traces", headers={**JSON, **_auth(ACME_IN)}, content=body)
        assert sent.status_code == 200, sent.text
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        page = client.get("/api/v1/turns", headers=_auth(ACME_READ), params={"limit": 100})
        if page.json()["total"] >= count:
            return [t["turn_id"] for t in page.json()["turns"]]
        time.sleep(0.1)
    raise AssertionError("turns were not judged in time")


def _label(client: TestClient, turn_ids: list[str]) -> list[str]:
    body = {**LABEL, "turn_ids": turn_ids}
    created = client.post("/api/v1/reviews", headers=_auth(ACME_REVIEW), json=body)
    assert created.status_code == 201, created.text
    return [r["review_id"] for r in created.json()["reviews"]]


def _logged(caplog: pytest.LogCaptureFixture, *words: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and all(w in r.getMessage() for w in words)
    ]


def test_a_read_token_may_not_write_reviews(client: TestClient) -> None:
    (turn_id,) = _turns(client, 1)
    refused = [
        client.post(f"/api/v1/turns/{turn_id}/reviews", headers=_auth(ACME_READ), json=LABEL),
        client.post(
            "/api/v1/reviews", headers=_auth(ACME_READ), json={**LABEL, "turn_ids": [turn_id]}
        ),
    ]
    (review_id,) = _label(client, [turn_id])
    refused.append(client.delete(f"/api/v1/reviews/{review_id}", headers=_auth(ACME_READ)))
    for answer in refused:
        assert answer.status_code == 403, answer.text
        assert "may read but not review" in answer.json()["detail"]
        assert "FACTLEDGER_REVIEW_TOKENS" in answer.json()["detail"]
    (review,) = client.get(f"/api/v1/turns/{turn_id}", headers=_auth(ACME_READ)).json()["reviews"]
    assert review["review_id"] == review_id  # the refused undo took nothing back

    # A review token covers its own tenants only; an unknown token is still a 401.
    other = client.post(
        f"/api/v1/turns/{turn_id}/reviews",
        headers=_auth(GLOBEX_REVIEW),
        params={"tenant": "acme"},
        json=LABEL,
    )
    assert other.status_code == 403
    unknown = client.post(
        f"/api/v1/turns/{turn_id}/reviews", headers=_auth("unknown-token-00000000"), json=LABEL
    )
    assert unknown.status_code == 401
    single = client.post(f"/api/v1/turns/{turn_id}/reviews", headers=_auth(ACME_REVIEW), json=LABEL)
    assert single.status_code == 201, single.text


def test_withdrawals_are_attributed_listed_and_logged(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = _turns(client, 2)
    kept, taken = _label(client, [first, second])
    caplog.set_level(logging.INFO)
    for _ in range(2):  # twice: harmless, and recorded once
        undone = client.delete(
            f"/api/v1/reviews/{taken}", headers=_auth(ACME_REVIEW), params={"reviewer": "bo"}
        )
        assert undone.status_code == 200, undone.text

    listed = client.get("/api/v1/reviews/withdrawals", headers=_auth(ACME_READ))
    assert listed.status_code == 200, listed.text
    (withdrawal,) = listed.json()["withdrawals"]
    withdrawn_at = withdrawal.pop("withdrawn_at")
    assert withdrawal == {
        "review_id": taken,
        "turn_id": second,
        "label": "hallucination",
        "reviewer": "bo",
        "token": token_fingerprint(f"Bearer {ACME_REVIEW}"),
    }
    assert withdrawn_at and ACME_REVIEW not in listed.text and kept not in listed.text

    (logged,) = _logged(caplog, "withdrawn", taken)
    assert "tenant=acme" in logged and "reviewer='bo'" in logged
    assert token_fingerprint(f"Bearer {ACME_REVIEW}") in logged and ACME_REVIEW not in logged


def test_bulk_reads_are_capped_per_page_and_logged(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    _label(client, _turns(client, 3))
    for path in ("/api/v1/reviews", "/api/v1/turns"):
        over = client.get(path, headers=_auth(ACME_READ), params={"limit": 1001})
        assert over.status_code == 422, path

    caplog.set_level(logging.INFO)
    pages: list[list[dict[str, Any]]] = []
    following: list[str | None] = []
    for offset in (0, 2):
        answer = client.get(
            "/api/v1/reviews", headers=_auth(ACME_READ), params={"limit": 2, "offset": offset}
        )
        assert answer.status_code == 200, answer.text
        pages.append(answer.json()["cases"])
        following.append(answer.headers.get("x-next-offset"))
    assert [len(page) for page in pages] == [2, 1]
    assert following == ["2", None]  # a full page names the next; the last names none
    assert len({case["id"] for page in pages for case in page}) == 3

    reader = token_fingerprint(f"Bearer {ACME_READ}")
    exports = _logged(caplog, "bulk read", "GET /api/v1/reviews", "tenant=acme", reader)
    assert [e.split("rows=")[1].split()[0] for e in exports] == ["2", "1"]
    assert all("spans=" in e and ACME_READ not in e for e in exports)
