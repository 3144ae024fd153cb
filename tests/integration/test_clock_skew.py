"""Agents whose clocks are hours off: their turns are charted and alerted on when they were
received, with the skew recorded; late spans and recovered turns keep their own times.

Real store (chDB), the service on a loopback port (uvicorn in this process), OTLP/JSON
over HTTP, the alert rules evaluated over the store."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from factledger.collector import rows
from factledger.collector.alerts.loop import check_rules
from factledger.collector.alerts.rules import load_alert_config
from factledger.collector.otlp import decode_request
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from tests.integration.app_server import served_app
from tests.integration.otlp_turns import turn_request

JSON = {"Content-Type": "application/json"}
HOUR_NS = 3600 * 10**9


def _own_start(body: bytes) -> int:
    spans = json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return min(int(s["startTimeUnixNano"]) for s in spans)


def shifted(index: int, start_ns: int, *, hallucinate: bool) -> tuple[bytes, list[str]]:
    """Turn `index` of `turn_request` with every time moved so that it starts at
    `start_ns` (the agent's own clock)."""
    body, ids = turn_request(index, hallucinate=hallucinate)
    offset = start_ns - _own_start(body)
    document = json.loads(body)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("startTimeUnixNano", "endTimeUnixNano"):
                    span[key] = str(int(span[key]) + offset)
    return json.dumps(document).encode(), ids


def _spans_of(body: bytes) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return spans


def _with_spans(body: bytes, spans: list[dict[str, Any]]) -> bytes:
    document = json.loads(body)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
    return json.dumps(document).encode()


@pytest.fixture
def served(store: Store, tmp_path: Path) -> Iterator[str]:
    """The service on a loopback port over this test's store."""
    settings = ServiceSettings(
        data_dir=tmp_path / "data",
        grace_seconds=0.2,
        max_wait_seconds=5,
        alert_interval_seconds=3600,
    )
    with served_app(settings, store) as url:
        yield url


def wait_for(url: str, count: int, *, version: int = 1) -> dict[str, dict[str, Any]]:
    """The turns by trace id once `count` of them reached `version`."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page = httpx.get(f"{url}/api/v1/turns", params={"limit": 100}).json()
        turns = {t["trace_id"]: t for t in page["turns"] if t["version"] >= version}
        if len(turns) >= count:
            return turns
        time.sleep(0.1)
    raise AssertionError(f"{count} turns were not judged in time")


def detail(url: str, turn_id: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{url}/api/v1/turns/{turn_id}").json()
    return found


def _trace(index: int) -> str:
    return f"{index:032x}"


def test_skewed_agents_are_charted_and_alerted_on_when_received(
    served: str, store: Store, tmp_path: Path
) -> None:
    now_ns = time.time_ns()
    sent = {
        "ahead": shifted(1, now_ns + 3 * HOUR_NS, hallucinate=True),
        "behind": shifted(2, now_ns - 5 * HOUR_NS, hallucinate=True),
        "correct": shifted(3, now_ns - 2 * 10**9, hallucinate=False),
    }
    for body, _ in sent.values():
        assert httpx.post(f"{served}/v1/traces", headers=JSON, content=body).status_code == 200
    received = datetime.now(UTC)
    turns = wait_for(served, 3)

    # The dashboard's chart of the last 15 minutes holds all three, two of them rejected.
    rates = httpx.get(
        f"{served}/api/v1/stats/reject-rate",
        params={
            "bucket": "1m",
            "since": (received - timedelta(minutes=15)).isoformat(),
            "until": (received + timedelta(minutes=1)).isoformat(),
        },
    ).json()
    points = [p for series in rates["series"] for p in series["points"]]
    assert (sum(p["turns"] for p in points), sum(p["rejected"] for p in points)) == (3, 2)

    # An alert rule over the last 15 minutes sees the spike.
    rules = tmp_path / "alerts.toml"
    rules.write_text(
        '[[rules]]\nname = "spikes"\ngroup_by = "model"\nwindow = "15m"\nthreshold = 0.3\n'
        'baseline_factor = false\nmin_turns = 3\ncooldown = "10m"\nwebhooks = []\n',
        encoding="utf-8",
    )
    (check,) = check_rules(store, load_alert_config(rules), now=received)
    (decision,) = check.decisions
    assert (decision.key, decision.firing, decision.turns) == ("gpt-4o", True, 3)

    ahead = detail(served, turns[_trace(1)]["turn_id"])
    behind = detail(served, turns[_trace(2)]["turn_id"])
    correct = detail(served, turns[_trace(3)]["turn_id"])
    assert ahead["clock_skew_seconds"] == pytest.approx(3 * 3600, abs=60)
    assert behind["clock_skew_seconds"] == pytest.approx(-5 * 3600, abs=60)
    for skewed in (ahead, behind):
        started = datetime.fromisoformat(skewed["started_at"])
        assert abs(started - received) < timedelta(minutes=1)
    own = datetime.fromtimestamp(_own_start(sent["ahead"][0]) / 1e9, UTC)
    assert abs(datetime.fromisoformat(ahead["agent_started_at"]) - own) < timedelta(seconds=1)

    # A correct clock: the turn keeps its own time, and no skew is recorded.
    assert correct["clock_skew_seconds"] is None
    own = datetime.fromtimestamp(_own_start(sent["correct"][0]) / 1e9, UTC)
    assert abs(datetime.fromisoformat(correct["started_at"]) - own) < timedelta(milliseconds=2)
    assert correct["agent_started_at"] == correct["started_at"]

    metrics = httpx.get(f"{served}/metrics").text
    assert 'factledger_clock_skewed_turns_total{service="shop-agent"} 2' in metrics


def test_recovered_turns_and_late_spans_keep_their_own_times(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Spans stored three hours ago (the service was down since) are judged at their own
    time; a span of that turn arriving now is a late span, not a skewed clock."""
    old_ns = time.time_ns() - 3 * HOUR_NS
    body, _ = shifted(4, old_ns, hallucinate=True)
    spans = _spans_of(body)
    stored_then = [s for s in spans if not s["name"].startswith("chat") or s is spans[1]]
    late = [s for s in spans if s not in stored_then]
    assert len(stored_then) == 3 and len(late) == 1

    decoded = decode_request(_with_spans(body, stored_then), "application/json").spans
    ingested_ms = old_ns // 1_000_000 + 1_000
    store.insert_spans([rows.span_row(span, ingested_ms) for span in decoded])

    url = request.getfixturevalue("served")  # starts now: recovery reads the turn back
    (recovered,) = wait_for(url, 1).values()
    first = detail(url, recovered["turn_id"])
    assert first["clock_skew_seconds"] is None
    assert abs(
        datetime.fromisoformat(first["started_at"]) - datetime.fromtimestamp(old_ns / 1e9, UTC)
    ) < timedelta(milliseconds=2)

    late_body = _with_spans(body, late)
    assert httpx.post(f"{url}/v1/traces", headers=JSON, content=late_body).status_code == 200
    (again,) = wait_for(url, 1, version=2).values()
    second = detail(url, again["turn_id"])
    assert second["version"] == 2 and second["clock_skew_seconds"] is None
    assert second["started_at"] == first["started_at"]
