"""Tenants end to end on the embedded store: ingest tokens pick the tenant written into
every row, read tokens scope the query API, and no request of one tenant ever returns
another tenant's turns, counts or alerts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from factledger.collector.access import AccessConfig
from factledger.collector.alerts.loop import AlertLoop, check_rules
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.processors.errors import ConfigError
from factledger.service_process import ServiceProcess, free_port
from tests.integration.otlp_turns import turn_request
from tests.integration.webhook_receiver import Receiver

ACME_IN = "acme-ingest-token-0001"
GLOBEX_IN = "globex-ingest-token-02"
ACME_READ = "acme-read-token-000003"
GLOBEX_READ = "globex-read-token-0004"
OPS_READ = "operations-read-token-5"
ACME_REVIEW = "acme-review-token-0006"

JSON = {"Content-Type": "application/json"}


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _settings(tmp_path: Path, rules: str) -> ServiceSettings:
    """Two tenants (acme, globex) with an ingest and a read token each, an operator token
    (`*`), and the alert `rules` (TOML text); alerts evaluated only when a test asks."""
    path = tmp_path / "alerts.toml"
    path.write_text(rules, encoding="utf-8")
    access = AccessConfig.load(
        ingest_env=f"acme:{ACME_IN},globex:{GLOBEX_IN}",
        read_env=f"acme:{ACME_READ},globex:{GLOBEX_READ},*:{OPS_READ}",
        review_env=f"acme:{ACME_REVIEW}",
    )
    return ServiceSettings(
        data_dir=tmp_path / "data",
        grace_seconds=0.2,
        max_wait_seconds=5,
        access=access,
        alerts_file=path,
        alert_interval_seconds=3600,
    )


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = _settings(
        tmp_path,
        '[[rules]]\nname = "spikes"\ngroup_by = "model"\nwindow = "15m"\nthreshold = 0.3\n'
        'baseline_factor = false\nmin_turns = 3\ncooldown = "10m"\n',
    )
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _send(client: TestClient, token: str, indexes: range, *, hallucinate: bool) -> None:
    for index in indexes:
        body, _ = turn_request(index, hallucinate=hallucinate)
        answer = client.post("/v1/traces", headers={**JSON, **_auth(token)}, content=body)
        assert answer.status_code == 200, answer.text


def _turns(client: TestClient, token: str, **params: Any) -> dict[str, Any]:
    answer = client.get("/api/v1/turns", headers=_auth(token), params={"limit": 1000, **params})
    assert answer.status_code == 200, answer.text
    page: dict[str, Any] = answer.json()
    return page


def _wait(client: TestClient, token: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page = _turns(client, token)
        if len(page["turns"]) >= count:
            turns: list[dict[str, Any]] = page["turns"]
            return turns
        time.sleep(0.1)
    raise AssertionError(f"{count} turns were not judged in time")


def _loop(client: TestClient, tenant: str) -> AlertLoop:
    loop: AlertLoop = client.app.state.alert_loops[tenant]  # type: ignore[attr-defined]
    return loop


def test_ingest_needs_a_known_token(client: TestClient) -> None:
    body, _ = turn_request(1, hallucinate=False)
    for headers in ({}, _auth("unknown-token-00000000"), _auth(ACME_READ)):
        answer = client.post("/v1/traces", headers={**JSON, **headers}, content=body)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == "Bearer"


def test_no_request_of_one_tenant_returns_another_tenants_data(
    client: TestClient, store: Store
) -> None:
    # The same traces (same trace and span ids) for both tenants: they must stay apart.
    _send(client, ACME_IN, range(1, 5), hallucinate=False)
    _send(client, GLOBEX_IN, range(1, 5), hallucinate=True)
    _send(client, GLOBEX_IN, range(5, 7), hallucinate=True)
    acme = _wait(client, ACME_READ, 4)
    globex = _wait(client, GLOBEX_READ, 6)
    assert {t["verdict"] for t in acme} == {"pass"}
    assert {t["verdict"] for t in globex} == {"reject"}
    assert not {t["turn_id"] for t in acme} & {t["turn_id"] for t in globex}

    # Every row of every table carries its tenant.
    database = store.config.database
    for table in ("spans", "turns", "findings", "turn_versions"):
        counts = {
            row["Tenant"]: row["n"]
            for row in store._query(
                f"SELECT Tenant, count() AS n FROM {database}.{table} GROUP BY Tenant", {}
            )
        }
        assert set(counts) <= {"acme", "globex"}, (table, counts)
        assert "globex" in counts, table
    span_counts = {
        row["Tenant"]: row["n"]
        for row in store._query(
            f"SELECT Tenant, uniqExact(TraceId, SpanId) AS n FROM {database}.spans GROUP BY Tenant",
            {},
        )
    }
    assert span_counts == {"acme": 16, "globex": 24}

    # Turn detail of the other tenant: not found, whatever the id.
    other = globex[0]["turn_id"]
    assert client.get(f"/api/v1/turns/{other}", headers=_auth(ACME_READ)).status_code == 404
    review = {"label": "hallucination"}
    posted = client.post(f"/api/v1/turns/{other}/reviews", headers=_auth(ACME_REVIEW), json=review)
    assert posted.status_code == 404

    # Counts: reject rates, review queue and precision only see the reader's tenant.
    rates = client.get("/api/v1/stats/reject-rate", headers=_auth(ACME_READ)).json()
    assert sum(p["turns"] for s in rates["series"] for p in s["points"]) == 4
    assert sum(p["rejected"] for s in rates["series"] for p in s["points"]) == 0
    queue = client.get("/api/v1/review-queue", headers=_auth(ACME_READ)).json()
    assert queue["total"] == 0
    assert _turns(client, ACME_READ, verdict="reject")["total"] == 0

    # Asking for the other tenant is refused; asking without a token is refused.
    for path in ("/api/v1/turns", "/api/v1/stats/reject-rate", "/api/v1/alerts"):
        asked = client.get(path, headers=_auth(ACME_READ), params={"tenant": "globex"})
        assert asked.status_code == 403, path
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers=_auth(ACME_IN)).status_code == 401, path
    assert client.get("/api/v1/alerts/rules").status_code == 401

    # The operator token reads either tenant by name and lists both.
    assert _turns(client, OPS_READ, tenant="globex")["total"] == 6
    assert _turns(client, OPS_READ, tenant="acme")["total"] == 4
    listed = client.get("/api/v1/tenants", headers=_auth(OPS_READ)).json()
    assert listed["tenants"] == ["acme", "globex"]
    mine = client.get("/api/v1/tenants", headers=_auth(ACME_READ)).json()
    assert mine == {"tenants": ["acme"], "default": "acme"}


def test_alerts_and_metrics_stay_with_their_tenant(client: TestClient, store: Store) -> None:
    _send(client, ACME_IN, range(1, 5), hallucinate=False)
    _send(client, GLOBEX_IN, range(1, 5), hallucinate=True)
    _wait(client, ACME_READ, 4)
    globex_turns = _wait(client, GLOBEX_READ, 4)
    start = min(datetime.fromisoformat(t["started_at"]) for t in globex_turns)
    moment = start + timedelta(minutes=1)
    # `factledger alerts check --tenant` sees the same split.
    config = _loop(client, "acme").config
    for tenant, fires in (("acme", False), ("globex", True)):
        (check,) = check_rules(store, config, now=moment, tenant=tenant)
        assert [d.firing for d in check.decisions] == [fires], tenant
    assert _loop(client, "acme").run_once(moment) == []
    (fired,) = _loop(client, "globex").run_once(moment)
    assert fired.kind == "firing"

    acme = client.get("/api/v1/alerts", headers=_auth(ACME_READ)).json()
    assert acme["firing"] == 0 and acme["history"] == []
    globex = client.get("/api/v1/alerts", headers=_auth(GLOBEX_READ)).json()
    assert globex["firing"] == 1
    assert [a["alert_id"] for a in globex["history"]] == [fired.alert_id]

    # Service-wide figures mix tenants: only the operator token may scrape them, and
    # every per-model figure names its tenant.
    assert client.get("/metrics", headers=_auth(ACME_READ)).status_code == 403
    assert client.get("/metrics").status_code == 401
    scrape = client.get("/metrics", headers=_auth(OPS_READ))
    assert scrape.status_code == 200
    firing = [
        line for line in scrape.text.splitlines() if line.startswith("factledger_alert_firing")
    ]
    assert firing == ['factledger_alert_firing{key="gpt-4o",rule="spikes",tenant="globex"} 1.0']
    assert scrape.text.count("# TYPE factledger_alert_firing gauge") == 1


def test_each_tenant_has_its_own_rules_and_receivers_and_every_notice_names_its_tenant(
    store: Store, tmp_path: Path
) -> None:
    receiver = Receiver()
    rule = 'group_by = "model"\nthreshold = 0.3\nbaseline_factor = false\nmin_turns = 3\n'
    settings = _settings(
        tmp_path,
        f'webhooks = [{{ url = "{receiver.url("/shared")}" }}]\n'
        f'[[rules]]\nname = "spikes"\n{rule}'
        "[tenants.globex]\n"
        f'webhooks = [{{ url = "{receiver.url("/globex")}" }},'
        f' {{ url = "{receiver.url("/globex-slack")}", format = "slack" }}]\n'
        f'[[tenants.globex.rules]]\nname = "globex-spikes"\n{rule}',
    )
    try:
        with TestClient(create_app(settings, store=store)) as client:
            _send(client, ACME_IN, range(1, 5), hallucinate=True)
            _send(client, GLOBEX_IN, range(1, 5), hallucinate=True)
            _wait(client, ACME_READ, 4)
            turns = _wait(client, GLOBEX_READ, 4)
            moment = min(datetime.fromisoformat(t["started_at"]) for t in turns)
            moment += timedelta(minutes=1)
            (acme_alert,) = _loop(client, "acme").run_once(moment)
            (globex_alert,) = _loop(client, "globex").run_once(moment)
            assert (acme_alert.rule, globex_alert.rule) == ("spikes", "globex-spikes")
            receiver.wait_for(3)

            # The shared receiver hears acme (no section of its own), globex's receivers
            # hear globex only, and every body says whose turns it counted.
            (shared,) = receiver.bodies("/shared")
            assert (shared["tenant"], shared["rule"]) == ("acme", "spikes")
            (own,) = receiver.bodies("/globex")
            assert (own["tenant"], own["rule"]) == ("globex", "globex-spikes")
            (slack,) = receiver.bodies("/globex-slack")
            assert "tenant `globex`" in slack["blocks"][-1]["elements"][0]["text"]

            # Each reader sees the rules its alerts are evaluated with, and no server path.
            for token, name in ((ACME_READ, "spikes"), (GLOBEX_READ, "globex-spikes")):
                shown = client.get("/api/v1/alerts/rules", headers=_auth(token)).json()
                assert [r["name"] for r in shown["rules"]] == [name]
                assert shown["source"] == "file"
                assert str(tmp_path) not in json.dumps(shown)
            globex = client.get("/api/v1/alerts", headers=_auth(GLOBEX_READ)).json()
            assert [a["group_by"] for a in globex["history"]] == ["model"]
    finally:
        receiver.close()


def test_a_rules_section_for_a_tenant_the_service_does_not_have_stops_it(
    store: Store, tmp_path: Path
) -> None:
    settings = _settings(tmp_path, "[tenants.globx]\nwebhooks = []\n")
    with (
        pytest.raises(ConfigError, match=r"globx.*'acme', 'globex'"),
        TestClient(create_app(settings, store=store)),
    ):
        pass


def test_service_with_ingest_tokens_and_no_read_token_does_not_start(tmp_path: Path) -> None:
    """Ingest tokens alone would leave every tenant's turns open to anyone: `serve`
    stops before binding, naming both ways out."""
    env = {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(tmp_path / "data"),
        "FACTLEDGER_INGEST_TOKENS": f"acme:{ACME_IN}",
    }
    env.pop("FACTLEDGER_READ_TOKENS", None)
    env.pop("FACTLEDGER_API_OPEN", None)
    port = str(free_port())
    done = subprocess.run(
        [sys.executable, "-m", "factledger.cli", "serve", "--port", port],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "FACTLEDGER_READ_TOKENS" in done.stderr and "FACTLEDGER_API_OPEN=1" in done.stderr
    assert not (tmp_path / "data").exists()


def test_open_api_beyond_loopback_starts_with_a_warning(tmp_path: Path) -> None:
    """FACTLEDGER_API_OPEN=1 is the explicit way to run ingest tokens with an open query
    API; listening on every interface then logs a warning at start-up."""
    env = {"FACTLEDGER_INGEST_TOKENS": f"acme:{ACME_IN}", "FACTLEDGER_API_OPEN": "1"}
    with ServiceProcess(tmp_path, env, args=["--host", "0.0.0.0"]) as svc:
        assert httpx.get(f"{svc.url}/api/v1/turns").status_code == 200
        warnings = [line for line in svc.log().splitlines() if " WARNING " in line]
    assert any("query API is open" in line and "0.0.0.0" in line for line in warnings), warnings


def test_open_api_on_loopback_starts_without_a_warning(tmp_path: Path) -> None:
    with ServiceProcess(tmp_path) as svc:
        assert httpx.get(f"{svc.url}/api/v1/turns").status_code == 200
    assert "query API is open" not in svc.log()
