"""/openapi.json tells the truth: a walk over every path provokes the statuses the service
answers (success, 400, 401, 403, 404, 415, 422, 500, 503) and checks that each one is
declared for its path and that its body validates against the schema declared for it.

The service runs in-process on the shared chDB engine with ingest and read tokens; store
failures are the real engine's (a query over its memory limit, a database that is not
there), read through a store that replaces the service's for one request.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clickhouse_connect
import httpx
import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from factledger.collector import evidence_rows
from factledger.collector.access import AccessConfig
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig
from factledger.processors.evidence.snapshots import Snapshot
from tests.integration.otlp_turns import log_request, turn_request

ACME_IN = "acme-ingest-token-0001"
ACME_READ = "acme-read-token-000003"
OPS_READ = "operations-read-token-5"
ACME_REVIEW = "acme-review-token-0006"
JSON = {"Content-Type": "application/json"}
OVER_MEMORY = {"max_memory_usage": 1, "max_untracked_memory": 1}
"""Query settings under which every query of the real engine fails as out of memory (a
retryable store error): every allocation is counted against a 1-byte limit."""
METHODS = ("get", "post", "put", "patch", "delete")
# Routes that read the store: each answers 503 and 500 when the store fails.
STORE_READS = (
    "/api/v1/turns",
    "/api/v1/turns/{turn_id}",
    "/api/v1/review-queue",
    "/api/v1/stats/reject-rate",
    "/api/v1/stats/review-precision",
    "/api/v1/alerts",
    "/api/v1/snapshots/{hash}",
)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    access = AccessConfig.load(
        ingest_env=f"acme:{ACME_IN}",
        read_env=f"acme:{ACME_READ},*:{OPS_READ}",
        review_env=f"acme:{ACME_REVIEW}",
    )
    settings = ServiceSettings(
        data_dir=tmp_path / "data", grace_seconds=0.2, max_wait_seconds=5, access=access
    )
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


class Walk:
    """Sends requests and checks each answer against the document; remembers what each
    (path, method) answered."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.document: dict[str, Any] = client.get("/openapi.json").json()
        self.seen: dict[tuple[str, str], set[int]] = defaultdict(set)

    def __call__(
        self,
        method: str,
        template: str,
        expected: int,
        *,
        token: str | None = ACME_READ,
        path: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        url = template.format(**(path or {}))
        headers = {**kwargs.pop("headers", {}), **(_auth(token) if token else {})}
        answer: httpx.Response = self.client.request(method.upper(), url, headers=headers, **kwargs)
        where = f"{method.upper()} {url} -> {answer.status_code}: {answer.text[:300]}"
        assert answer.status_code == expected, where
        self.check(method, template, answer, where)
        self.seen[(template, method)].add(answer.status_code)
        return answer

    def check(self, method: str, template: str, answer: httpx.Response, where: str) -> None:
        responses = self.document["paths"][template][method]["responses"]
        declared = responses.get(str(answer.status_code))
        assert declared is not None, f"{where}: not declared (declared: {sorted(responses)})"
        media = answer.headers.get("content-type", "").split(";")[0].strip()
        content = declared.get("content", {})
        assert media in content, f"{where}: {media} not declared (declared: {sorted(content)})"
        schema = content[media].get("schema", {})
        body = answer.json() if media == "application/json" else answer.text
        # The declared schema with the document's components, so its $refs resolve.
        validator = Draft202012Validator({**schema, "components": self.document["components"]})
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
        assert not errors, f"{where}: body does not match its schema: {errors[:5]}"

    def operations(self) -> list[tuple[str, str]]:
        return [
            (template, method)
            for template, item in self.document["paths"].items()
            for method in item
            if method in METHODS
        ]


def _judged(walk: Walk, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        turns: list[dict[str, Any]] = walk("get", "/api/v1/turns", 200).json()["turns"]
        if len(turns) >= count:
            return turns
        time.sleep(0.1)
    raise AssertionError(f"{count} turns were not judged in time")


def _failing_store(store: Store, *, settings: dict[str, Any], database: str) -> Store:
    config = StoreConfig(dsn=store.config.dsn, database=database)
    return Store(clickhouse_connect.get_client(dsn=config.dsn, settings=settings), config)


def _with_store(client: TestClient, store: Store) -> None:
    app: Any = client.app
    app.state.service = dataclasses.replace(app.state.service, store=store)


def test_every_status_is_declared_with_the_body_it_has(client: TestClient, store: Store) -> None:
    walk = Walk(client)
    traces = "/v1/traces"
    for index, hallucinate in ((1, False), (2, True)):
        body, _ = turn_request(index, hallucinate=hallucinate)
        walk("post", traces, 200, token=ACME_IN, headers=JSON, content=body)
    walk("post", traces, 400, token=ACME_IN, headers=JSON, content=b"{not json")
    walk("post", traces, 415, token=ACME_IN, headers={"Content-Type": "text/plain"}, content=b"")
    logs = "/v1/logs"
    message = [("gen_ai.user.message", {"role": "user", "content": "hi"})]
    walk(
        "post",
        logs,
        200,
        token=ACME_IN,
        headers=JSON,
        content=log_request("1" * 32, "2" * 16, message),
    )
    walk("post", logs, 200, token=ACME_IN, headers=JSON, content=log_request("", "", message))
    walk("post", logs, 400, token=ACME_IN, headers=JSON, content=b"{not json")
    walk("post", logs, 415, token=ACME_IN, headers={"Content-Type": "text/plain"}, content=b"")
    turns = _judged(walk, 2)
    turn = {"turn_id": turns[0]["turn_id"]}
    unknown = {"turn_id": "no-such-turn"}

    walk("get", "/api/v1/turns", 200, params={"verdict": ["reject", "pass"], "since": "2020-01-01"})
    walk("get", "/api/v1/turns", 200, token=OPS_READ, params={"tenant": "acme"})
    walk("get", "/api/v1/turns", 403, token=ACME_READ, params={"tenant": "globex"})
    walk("get", "/api/v1/turns", 422, params={"since": "last tuesday"})
    walk("get", "/api/v1/turns", 422, params={"tenant": "not a tenant!"})
    walk("get", "/api/v1/turns", 422, params={"limit": 0})
    walk("get", "/api/v1/turns/{turn_id}", 200, path=turn)
    walk("get", "/api/v1/turns/{turn_id}", 404, path=unknown)
    review = {"label": "hallucination", "note": "checked", "reviewer": "ana"}
    labels = "/api/v1/turns/{turn_id}/reviews"
    walk("post", labels, 201, token=ACME_REVIEW, path=turn, json=review)
    walk("post", labels, 403, path=turn, json=review)  # a read token may not label
    walk("post", labels, 404, token=ACME_REVIEW, path=unknown, json=review)
    walk("post", labels, 422, token=ACME_REVIEW, path=turn, json={"label": "maybe"})
    walk("get", "/api/v1/reviews/withdrawals", 200)
    walk("get", "/api/v1/reviews", 422, params={"limit": 1001})
    now_ns = time.time_ns()  # a row older than the retention is dropped as it arrives
    page = Snapshot("a" * 64, "https://example.org/", "fetch_url", "c", "t", "r", now_ns, 4, "page")
    store.insert_snapshots([evidence_rows.snapshot_row("acme", page)])
    snapshot = "/api/v1/snapshots/{hash}"
    walk("get", snapshot, 200, path={"hash": page.hash})
    walk("get", snapshot, 404, path={"hash": "0" * 64})
    walk("get", snapshot, 403, path={"hash": page.hash}, params={"tenant": "globex"})
    walk("get", snapshot, 422, path={"hash": "not-a-hash"})
    rate = "/api/v1/stats/reject-rate"
    walk("get", rate, 200, params={"group_by": "kind", "bucket": "1m"})
    walk("get", rate, 422, params={"since": "2025-01-02", "until": "2025-01-01"})
    walk("get", rate, 422, params={"bucket": "1m", "since": "2020-01-01T00:00:00Z"})
    walk("get", "/api/v1/review-queue", 200)
    walk("get", "/api/v1/review-queue", 422, params={"limit": 0})
    walk("get", "/api/v1/stats/review-precision", 200)
    walk("get", "/api/v1/tenants", 200)
    walk("get", "/api/v1/tenants", 200, token=OPS_READ)
    walk("get", "/api/v1/alerts", 200)
    walk("get", "/api/v1/alerts", 422, params={"state": "sleeping"})
    walk("get", "/api/v1/alerts/rules", 200)
    walk("get", "/api/v1/alerts/rules", 403, token=ACME_READ, params={"tenant": "globex"})
    walk("get", "/metrics", 200, token=OPS_READ)
    walk("get", "/metrics", 403)
    walk("get", "/healthz", 200, token=None)
    walk("get", "/readyz", 200, token=None)

    # Every operation, without a token: 401 wherever a token is needed.
    for template, method in walk.operations():
        path = {name: "x" for name in ("turn_id", "review_id") if f"{{{name}}}" in template}
        path |= {"hash": page.hash} if "{hash}" in template else {}
        open_route = template in ("/healthz", "/readyz")
        walk(method, template, 200 if open_route else 401, token=None, path=path, json={})

    failures = {
        503: _failing_store(store, settings=OVER_MEMORY, database=store.config.database),
        500: _failing_store(store, settings={}, database="no_such_database"),
    }
    try:
        for status, failing in failures.items():
            _with_store(client, failing)
            for template in STORE_READS:
                answer = walk("get", template, status, path={**turn, "hash": page.hash})
                assert json.loads(answer.text) == {"detail": answer.json()["detail"]}
                assert "Code:" not in answer.text and "Exception" not in answer.text
    finally:
        _with_store(client, store)
        for failing in failures.values():
            failing.close()

    service: Any = client.app.state.service  # type: ignore[attr-defined]
    service.pipeline.shutdown()
    body, _ = turn_request(3, hallucinate=False)
    walk("post", traces, 503, token=ACME_IN, headers=JSON, content=body)
    walk(
        "post",
        logs,
        503,
        token=ACME_IN,
        headers=JSON,
        content=log_request("1" * 32, "2" * 16, message),
    )
    walk("get", "/readyz", 503, token=None)

    assert sorted(op for op in walk.operations() if op not in walk.seen) == []


def test_errors_share_two_documented_shapes(client: TestClient) -> None:
    """Every query API operation declares 401 (read tokens), and 404 where it names a turn;
    every error status is an ErrorBody, except 422, which is FastAPI's validation error
    wherever it comes from."""
    document = client.get("/openapi.json").json()
    for template, item in document["paths"].items():
        if not template.startswith("/api/v1/"):
            continue
        for method, operation in item.items():
            assert "401" in operation["responses"], (method, template)
            if template.startswith("/api/v1/turns/{turn_id}"):
                assert "404" in operation["responses"], (method, template)
            for status, declared in operation["responses"].items():
                if status.startswith("2"):
                    continue
                schema = declared["content"]["application/json"]["schema"]
                expected = "HTTPValidationError" if status == "422" else "ErrorBody"
                assert schema == {"$ref": f"#/components/schemas/{expected}"}, (
                    method,
                    template,
                    status,
                )
