"""/openapi.json holds under fuzzing: schemathesis generates requests for every query API
operation from the document itself (every GET, and the review writes) and checks each
answer against it: never a 500, only declared statuses, the declared media type and a body
that validates against the declared schema.

The app is the real one on the shared chDB engine, with a few judged turns and a review
in it, so that generated ids sometimes meet stored rows; every request carries a review
token (which also reads), so the review writes are reached. The run is derandomized:
the same examples every time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.generation.modes import GenerationMode
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from factledger.collector.access import AccessConfig
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig
from tests.integration.otlp_turns import turn_request
from tests.integration.test_openapi import Walk

INGEST = "default-ingest-token-01"
REVIEW = "every-review-token-0006"
OPS_READ = "operations-read-token-5"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES = 25
"""Examples per operation: enough to reach odd parameters, bounded for a loaded machine."""


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def fuzzed_app(chdb_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    """The service, running (its lifespan entered), with two judged turns and a label."""
    store = Store.open(StoreConfig(dsn=chdb_dsn, database="openapi_fuzz"))
    access = AccessConfig.load(
        ingest_env=f"default:{INGEST}",
        read_env=f"*:{OPS_READ}",
        review_env=f"*:{REVIEW}",
    )
    data_dir = tmp_path_factory.mktemp("openapi_fuzz") / "data"
    settings_ = ServiceSettings(
        data_dir=data_dir, grace_seconds=0.2, max_wait_seconds=5, access=access
    )
    app = create_app(settings_, store=store)
    try:
        with TestClient(app) as client:
            _seed(client)
            yield app
    finally:
        store.close()


def _seed(client: TestClient) -> None:
    for index, hallucinate in ((1, False), (2, True)):
        body, _ = turn_request(index, hallucinate=hallucinate)
        headers = {**_auth(INGEST), "Content-Type": "application/json"}
        assert client.post("/v1/traces", headers=headers, content=body).status_code == 200
    deadline = time.monotonic() + 60
    turns: list[dict[str, Any]] = []
    while len(turns) < 2:
        assert time.monotonic() < deadline, "the seeded turns were not judged in time"
        time.sleep(0.1)
        turns = client.get("/api/v1/turns", headers=_auth(REVIEW)).json()["turns"]
    label = {"turn_ids": [turns[0]["turn_id"]], "label": "hallucination"}
    answer = client.post("/api/v1/reviews", headers=_auth(REVIEW), json=label)
    assert answer.status_code == 201, answer.text


# Every GET, and the review writes; the OTLP receiver has its own tests (protobuf bodies).
REVIEW_WRITES = {
    "POST /api/v1/turns/{turn_id}/reviews",
    "POST /api/v1/reviews",
    "DELETE /api/v1/reviews/{review_id}",
}


def test_every_answer_matches_the_document(fuzzed_app: FastAPI, subtests: pytest.Subtests) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzzed_app)
    operations: list[APIOperation[Any, Any, Any, Any]] = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()
        operations.append(result.ok())
    fuzzed = [op for op in operations if op.method.upper() == "GET" or op.label in REVIEW_WRITES]
    assert {op.label for op in fuzzed} >= REVIEW_WRITES, [op.label for op in operations]
    for operation in fuzzed:
        with subtests.test(operation.label):
            _fuzz(operation)


def _fuzz(operation: APIOperation[Any, Any, Any, Any]) -> None:
    """Valid requests and invalid ones (negative mode: each should be refused as declared)."""
    modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)

    @given(case=st.one_of(*(operation.as_strategy(mode) for mode in modes)))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    def answers_as_documented(case: Case[Any]) -> None:
        case.call_and_validate(headers=_auth(REVIEW), checks=CHECKS)

    answers_as_documented()


# What the fuzzing found, each as a plain request (the answers before were the comments').

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def walk(fuzzed_app: FastAPI) -> Walk:
    return Walk(TestClient(fuzzed_app))


def test_a_body_that_is_not_utf8_is_a_declared_400(walk: Walk) -> None:
    # Was a 400 that the two label routes did not declare.
    garbled = b"\x06\xc3\x16\xff\xfe"
    turn = {"turn_id": "any"}
    walk(
        "post",
        "/api/v1/turns/{turn_id}/reviews",
        400,
        token=REVIEW,
        path=turn,
        headers=JSON,
        content=garbled,
    )
    walk("post", "/api/v1/reviews", 400, token=REVIEW, headers=JSON, content=garbled)


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"])
def test_a_time_outside_the_range_of_utc_is_a_422(walk: Walk, moment: str) -> None:
    # Was a 500: the offset moved the time past the first (or last) datetime in UTC.
    walk("get", "/api/v1/turns", 422, token=REVIEW, params={"until": moment})
    walk("get", "/api/v1/stats/reject-rate", 422, token=REVIEW, params={"since": moment})
    walk("get", "/api/v1/verifications/summary", 422, token=REVIEW, params={"until": moment})


def test_a_turn_id_with_a_lone_surrogate_is_a_404(walk: Walk) -> None:
    # Was a 500: the store could not encode the id to look it up.
    body = b'{"turn_ids": ["\\ud800"], "label": "hallucination"}'
    answer = walk("post", "/api/v1/reviews", 404, token=REVIEW, headers=JSON, content=body)
    assert answer.json() == {"detail": "no turn \ufffd"}
