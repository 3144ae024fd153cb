"""The query API in-process on the shared chDB engine: turns, detail, reject rates, the
review queue and reviews, OpenAPI, readiness and the 503 of a pipeline that is closing;
the answers' shapes (full counts, JSON tool results, typed finding classes, tool names in
`checked_against`, span times a JavaScript number can hold) and store failures that never
show the driver's text."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import clickhouse_connect
import pytest
from fastapi.testclient import TestClient

from factledger.collector import rows
from factledger.collector.api.models import API_VERSION
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig, schema_statements
from factledger.processors.kinds import Kind, Outcome
from factledger.processors.model import Finding, ToolCall, Turn, Verdict
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


# --- shapes -----------------------------------------------------------------------------

T0 = (datetime.now(UTC) - timedelta(hours=2)).replace(microsecond=0)
JS_SAFE = 2**53
OVER_MEMORY = {"max_memory_usage": 1, "max_untracked_memory": 1}
"""Query settings under which every query of the real engine fails as out of memory (a
retryable store error): every allocation is counted against a 1-byte limit."""


def _judged_rows(
    turn_id: str, outcome: Outcome, findings: tuple[Finding, ...]
) -> tuple[list[Any], list[list[Any]]]:
    """The turn row and finding rows of one judged turn, as the pipeline writes them."""
    turn = Turn(
        reply=f"reply of {turn_id}",
        user_message="please",
        tool_calls=(ToolCall("create_ticket", "call_1", {"title": "x"}, result="done"),),
        model="gpt-4o",
        tenant="default",
        trace_id=turn_id.encode().hex()[:32].rjust(32, "0"),
        turn_id=turn_id,
        agent="support",
    )
    verdict = Verdict(outcome=outcome, findings=findings, validators=("v@1",))
    started = T0 + timedelta(seconds=len(turn_id))
    turn_row = rows.turn_row(
        turn,
        verdict,
        version=1,
        started_at=started,
        ended_at=started + timedelta(seconds=1),
        validated_at=started + timedelta(seconds=2),
        span_ids=(),
    )
    return turn_row, rows.finding_rows(turn, verdict, version=1, started_at=started)


def _store_turn(store: Store, turn_id: str, outcome: Outcome, *findings: Finding) -> None:
    """One judged turn written as the pipeline writes it."""
    turn_row, finding_rows = _judged_rows(turn_id, outcome, findings)
    store.insert_turns([turn_row])
    store.insert_findings(finding_rows)


def _flag(kind: Kind = Kind.MISSING_TOOL_ARGUMENTS, score: float | None = None) -> Finding:
    return Finding(kind, "seen", token="x", score=score)


def _large_integers(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value] if abs(value) > JS_SAFE else []
    if isinstance(value, dict):
        return [n for item in value.values() for n in _large_integers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _large_integers(item)]
    return []


def test_review_queue_total_counts_the_whole_queue(client: TestClient, store: Store) -> None:
    for index in range(3):
        _store_turn(store, f"flagged-{index}", Outcome.FLAG, _flag())
    page = client.get("/api/v1/review-queue", params={"limit": 1}).json()
    assert (len(page["turns"]), page["total"]) == (1, 3)


def test_max_score_is_null_without_a_class5_finding(client: TestClient, store: Store) -> None:
    _store_turn(store, "plain", Outcome.FLAG, _flag())
    _store_turn(store, "suspect", Outcome.FLAG, _flag(Kind.CONFABULATED_IDENTIFIER_SET, 0.75))
    queue = {t["turn_id"]: t for t in client.get("/api/v1/review-queue").json()["turns"]}
    assert (queue["plain"]["max_score"], queue["plain"]["has_class5"]) == (None, False)
    assert (queue["suspect"]["max_score"], queue["suspect"]["has_class5"]) == (0.75, True)
    detail = client.get("/api/v1/turns/plain").json()
    assert (detail["max_score"], detail["has_class5"]) == (None, False)


CHECKED_AS_SHOWN = [
    ("1", [], "no tool results"),
    ("1", ["create_ticket"], None),
    ("4b", ["create_ticket"], None),
    ("4b", [], "conversation, tool results"),
    (None, [], None),
]
"""(class, checked_against, checked_note) of the findings below, as the API shows them."""


def test_findings_name_tools_only_and_type_their_class(client: TestClient, store: Store) -> None:
    _store_turn(
        store,
        "checked",
        Outcome.REJECT,
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="T-1", checked_note="no tool results"),
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="T-2", checked_against=("create_ticket",)),
        Finding(Kind.MISSING_TOOL_ARGUMENTS, "m", checked_against=("create_ticket",)),
        Finding(Kind.UNGROUNDED_TOOL_ARGUMENT, "m", checked_note="conversation, tool results"),
        Finding(Kind.VALIDATOR_ERROR, "a validator raised"),
    )
    findings = client.get("/api/v1/turns/checked").json()["findings"]
    assert [(f["class"], f["checked_against"], f["checked_note"]) for f in findings] == (
        CHECKED_AS_SHOWN
    )


def test_findings_stored_before_checked_note_read_the_same(
    store_config: StoreConfig, tmp_path: Path
) -> None:
    # Before schema 010 there was no CheckedNote: notes were entries of CheckedAgainst, and
    # a tool's schema read `<tool> schema`. Such rows are written with the schema and the
    # columns of then, and read after the store has applied 010.
    old_shape = (
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="T-1", checked_against=("no tool results",)),
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="T-2", checked_against=("create_ticket",)),
        Finding(Kind.MISSING_TOOL_ARGUMENTS, "m", checked_against=("create_ticket schema",)),
        Finding(
            Kind.UNGROUNDED_TOOL_ARGUMENT, "m", checked_against=("conversation", "tool results")
        ),
        Finding(Kind.VALIDATOR_ERROR, "a validator raised"),
    )
    database = store_config.database
    statements = schema_statements(database, store_config.retention_days)
    turn_row, finding_rows = _judged_rows("old", Outcome.REJECT, old_shape)
    note = rows.FINDING_COLUMNS.index("CheckedNote")
    legacy = clickhouse_connect.get_client(dsn=store_config.dsn)
    try:
        legacy.command(f"CREATE DATABASE {database}")
        for statement in statements:
            if "CheckedNote" not in statement:  # the schema before 010
                legacy.command(statement)
        legacy.insert(f"{database}.turns", [turn_row], column_names=list(rows.TURN_COLUMNS))
        legacy.insert(
            f"{database}.findings",
            [row[:note] + row[note + 1 :] for row in finding_rows],
            column_names=[c for c in rows.FINDING_COLUMNS if c != "CheckedNote"],
        )
    finally:
        legacy.close()
    store = Store.open(store_config)  # applies 010
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    try:
        with TestClient(create_app(settings, store=store)) as client:
            findings = client.get("/api/v1/turns/old").json()["findings"]
    finally:
        store.close()
    assert [(f["class"], f["checked_against"], f["checked_note"]) for f in findings] == (
        CHECKED_AS_SHOWN
    )


def test_tool_results_are_json_values_and_span_times_fit_javascript(
    client: TestClient,
) -> None:
    body, _ = turn_request(21, hallucinate=False)
    assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200
    (listed,) = _wait(client, 1)
    detail = client.get(f"/api/v1/turns/{listed['turn_id']}").json()
    assert detail["tool_calls"][0]["result"] == {"order_id": "#W0000021", "status": "shipped"}
    assert detail["tool_calls"][0]["arguments"] == {"order_id": "#W0000021"}
    assert _large_integers(detail) == []
    agent = next(s for s in detail["spans"] if s["name"].startswith("invoke_agent"))
    started = datetime.fromisoformat(agent["start_time"][:26] + "+00:00")
    assert abs(started - datetime.fromisoformat(detail["started_at"])) < timedelta(seconds=1)
    assert agent["start_time"].endswith("Z") and len(agent["start_time"]) == 30
    assert agent["duration_ms"] == 9.0


@pytest.mark.parametrize("path", ["/api/v1/turns", "/api/v1/stats/reject-rate"])
@pytest.mark.parametrize("value", ["yesterday", "2025-13-01", "31/01/2025"])
def test_a_bad_since_names_the_accepted_forms(client: TestClient, path: str, value: str) -> None:
    answer = client.get(path, params={"since": value})
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["query", "since"]
    assert value in error["msg"]
    assert "ISO 8601" in error["msg"] and "2025-01-31T12:00:00Z" in error["msg"]
    assert "Unix seconds" in error["msg"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param(
            {"since": "2025-01-02T00:00:00Z", "until": "2025-01-01T00:00:00Z"},
            "until",
            id="until-before-since",
        ),
        pytest.param(
            {"bucket": "1m", "since": "2020-01-01T00:00:00Z"}, "bucket", id="too-many-buckets"
        ),
    ],
)
def test_refused_queries_answer_the_validation_shape(
    client: TestClient, params: dict[str, str], field: str
) -> None:
    answer = client.get("/api/v1/stats/reject-rate", params=params)
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["query", field] and error["msg"]


def _swap_store(client: TestClient, store: Store) -> None:
    app: Any = client.app
    app.state.service = dataclasses.replace(app.state.service, store=store)


@pytest.mark.parametrize(
    ("settings", "database", "status", "driver_text"),
    [
        pytest.param(OVER_MEMORY, None, 503, "MEMORY_LIMIT", id="unavailable"),
        pytest.param({}, "no_such_database", 500, "UNKNOWN_DATABASE", id="refused"),
    ],
)
def test_store_failures_answer_a_fixed_message(
    client: TestClient,
    store: Store,
    settings: dict[str, Any],
    database: str | None,
    status: int,
    driver_text: str,
) -> None:
    """The store's own errors on the real engine: a query over its memory limit (retry
    later) and a database that is not there (no retry helps)."""
    config = StoreConfig(dsn=store.config.dsn, database=database or store.config.database)
    failing = Store(clickhouse_connect.get_client(dsn=config.dsn, settings=settings), config)
    _swap_store(client, failing)
    try:
        answer = client.get("/api/v1/turns")
    finally:
        _swap_store(client, store)
        failing.close()
    assert answer.status_code == status
    assert set(answer.json()) == {"detail"}
    for leak in (driver_text, "Code:", "DB::Exception", config.database):
        assert leak not in answer.text
    assert ("Retry-After" in answer.headers) is (status == 503)


def test_openapi_states_the_api_version(client: TestClient) -> None:
    assert client.get("/openapi.json").json()["info"]["version"] == API_VERSION != "0.1.0"
