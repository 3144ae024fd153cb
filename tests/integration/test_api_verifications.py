"""Verification through the query API on the shared chDB engine: the answers counted per
finding kind over a window (`/verifications/summary`), and the review queue holding only
what verification could not settle: a flag it confirmed is a reject and one it refuted a
pass, by the real settlement; `verification=unverified|unsettled` chooses the turns it
asked nothing about, or where no source could settle anything, and each queue item says
what verification answered."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding
from tests.integration.verified_turns import (
    CONFIRMED,
    REFUTED,
    UNVERIFIABLE,
    Answer,
    write_verified_turn,
)

NOW = datetime.now(UTC).replace(microsecond=0)
GIT = "git:acme/site"
TRACE = "trace:list_files (call_1)"


def _set(*paths: str) -> tuple[Finding, ...]:
    """A class-5 suspicion per path (a flag): a confabulated set of test files."""
    return tuple(
        Finding(Kind.CONFABULATED_IDENTIFIER_SET, "grounded nowhere", token=p, score=0.8)
        for p in paths
    )


def _reply(*paths: str) -> str:
    return "The change is covered by " + ", ".join(paths) + "."


def _absent(path: str) -> Answer:
    return Answer(CONFIRMED, GIT, f"git ls-tree HEAD -- {path}", "(nothing)")


def _present(path: str) -> Answer:
    return Answer(REFUTED, TRACE, f"list_files result has {path}", path)


def _unsure(reason: str) -> Answer:
    return Answer(UNVERIFIABLE, GIT, "git ls-tree HEAD", "", reason=reason)


TURNS: dict[str, tuple[str, tuple[Finding, ...], dict[str, Answer]]] = {
    "confirmed-flag": (
        _reply("tests/test_cache.py"),
        _set("tests/test_cache.py"),
        {"tests/test_cache.py": _absent("tests/test_cache.py")},
    ),
    "refuted-flag": (
        _reply("tests/test_store.py"),
        _set("tests/test_store.py"),
        {"tests/test_store.py": _present("tests/test_store.py")},
    ),
    "unsettled": (
        _reply("tests/test_queue.py", "src/queue.py"),
        _set("tests/test_queue.py", "src/queue.py"),
        {"tests/test_queue.py": _unsure("timeout"), "src/queue.py": _unsure("no source")},
    ),
    "mixed": (
        _reply("tests/test_a.py", "tests/test_b.py"),
        _set("tests/test_a.py", "tests/test_b.py"),
        {"tests/test_a.py": _present("tests/test_a.py"), "tests/test_b.py": _unsure("unreachable")},
    ),
    "unverified": (_reply("tests/test_never.py"), _set("tests/test_never.py"), {}),
    "short-shas": (
        "Fixed in 3f9e2c1; 7d41b0a was reverted.",
        (),
        {"3f9e2c1": _absent("3f9e2c1"), "7d41b0a": Answer(REFUTED, GIT, "git cat-file -t 7d41b0a")},
    ),
    "claimed-absent": (
        "The function parse_config does not exist.",
        (),
        {"parse_config": Answer(CONFIRMED, "workspace", "grep -rn 'def parse_config'", "a.py:3")},
    ),
}


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    for minute, (turn_id, (reply, findings, answers)) in enumerate(TURNS.items()):
        started = NOW - timedelta(hours=1) + timedelta(minutes=minute)
        write_verified_turn(store, turn_id, reply, findings, answers, started_at=started)
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _get(client: TestClient, path: str, **params: Any) -> Any:
    answer = client.get(f"/api/v1{path}", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _tally(confirmed: int, refuted: int, unverifiable: int) -> dict[str, int]:
    return {"confirmed": confirmed, "refuted": refuted, "unverifiable": unverifiable}


def test_settled_flags_leave_the_queue_as_a_reject_and_a_pass(client: TestClient) -> None:
    verdicts = {t: _get(client, f"/turns/{t}")["verdict"] for t in TURNS}
    assert verdicts == {
        "confirmed-flag": "reject",
        "refuted-flag": "pass",
        "unsettled": "flag",
        "mixed": "flag",
        "unverified": "flag",
        "short-shas": "reject",
        "claimed-absent": "reject",
    }
    queue = _get(client, "/review-queue")
    assert sorted(t["turn_id"] for t in queue["turns"]) == ["mixed", "unsettled", "unverified"]
    assert queue["total"] == 3


@pytest.mark.parametrize(
    ("verification", "expected"),
    [
        pytest.param("any", ["mixed", "unsettled", "unverified"], id="any-is-every-flag"),
        pytest.param("unverified", ["unverified"], id="unverified-has-no-answer"),
        pytest.param("unsettled", ["unsettled"], id="unsettled-has-only-unverifiable"),
    ],
)
def test_the_queue_filter_chooses_by_what_verification_answered(
    client: TestClient, verification: str, expected: list[str]
) -> None:
    queue = _get(client, "/review-queue", verification=verification)
    assert sorted(t["turn_id"] for t in queue["turns"]) == expected
    assert queue["total"] == len(expected)
    groups = _get(client, "/review-queue/groups", verification=verification)
    assert sorted(t["turn_id"] for g in groups["groups"] for t in g["turns"]) == expected
    assert groups["facets"]["total"] == 3  # the facets describe the whole queue


def test_each_queue_item_says_what_verification_answered(client: TestClient) -> None:
    queue = {t["turn_id"]: t["verification"] for t in _get(client, "/review-queue")["turns"]}
    assert queue == {
        "unsettled": {**_tally(0, 0, 2), "reasons": ["no source", "timeout"]},
        "mixed": {**_tally(0, 1, 1), "reasons": ["unreachable"]},
        "unverified": {**_tally(0, 0, 0), "reasons": []},
    }
    (group,) = _get(client, "/review-queue/groups", verification="unsettled")["groups"]
    assert group["turns"][0]["verification"]["reasons"] == ["no source", "timeout"]


def test_an_unknown_queue_filter_is_a_422(client: TestClient) -> None:
    assert client.get("/api/v1/review-queue", params={"verification": "some"}).status_code == 422


def test_the_summary_counts_answers_per_kind_and_candidates_once_confirmed(
    client: TestClient,
) -> None:
    summary = _get(client, "/verifications/summary")
    assert summary == {
        "kinds": [
            {"kind": "confabulated_identifier_set", **_tally(1, 2, 3)},
            {"kind": "fabricated_identifier", **_tally(1, 0, 0)},
            {"kind": "negated_existing_identifier", **_tally(1, 0, 0)},
        ],
        "total": _tally(3, 2, 3),
    }


def test_the_summary_counts_the_window_only(client: TestClient) -> None:
    first = NOW - timedelta(hours=1)
    # The first two turns (minutes 0 and 1): one confirmed and one refuted flag.
    window = {"since": first.isoformat(), "until": (first + timedelta(minutes=2)).isoformat()}
    assert _get(client, "/verifications/summary", **window) == {
        "kinds": [{"kind": "confabulated_identifier_set", **_tally(1, 1, 0)}],
        "total": _tally(1, 1, 0),
    }
    before = {"since": (NOW - timedelta(days=3)).isoformat(), "until": first.isoformat()}
    assert _get(client, "/verifications/summary", **before) == {
        "kinds": [],
        "total": _tally(0, 0, 0),
    }
    backwards = {"since": NOW.isoformat(), "until": first.isoformat()}
    assert client.get("/api/v1/verifications/summary", params=backwards).status_code == 422


def test_only_the_latest_version_counts(client: TestClient, store: Store) -> None:
    # Judged again without verification (a late span): its answers no longer apply.
    reply, findings, _ = TURNS["confirmed-flag"]
    started = NOW - timedelta(hours=1)
    write_verified_turn(store, "confirmed-flag", reply, findings, {}, started_at=started, version=3)
    summary = _get(client, "/verifications/summary")
    assert summary["kinds"][0] == {"kind": "confabulated_identifier_set", **_tally(0, 2, 3)}
