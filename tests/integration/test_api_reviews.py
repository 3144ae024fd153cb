"""The review API on the shared chDB engine: the queue in groups of near-duplicates with
filters, one label for a group, undo that puts a turn back in the queue (or back to its
previous label), and the labels exported as eval cases that `factledger eval` reads; the
`factledger reviews export` command over loopback HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from factledger.cli import main
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.evaluation import evaluate, read_cases
from factledger.processors.runner import ValidationRunner
from factledger.processors.settings import ValidationSettings
from factledger.reviews_cli import fetch_export
from factledger.service_process import free_port
from tests.integration.otlp_turns import turn_request

JSON = {"Content-Type": "application/json"}
TESTS = "tests/test_order_{}.py"
CONFABULATED = "The order is tested by " + ", ".join(
    TESTS.format(name) for name in ("refund", "cancel", "split", "merge")
)
OTHER_CONFABULATED = "Shipping is covered by " + ", ".join(
    TESTS.format(name) for name in ("ship_fast", "ship_slow", "ship_late", "ship_lost")
)


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _send(client: TestClient, replies: dict[int, tuple[str, str]]) -> dict[int, str]:
    """Turns by index with (model, reply); returns their turn ids once all are judged."""
    for index, (model, reply) in replies.items():
        body, _ = turn_request(index, hallucinate=False, model=model, reply=reply)
        assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        turns = client.get("/api/v1/turns", params={"verdict": ["flag", "pass"]}).json()
        if turns["total"] >= len(replies):
            by_trace = {t["trace_id"]: t["turn_id"] for t in turns["turns"]}
            return {index: by_trace[f"{index:032x}"] for index in replies}
        time.sleep(0.1)
    raise AssertionError("turns were not judged in time")


def _groups(client: TestClient, **params: Any) -> list[list[str]]:
    answer = client.get("/api/v1/review-queue/groups", params=params)
    assert answer.status_code == 200, answer.text
    return [[t["turn_id"] for t in g["turns"]] for g in answer.json()["groups"]]


def _label(client: TestClient, turn_ids: list[str], label: str) -> list[str]:
    body = {"turn_ids": turn_ids, "label": label, "note": "checked", "reviewer": "ana"}
    created = client.post("/api/v1/reviews", json=body)
    assert created.status_code == 201, created.text
    return [r["review_id"] for r in created.json()["reviews"]]


def test_one_label_covers_a_group_and_undo_puts_a_turn_back(client: TestClient) -> None:
    ids = _send(
        client,
        {
            1: ("gpt-4o", CONFABULATED),
            2: ("llama", CONFABULATED),
            3: ("gpt-4o", OTHER_CONFABULATED),
        },
    )
    groups = _groups(client)
    assert sorted(map(sorted, groups)) == sorted([sorted([ids[1], ids[2]]), [ids[3]]])
    pair = next(g for g in groups if len(g) == 2)

    reviews = _label(client, pair, "hallucination")
    assert len(reviews) == 2
    assert _groups(client) == [[ids[3]]]
    precision = client.get("/api/v1/stats/review-precision").json()
    assert precision["turns"] == {"reviewed": 2, "confirmed": 2, "precision": 1.0}

    undone = client.delete(f"/api/v1/reviews/{reviews[0]}", params={"reviewer": "ana"})
    assert undone.status_code == 200
    assert undone.json() == {"review_id": reviews[0], "turn_id": pair[0], "withdrawn": True}
    assert client.delete(f"/api/v1/reviews/{reviews[0]}").status_code == 200  # harmless
    assert client.delete("/api/v1/reviews/no-such-review").status_code == 404
    assert sorted(map(sorted, _groups(client))) == sorted([[pair[0]], [ids[3]]])
    assert client.get(f"/api/v1/turns/{pair[0]}").json()["reviews"] == []
    assert len(client.get(f"/api/v1/turns/{pair[1]}").json()["reviews"]) == 1
    precision = client.get("/api/v1/stats/review-precision").json()
    assert precision["turns"]["reviewed"] == 1


def test_undo_falls_back_to_the_previous_label(client: TestClient) -> None:
    ids = _send(client, {4: ("gpt-4o", CONFABULATED)})
    _label(client, [ids[4]], "hallucination")
    (second,) = _label(client, [ids[4]], "not_hallucination")
    assert client.get("/api/v1/stats/review-precision").json()["turns"]["confirmed"] == 0
    assert client.delete(f"/api/v1/reviews/{second}").status_code == 200
    assert client.get("/api/v1/stats/review-precision").json()["turns"]["confirmed"] == 1
    assert _groups(client) == []  # still labelled: not back in the queue
    (case,) = client.get("/api/v1/reviews").json()["cases"]
    assert case["review"]["label"] == "hallucination"


def test_filters_and_facets(client: TestClient) -> None:
    ids = _send(
        client,
        {5: ("gpt-4o", CONFABULATED), 6: ("llama", OTHER_CONFABULATED), 7: ("gpt-4o", "Fine.")},
    )
    assert _groups(client, model="llama") == [[ids[6]]]
    assert _groups(client, agent="support", kind="confabulated_identifier_set", model="gpt-4o") == [
        [ids[5]]
    ]
    assert _groups(client, agent="nobody") == []
    assert _groups(client, kind="stall") == []
    facets = client.get("/api/v1/review-queue/groups").json()["facets"]
    assert facets == {
        "total": 2,
        "kinds": ["confabulated_identifier_set"],
        "models": ["gpt-4o", "llama"],
        "agents": ["support"],
    }


def test_a_label_for_an_unknown_turn_stores_nothing(client: TestClient) -> None:
    ids = _send(client, {8: ("gpt-4o", CONFABULATED)})
    body = {"turn_ids": [ids[8], "no-such-turn"], "label": "hallucination"}
    refused = client.post("/api/v1/reviews", json=body)
    assert refused.status_code == 404
    assert "no-such-turn" in refused.json()["detail"]
    assert _groups(client) == [[ids[8]]]
    assert client.post("/api/v1/reviews", json={"turn_ids": [], "label": "x"}).status_code == 422


def test_exported_labels_are_eval_cases(client: TestClient, tmp_path: Path) -> None:
    ids = _send(client, {9: ("gpt-4o", CONFABULATED), 10: ("gpt-4o", OTHER_CONFABULATED)})
    _label(client, [ids[9]], "hallucination")
    _label(client, [ids[10]], "not_hallucination")
    answer = client.get("/api/v1/reviews", params={"format": "jsonl"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    path = tmp_path / "reviews.jsonl"
    path.write_text(answer.text, encoding="utf-8")
    cases = {case.id: case for case in read_cases(path)}
    assert set(cases) == {ids[9], ids[10]}
    assert cases[ids[9]].verdict == "flag"
    assert cases[ids[9]].kinds == {"confabulated_identifier_set"}
    assert cases[ids[10]].verdict == "pass"

    report = evaluate(cases.values(), ValidationRunner.from_settings(ValidationSettings()))
    results = {r.case.id: r for r in report.results}
    # The stored spans rebuild the same turn: the confirmed case holds, the false alarm is
    # the regression case it should be (the validators still flag it).
    assert results[ids[9]].ok
    assert results[ids[10]].verdict == "flag" and not results[ids[10]].ok
    only = client.get("/api/v1/reviews", params={"label": "not_hallucination"}).json()
    assert [c["id"] for c in only["cases"]] == [ids[10]]


def test_reviews_export_command_writes_what_eval_reads(
    served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in (11, 12):
        body, _ = turn_request(index, hallucinate=False, reply=CONFABULATED)
        assert httpx.post(f"{served}/v1/traces", headers=JSON, content=body).status_code == 200
    deadline = time.monotonic() + 30
    queue: list[dict[str, Any]] = []
    while len(queue) < 2 and time.monotonic() < deadline:
        queue = httpx.get(f"{served}/api/v1/review-queue").json()["turns"]
        time.sleep(0.1)
    turn_ids = sorted(t["turn_id"] for t in queue)
    label = {"turn_ids": turn_ids, "label": "hallucination"}
    assert httpx.post(f"{served}/api/v1/reviews", json=label).status_code == 201

    out = tmp_path / "labels.jsonl"
    assert main(["reviews", "export", "--api", served, "--out", str(out)]) == 0
    assert "exported 2 labelled turns" in capsys.readouterr().err
    assert sorted(case.id for case in read_cases(out)) == turn_ids
    # Page after page: one labelled turn a request still exports them all, once each.
    assert fetch_export(served, page=1) == out.read_text(encoding="utf-8")
    assert main(["eval", str(out)]) == 0
    assert "turns: 2 cases" in capsys.readouterr().out

    down = f"http://127.0.0.1:{free_port()}"
    assert main(["reviews", "export", "--api", down]) == 2
    assert "cannot reach the FactLedger API" in capsys.readouterr().err
