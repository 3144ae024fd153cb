"""The in-loop guard on the dashboard's pages, against a real service over loopback HTTP
(real chDB) fed guarded turns through the OTel SDK's OTLP/HTTP exporter, run headless with
Streamlit's AppTest: the Overview's "Guard in the loop" table only when there is guard
data, and a nudged turn's page with what the guard did and both attempts."""

from __future__ import annotations

import time

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from streamlit.testing.v1 import AppTest

from factledger.dashboard.client import API_ENV
from factledger.dashboard.guard_story import GUARD_MEANING
from tests.integration.guarded_turns import (
    CORRECT,
    FABRICATED,
    FOOTNOTE,
    decisions,
    send_turn,
)
from tests.integration.test_dashboard_pages import PAGE_TIMEOUT, page_script, texts


def _send(url: str, guarded: bool) -> str:
    """A corrected turn (the conversation up to its second attempt on its chat span) and a
    clean one; unguarded ones when `guarded` is off. The corrected turn's trace id."""
    provider = TracerProvider(resource=Resource({"service.name": "release-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    tracer = provider.get_tracer("tests")
    replies = [FABRICATED, CORRECT]
    try:
        made = decisions(FOOTNOTE, replies) if guarded else []
        trace = send_turn(tracer, "release", "gpt-4o", made, replies=replies)
        send_turn(tracer, "release", "gpt-4o", decisions(FOOTNOTE, [CORRECT]) if guarded else [])
    finally:
        provider.shutdown()
    deadline = time.monotonic() + 30
    while httpx.get(f"{url}/api/v1/turns").json()["total"] < 2:
        assert time.monotonic() < deadline, "turns were not judged in time"
        time.sleep(0.1)
    return trace


def _overview(url: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv(API_ENV, url)
    app = AppTest.from_function(
        page_script, kwargs={"page": "overview"}, default_timeout=PAGE_TIMEOUT
    )
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_the_overview_shows_the_guard_table_per_model_and_agent(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _send(served, guarded=True)
    app = _overview(served, monkeypatch)
    assert "Guard in the loop" in texts(app.subheader)
    assert GUARD_MEANING in texts(app.caption)
    table = next(d for d in app.dataframe if "guarded turns" in d.value.columns)
    assert table.value.to_dict("records") == [
        {"model": "gpt-4o", "agent": "release", "guarded turns": 2, "nudges": 1,
         "corrected": 1, "refused": 0, "footnoted": 0}
    ]  # fmt: skip


def test_the_overview_has_no_guard_table_without_guard_data(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _send(served, guarded=False)
    app = _overview(served, monkeypatch)
    assert "Turns" in [m.label for m in app.metric]  # the page drew its figures
    assert "Guard in the loop" not in texts(app.subheader)


def test_a_corrected_turn_says_what_the_guard_did_and_shows_both_attempts(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = _send(served, guarded=True)
    turns = httpx.get(f"{served}/api/v1/turns", params={"trace_id": trace}).json()["turns"]
    monkeypatch.setenv(API_ENV, served)
    app = AppTest.from_function(page_script, kwargs={"page": "turns"}, default_timeout=30)
    app.query_params["turn_id"] = turns[0]["turn_id"]
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    markup = " ".join(str(h.proto.body) for h in app.get("html"))
    assert 'data-guard="corrected"' in markup
    assert "The guard nudged once; the model corrected itself." in markup
    shown = [c.value for c in app.code]
    assert FABRICATED in shown and CORRECT in shown
    assert any("[FACTLEDGER SELF-CORRECTION" in text for text in shown)
    assert shown.index(FABRICATED) < shown.index(CORRECT)
