"""The dashboard's pages against a real service over loopback HTTP (in-process uvicorn on
this test's chDB database), run headless with Streamlit's AppTest: an empty store, a
store without flagged turns, and a service that is down each get a message, never a
traceback. Also the read endpoints the dashboard added: text search, several verdicts,
review precision."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from streamlit.testing.v1 import AppTest

from factledger.collector.access import AccessConfig
from factledger.collector.app import create_app
from factledger.collector.export.settings import ExportSettings
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.dashboard.client import (
    API_ENV,
    TOKEN_ENV,
    ApiClient,
    ApiUnavailable,
    NotFound,
    TurnQuery,
)
from factledger.service_process import free_port
from tests.integration.otlp_turns import turn_request

JSON = {"Content-Type": "application/json"}
PAGE_TIMEOUT = 30


@pytest.fixture
def api_url(store: Store, tmp_path: Path) -> Iterator[str]:
    """The service, serving this test's database on a loopback port."""
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    yield from _serve(settings, store)


ACME_IN, GLOBEX_IN = "acme-ingest-token-0001", "globex-ingest-token-02"
ACME_READ, OPS_READ = "acme-read-token-000003", "operations-read-token-4"


@pytest.fixture
def tenant_api_url(store: Store, tmp_path: Path) -> Iterator[str]:
    """The service with two tenants and read tokens: acme's, and one for every tenant."""
    access = AccessConfig.load(
        ingest_env=f"acme:{ACME_IN},globex:{GLOBEX_IN}",
        read_env=f"acme:{ACME_READ},*:{OPS_READ}",
    )
    settings = ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, access=access
    )
    yield from _serve(settings, store)


def _serve(settings: ServiceSettings, store: Store) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, store=store), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "service did not start"
        time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(30)


def send_turns(url: str, *, clean: int = 0, hallucinated: int = 0) -> None:
    """Post turns and wait until every one is judged."""
    indexes = range(1, clean + hallucinated + 1)
    for index in indexes:
        body, _ = turn_request(index, hallucinate=index > clean, model=f"model-{index % 2}")
        assert httpx.post(f"{url}/v1/traces", headers=JSON, content=body).status_code == 200
    api = ApiClient(url)
    deadline = time.monotonic() + 30
    while api.turns(TurnQuery(verdicts=()))["total"] < len(indexes):
        assert time.monotonic() < deadline, "turns were not judged in time"
        time.sleep(0.1)


def page_script(page: str) -> None:
    import importlib

    from factledger.dashboard.ui import guarded

    module = importlib.import_module(f"factledger.dashboard.screens.{page}")
    guarded(module.render)()


def run_page(page: str, url: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv(API_ENV, url)
    app = AppTest.from_function(page_script, kwargs={"page": page}, default_timeout=PAGE_TIMEOUT)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert "This page failed" not in texts(app.error)
    return app


def texts(elements: object) -> str:
    return " ".join(str(e.value) for e in elements)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("page", "kind", "says"),
    [
        pytest.param("overview", "info", "No turns in the last 1 hour", id="overview"),
        pytest.param("turns", "info", "The store has no turns yet", id="turns"),
        pytest.param("verify", "success", "Nothing to review yet", id="verify"),
    ],
)
def test_an_empty_store_gets_a_message(page, kind, says, api_url, monkeypatch):
    app = run_page(page, api_url, monkeypatch)
    assert says in texts(getattr(app, kind))


@pytest.mark.parametrize("page", ["overview", "turns", "verify", "alerts"])
def test_a_service_that_is_down_gets_a_warning(page, monkeypatch):
    app = run_page(page, f"http://127.0.0.1:{free_port()}", monkeypatch)
    assert "The FactLedger service is not reachable" in texts(app.info)


def test_alerts_page_with_an_empty_store(api_url, monkeypatch):
    app = run_page("alerts", api_url, monkeypatch)
    said = texts(app.success) + texts(app.info)
    assert "Nothing is firing" in said or "no alerting API" in said


def test_no_flagged_turns_says_every_turn_passed(api_url, monkeypatch):
    send_turns(api_url, clean=3)
    turns = run_page("turns", api_url, monkeypatch)
    assert "No flagged or rejected turns" in texts(turns.success)
    verify = run_page("verify", api_url, monkeypatch)
    assert "Nothing to review yet" in texts(verify.success)
    assert "No labels yet" in texts(verify.info)


def test_pages_with_turns_draw_without_messages_of_absence(api_url, monkeypatch):
    send_turns(api_url, clean=2, hallucinated=2)
    turns = run_page("turns", api_url, monkeypatch)
    assert "2 turns match" in texts(turns.caption)
    monkeypatch.setenv(API_ENV, api_url)
    overview = AppTest.from_function(
        page_script, kwargs={"page": "overview"}, default_timeout=PAGE_TIMEOUT
    )
    overview.run()
    overview.segmented_control(key="overview_window").set_value("6 hours").run()
    assert not overview.exception
    assert [m.label for m in overview.metric][:3] == ["Turns", "Reject rate", "Flagged rate"]
    assert overview.metric[0].value == "4"
    assert overview.metric[1].value == "50.0%"
    queued = httpx.get(f"{api_url}/api/v1/review-queue", params={"limit": 1}).json()["total"]
    assert overview.metric[3].label == "Awaiting review"
    assert overview.metric[3].value == f"{queued:,}"  # the whole queue, not a page of it


def test_the_turn_page_shows_the_reply_marked_and_the_tool_trace(api_url, monkeypatch):
    send_turns(api_url, hallucinated=1)
    (turn,) = ApiClient(api_url).turns(TurnQuery())["turns"]
    monkeypatch.setenv(API_ENV, api_url)
    app = AppTest.from_function(page_script, kwargs={"page": "turns"}, default_timeout=30)
    app.query_params["turn_id"] = turn["turn_id"]
    app.run()
    assert not app.exception
    markup = " ".join(str(h.proto.body) for h in app.get("html"))
    # the invented ticket key sits inside the refund claim: both kinds mark it
    assert re.search(
        r'<mark class="[^"]*fl-kind-fabricated_identifier[^"]*"[^>]*>OPS-9001<', markup
    )
    # coloured by severity, the kind named: a reject kind is never amber
    assert re.search(
        r'<span class="fl-label fl-sev-reject fl-kind-fabricated_identifier">'
        r"fabricated identifier",
        markup,
    )
    assert "in no tool result" in markup
    assert "get_order (call_1)" in markup


def test_reply_search_several_verdicts_and_precision(api_url):
    send_turns(api_url, clean=2, hallucinated=2)
    api = ApiClient(api_url)
    found = api.turns(TurnQuery(verdicts=(), q="ops-9003"))
    assert [t["reply_preview"] for t in found["turns"]] == [
        "Order #W0000003 has shipped. I have refunded the shipping fee, ticket OPS-9003."
    ]
    both = api.turns(TurnQuery(verdicts=("reject", "pass")))
    assert both["total"] == 4
    assert api.turns(TurnQuery(verdicts=("flag",)))["total"] == 0

    rejected = api.turns(TurnQuery(verdicts=("reject",)))["turns"]
    api.add_review(rejected[0]["turn_id"], "hallucination", note="made up")
    api.add_review(rejected[1]["turn_id"], "hallucination")
    api.add_review(rejected[1]["turn_id"], "not_hallucination", note="changed my mind")
    precision = api.review_precision()
    assert precision["turns"] == {"reviewed": 2, "confirmed": 1, "precision": 0.5}
    assert {k["kind"]: k["precision"] for k in precision["kinds"]} == {
        "claim_without_tool": 0.5,
        "fabricated_identifier": 0.5,
    }


def test_client_errors_are_typed(api_url):
    api = ApiClient(api_url)
    with pytest.raises(NotFound):
        api.turn("no-such-turn")
    with pytest.raises(ApiUnavailable):
        ApiClient(f"http://127.0.0.1:{free_port()}").review_queue()


def test_the_dashboard_shows_only_the_tenants_its_token_reads(tenant_api_url, monkeypatch):
    for index, token in ((1, ACME_IN), (2, GLOBEX_IN), (3, GLOBEX_IN)):
        body, _ = turn_request(index, hallucinate=True)
        headers = {**JSON, "Authorization": f"Bearer {token}"}
        answer = httpx.post(f"{tenant_api_url}/v1/traces", headers=headers, content=body)
        assert answer.status_code == 200
    operator = ApiClient(tenant_api_url, token=OPS_READ)
    deadline = time.monotonic() + 30
    while operator.with_tenant("globex").turns(TurnQuery(verdicts=()))["total"] < 2:
        assert time.monotonic() < deadline, "turns were not judged in time"
        time.sleep(0.1)

    monkeypatch.setenv(TOKEN_ENV, ACME_READ)
    acme = run_page("turns", tenant_api_url, monkeypatch)
    assert "1 turns match" in texts(acme.caption)
    assert not acme.sidebar.selectbox  # one tenant: nothing to choose

    monkeypatch.setenv(TOKEN_ENV, OPS_READ)
    ops = run_page("turns", tenant_api_url, monkeypatch)
    (chooser,) = ops.sidebar.selectbox
    assert list(chooser.options) == ["acme", "globex"]
    chooser.set_value("globex").run()
    assert "2 turns match" in texts(ops.caption)

    monkeypatch.delenv(TOKEN_ENV)
    refused = run_page("turns", tenant_api_url, monkeypatch)
    assert "refused this dashboard's read token" in texts(refused.info)


def test_alerts_page_has_a_line_per_export_target(store, tmp_path, monkeypatch):
    """A configured target that has not sent yet: its line, from GET /export/status."""
    port = free_port()  # nothing listens: the target is down
    exporting = ExportSettings.from_mapping(
        {"otel": {"endpoint": f"http://127.0.0.1:{port}/v1/logs", "timeout_seconds": 1}}
    )
    settings = ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, export=exporting
    )
    for url in _serve(settings, store):
        app = run_page("alerts", url, monkeypatch)
        assert "Verdict export" in texts(app.subheader)
        assert "**otel**: 0 sent, 0 retried, 0 dropped, 0 pending" in texts(app.markdown)
