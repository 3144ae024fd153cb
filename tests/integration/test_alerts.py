"""Alerts end to end: real store (chDB), real ingest, real webhooks on loopback.

A spike fires exactly one notice per webhook, the cool-down holds the second, recovery
sends a resolved notice, a restart neither re-fires nor forgets, and a receiver that is
down is retried with backoff (every attempt recorded) while ingest answers as fast as
ever. The in-process tests drive the loop with chosen times (`run_once(now)`); the last
one runs `factledger serve` as a child process with the loop on its own schedule.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from factledger.alerts_cli import format_checks
from factledger.collector.alerts.loop import AlertLoop, check_rules
from factledger.collector.alerts.rules import load_alert_config, redact_url
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.service_process import ServiceProcess, free_port
from tests.integration.otlp_turns import turn_request
from tests.integration.webhook_receiver import Receiver

JSON = {"Content-Type": "application/json"}
RECOVERY = 200_000
"""Turn indexes from here start 2,000 s after the first turn (otlp_turns spaces them 10 ms
apart): outside a 15-minute window that holds the spike."""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    try:
        yield r
    finally:
        r.close()


def rules_file(tmp_path: Path, hooks: list[str], **extra: str) -> Path:
    """A rule `spikes`: reject rate per model over 15m (or `window`) above 30 %, at least
    10 turns (or `min_turns`), repeated at most every 10 minutes; notices to `hooks` (TOML
    inline tables)."""
    delivery = extra.get("delivery", "")
    window = extra.get("window", "15m")
    min_turns = extra.get("min_turns", "10")
    path = tmp_path / "alerts.toml"
    path.write_text(
        f"""
dashboard_url = "http://127.0.0.1:8501"
{delivery}
[[rules]]
name = "spikes"
group_by = "model"
window = "{window}"
threshold = 0.3
baseline_factor = false
min_turns = {min_turns}
cooldown = "10m"
webhooks = [{", ".join(hooks)}]
""",
        encoding="utf-8",
    )
    return path


def send(client: TestClient, indexes: range, *, hallucinate: bool) -> None:
    for index in indexes:
        body, _ = turn_request(index, hallucinate=hallucinate, model="gpt-4o")
        assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200


def wait_for_turns(client: TestClient, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page = client.get("/api/v1/turns", params={"limit": 1000}).json()
        if len(page["turns"]) >= count:
            turns: list[dict[str, Any]] = page["turns"]
            return turns
        time.sleep(0.1)
    raise AssertionError(f"{count} turns were not judged in time")


def first_started(turns: list[dict[str, Any]]) -> datetime:
    return min(datetime.fromisoformat(t["started_at"]) for t in turns)


@pytest.fixture
def service(store: Store, tmp_path: Path) -> Iterator[Callable[[Path], TestClient]]:
    """Start the app in-process on the test's store with a rules file; the loop's own
    schedule is an hour, so only `run_once` evaluates."""
    clients: list[TestClient] = []

    def start(rules: Path) -> TestClient:
        settings = ServiceSettings(
            data_dir=tmp_path / "data",
            grace_seconds=0.2,
            max_wait_seconds=5,
            alerts_file=rules,
            alert_interval_seconds=3600,
        )
        client = TestClient(create_app(settings, store=store))
        client.__enter__()
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.__exit__(None, None, None)


def loop_of(client: TestClient) -> AlertLoop:
    loop: AlertLoop = client.app.state.alert_loops["default"]  # type: ignore[attr-defined]
    return loop


def test_spike_fires_once_cooldown_holds_recovery_resolves(
    service: Callable[[Path], TestClient], receiver: Receiver, tmp_path: Path
) -> None:
    hooks = [
        f'{{url = "{receiver.url("/json")}", format = "json"}}',
        f'{{url = "{receiver.url("/slack")}", format = "slack"}}',
    ]
    client = service(rules_file(tmp_path, hooks))
    send(client, range(1, 13), hallucinate=True)
    send(client, range(RECOVERY, RECOVERY + 12), hallucinate=False)
    start = first_started(wait_for_turns(client, 24))
    loop = loop_of(client)

    spike = start + timedelta(minutes=1)
    (fired,) = loop.run_once(spike)
    assert (fired.kind, fired.key, fired.decision.turns, fired.decision.value) == (
        "firing",
        "gpt-4o",
        12,
        1.0,
    )
    assert loop.notifier.force_flush(10)
    assert len(receiver.bodies("/json")) == 1 and len(receiver.bodies("/slack")) == 1
    (notice,) = receiver.bodies("/json")
    assert notice["alert_id"] == fired.alert_id
    assert (notice["state"], notice["rule"], notice["key"], notice["group_by"]) == (
        "firing",
        "spikes",
        "gpt-4o",
        "model",
    )
    assert (notice["value"], notice["threshold"], notice["turns"], notice["window"]) == (
        1.0,
        0.3,
        12,
        "15m",
    )
    assert notice["dashboard_url"] == "http://127.0.0.1:8501"
    assert notice["resolved_at"] is None
    (slack,) = receiver.bodies("/slack")
    assert "FIRING spikes" in slack["text"] and slack["blocks"]

    assert loop.run_once(spike + timedelta(minutes=2)) == [], "the cool-down holds it"
    assert loop.notifier.force_flush(10)
    assert len(receiver.bodies()) == 2

    recovered = start + timedelta(seconds=2000 + 120)
    (resolved,) = loop.run_once(recovered)
    assert (resolved.kind, resolved.alert_id, resolved.decision.turns) == (
        "resolved",
        fired.alert_id,
        12,
    )
    assert loop.notifier.force_flush(10)
    assert [b["state"] for b in receiver.bodies("/json")] == ["firing", "resolved"]
    assert receiver.bodies("/json")[1]["resolved_at"] is not None
    assert "RESOLVED spikes" in receiver.bodies("/slack")[1]["text"]
    assert loop.run_once(recovered + timedelta(minutes=1)) == []

    view = client.get("/api/v1/alerts").json()
    (alert,) = view["history"]
    assert (alert["alert_id"], alert["state"], alert["notices"]) == (fired.alert_id, "resolved", 1)
    assert alert["group_by"] == "model"
    assert [e["state"] for e in alert["events"]] == ["resolved", "firing"]
    assert len(alert["deliveries"]) == 4
    assert all(
        d["ok"] and d["status_code"] == 200 and d["attempt"] == 1 for d in alert["deliveries"]
    )
    assert {d["target"] for d in alert["deliveries"]} == {
        redact_url(receiver.url("/json")),
        redact_url(receiver.url("/slack")),
    }
    (current,) = view["current"]
    assert (current["rule"], current["key"], current["state"]) == ("spikes", "gpt-4o", "ok")
    assert view["firing"] == 0
    assert client.get("/api/v1/alerts", params={"state": "firing"}).json()["history"] == []

    rules = client.get("/api/v1/alerts/rules").json()
    assert rules["source"] == "file"
    assert str(tmp_path) not in json.dumps(rules), "no server path is shown"
    assert [r["name"] for r in rules["rules"]] == ["spikes"]
    assert rules["rules"][0]["baseline_factor"] is None
    assert "/json" not in json.dumps(rules), "webhook paths are not shown"


def test_repeat_after_cooldown_and_a_restart_neither_refires_nor_forgets(
    service: Callable[[Path], TestClient], store: Store, receiver: Receiver, tmp_path: Path
) -> None:
    rules = rules_file(tmp_path, [f'{{url = "{receiver.url("/hook")}"}}'])
    client = service(rules)
    send(client, range(1, 13), hallucinate=True)
    start = first_started(wait_for_turns(client, 12))
    spike = start + timedelta(minutes=1)
    (fired,) = loop_of(client).run_once(spike)
    assert loop_of(client).notifier.force_flush(10)
    metrics = client.get("/metrics").text
    assert 'factledger_alert_firing{key="gpt-4o",rule="spikes"} 1.0' in metrics
    example = (Path(__file__).parents[2] / "docs" / "prometheus-alerts.yml").read_text()
    described = set(re.findall(r"^# HELP (\w+)", metrics, flags=re.MULTILINE))
    histograms = re.findall(r"^# TYPE (\w+) histogram", metrics, flags=re.MULTILINE)
    series = described | {f"{h}_{part}" for h in histograms for part in ("bucket", "count", "sum")}
    assert set(re.findall(r"factledger_\w+", example)) <= series, (
        "the example rules name real metrics"
    )

    # A second loop on the same store stands for the service after a restart.
    restarted = AlertLoop(store, load_alert_config(rules), interval=3600)
    restarted.start()
    try:
        (state,) = [s for s in restarted.current() if s["state"] == "firing"]
        assert state["alert_id"] == fired.alert_id
        assert restarted.run_once(spike + timedelta(minutes=3)) == [], "not fired again"
        (repeat,) = restarted.run_once(spike + timedelta(minutes=10))
        assert (repeat.kind, repeat.alert_id) == ("repeat", fired.alert_id)
        assert restarted.run_once(spike + timedelta(minutes=12)) == []
        assert restarted.notifier.force_flush(10)
    finally:
        restarted.shutdown()
    bodies = receiver.bodies()
    assert [(b["state"], b["repeat"]) for b in bodies] == [("firing", False), ("firing", True)]
    assert {b["alert_id"] for b in bodies} == {fired.alert_id}

    (alert,) = client.get("/api/v1/alerts").json()["history"]
    assert (alert["state"], alert["notices"], alert["resolved_at"]) == ("firing", 2, None)
    assert datetime.fromisoformat(alert["fired_at"]) == spike

    later = AlertLoop(store, load_alert_config(rules), interval=3600)
    later.start()
    try:
        (resolved,) = later.run_once(start + timedelta(hours=1))
        assert (resolved.kind, resolved.alert_id) == ("resolved", fired.alert_id)
    finally:
        later.shutdown()


def test_a_receiver_that_is_down_is_retried_and_never_slows_ingest(
    service: Callable[[Path], TestClient], receiver: Receiver, tmp_path: Path
) -> None:
    receiver.status = 500
    closed = f"http://127.0.0.1:{free_port()}/nobody-listens"
    backoff = 1.0
    rules = rules_file(
        tmp_path,
        [f'{{url = "{receiver.url("/failing")}"}}', f'{{url = "{closed}"}}'],
        delivery=f"[delivery]\nattempts = 3\nbackoff = {backoff}\ntimeout = 2\n",
    )
    client = service(rules)
    send(client, range(1, 13), hallucinate=True)
    start = first_started(wait_for_turns(client, 12))
    loop = loop_of(client)

    began = time.monotonic()
    (fired,) = loop.run_once(start + timedelta(minutes=1))
    evaluation = time.monotonic() - began
    # Ingest while both deliveries fail and wait for their retries (1 s, then 2 s).
    latencies = []
    for index in range(100, 110):
        body, _ = turn_request(index, hallucinate=False, model="gpt-4o")
        sent = time.monotonic()
        assert client.post("/v1/traces", headers=JSON, content=body).status_code == 200
        latencies.append(time.monotonic() - sent)
    ingest_done = time.monotonic()
    assert loop.notifier.pending > 0, "retries were still waiting while ingest ran"
    assert evaluation < backoff and max(latencies) < backoff, (evaluation, latencies)

    assert loop.notifier.force_flush(20)
    tries = receiver.times("/failing")
    assert len(tries) == 3
    assert tries[1] - tries[0] >= backoff * 0.9 and tries[2] - tries[1] >= 2 * backoff * 0.9
    assert ingest_done < tries[-1], "ingest finished while deliveries were still failing"

    (alert,) = client.get("/api/v1/alerts").json()["history"]
    assert alert["alert_id"] == fired.alert_id
    attempts = {
        target: sorted(
            (d["attempt"], d["ok"], d["status_code"])
            for d in alert["deliveries"]
            if d["target"] == target
        )
        for target in {d["target"] for d in alert["deliveries"]}
    }
    assert attempts == {
        redact_url(receiver.url("/failing")): [(1, False, 500), (2, False, 500), (3, False, 500)],
        redact_url(closed): [(1, False, 0), (2, False, 0), (3, False, 0)],
    }
    assert all(d["error"] for d in alert["deliveries"])
    metrics = client.get("/metrics").text
    assert 'factledger_alert_deliveries_total{outcome="failed"} 2' in metrics
    assert 'factledger_alert_deliveries_total{outcome="retry"} 4' in metrics


def test_check_rules_prints_what_would_fire(
    service: Callable[[Path], TestClient], store: Store, tmp_path: Path
) -> None:
    rules = rules_file(tmp_path, [])
    client = service(rules)
    send(client, range(1, 13), hallucinate=True)
    start = first_started(wait_for_turns(client, 12))
    config = load_alert_config(rules)
    moment = start + timedelta(minutes=1)
    (check,) = check_rules(store, config, now=moment)
    (decision,) = check.decisions
    assert (decision.key, decision.firing, decision.turns) == ("gpt-4o", True, 12)
    report = format_checks([check], config, moment)
    assert (
        "WOULD FIRE" in report and "gpt-4o" in report and "1 group firing or would fire" in report
    )
    assert client.get("/api/v1/alerts").json()["history"] == [], "a check records nothing"
    (quiet,) = check_rules(store, config, now=moment + timedelta(hours=2))
    assert "nothing would fire" in format_checks([quiet], config, moment)


def test_the_service_alerts_on_its_own_schedule_and_remembers_across_restarts(
    tmp_path: Path, receiver: Receiver
) -> None:
    """`factledger serve` in a child process: the loop fires by itself, the cool-down
    holds, /metrics has the reject rate, a restart does not fire again; `alerts check`
    refuses the store while the service holds it and reports the firing alert after."""
    # At least all 12 turns: the loop runs every 0.3 s while the turns are being judged,
    # and a notice sent at 10 or 11 of them would be right, but not this test's.
    rules = rules_file(
        tmp_path, [f'{{url = "{receiver.url("/hook")}"}}'], window="2h", min_turns="12"
    )
    env = {"FACTLEDGER_ALERTS": str(rules), "FACTLEDGER_ALERT_INTERVAL_SECONDS": "0.3"}
    data = tmp_path / "data"
    with ServiceProcess(data, env) as svc:
        with httpx.Client(timeout=10) as http:
            for index in range(1, 13):
                body, _ = turn_request(index, hallucinate=True, model="gpt-4o")
                assert (
                    http.post(f"{svc.url}/v1/traces", headers=JSON, content=body).status_code == 200
                )
        (notice,) = receiver.wait_for(1)
        assert (notice["state"], notice["key"], notice["turns"]) == ("firing", "gpt-4o", 12)
        time.sleep(1.5)  # five more evaluations
        assert len(receiver.bodies()) == 1, "the cool-down holds the second notice"
        metrics = httpx.get(f"{svc.url}/metrics", timeout=10).text
        assert 'factledger_reject_rate{model="gpt-4o"} 1.0' in metrics
        assert 'factledger_window_turns{model="gpt-4o"} 12.0' in metrics
        assert 'factledger_alert_firing{key="gpt-4o",rule="spikes"} 1.0' in metrics

        locked = _alerts_check(data, rules)
        assert locked.returncode == 2
        assert "in use by another process" in locked.stderr

    with ServiceProcess(data, env) as svc:
        time.sleep(1.5)
        view = httpx.get(f"{svc.url}/api/v1/alerts", timeout=10).json()
        assert view["firing"] == 1 and view["current"][0]["alert_id"] == notice["alert_id"]
        assert view["evaluated_at"] is not None
    assert len(receiver.bodies()) == 1, "the restart neither fired again nor resolved"

    report = _alerts_check(data, rules)
    assert report.returncode == 1, report.stderr
    assert (
        "FIRING" in report.stdout and "gpt-4o" in report.stdout and "firing since" in report.stdout
    )


def _alerts_check(data: Path, rules: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "factledger.cli",
            "alerts",
            "check",
            "--data-dir",
            str(data),
            "--rules",
            str(rules),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
