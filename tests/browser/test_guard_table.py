"""The Overview's "Guard in the loop" table in a real browser: a service of its own fed
guarded turns through the OTel SDK's OTLP/HTTP exporter (the guard's decisions recorded
by the adapters' recorder), the dashboard reading it, Debian's Chromium showing the
table per model and agent with the sentence that says what it means."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from playwright.sync_api import Page, expect

from factledger.service_process import ServiceProcess
from tests.browser.conftest import JUDGED_TIMEOUT, _dashboard, settled
from tests.integration.guarded_turns import (
    CORRECT,
    FABRICATED,
    FOOTNOTE,
    decisions,
    send_turn,
)

GUARD_GRID = '[data-testid="stDataFrame"]:has(th:text-is("guarded turns"))'


@pytest.fixture(scope="module")
def guarded_service(
    tmp_path_factory: pytest.TempPathFactory, chromium: Path
) -> Iterator[ServiceProcess]:
    """A service of its own with three guarded turns of one agent on one model: one
    corrected after a nudge, one refused after two, one passed."""
    with ServiceProcess(tmp_path_factory.mktemp("guard-service")) as running:
        provider = TracerProvider(resource=Resource({"service.name": "release-bot"}))
        exporter = OTLPSpanExporter(f"{running.url}/v1/traces")
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("tests")
        try:
            for replies in ([FABRICATED, CORRECT], [FABRICATED] * 3, [CORRECT]):
                made = decisions(FOOTNOTE, replies)
                send_turn(tracer, "release", "gpt-4o", made, replies=replies)
        finally:
            provider.shutdown()
        deadline = time.monotonic() + JUDGED_TIMEOUT
        url = f"{running.url}/api/v1/stats/guard"
        while httpx.get(url, timeout=30).json()["total"]["turns"] < 3:
            assert time.monotonic() < deadline, "the guarded turns were not judged in time"
            time.sleep(0.3)
        yield running


@pytest.fixture(scope="module")
def guard_dashboard(
    guarded_service: ServiceProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    log = tmp_path_factory.mktemp("guard-dashboard") / "streamlit.log"
    yield from _dashboard(guarded_service.url, log)


def test_the_overview_shows_what_the_guard_did_per_model_and_agent(
    page: Page, guard_dashboard: str, screenshot: object
) -> None:
    page.goto(guard_dashboard)
    page.wait_for_selector('[data-testid="stMain"]')
    expect(page.get_by_role("heading", name="Guard in the loop")).to_be_visible()
    settled(page)
    expect(page.get_by_text("Each nudge is a hallucination the guard caught")).to_be_visible()
    grid = page.locator(GUARD_GRID)
    expect(grid.locator("td").first).to_be_attached()
    headers = [h.strip() for h in grid.locator("table thead th").all_inner_texts()]
    rows = grid.locator("table tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.querySelectorAll('td'), c => c.innerText.trim()))"
    )
    assert len(rows) == 1
    # The accessible table has the row selector's column first.
    shown = dict(zip(headers[-len(rows[0]) :], rows[0], strict=True))
    assert {k: shown[k] for k in ("model", "agent", "guarded turns", "nudges")} == {
        "model": "gpt-4o", "agent": "release", "guarded turns": "3", "nudges": "3"
    }  # fmt: skip
    assert (shown["corrected"], shown["refused"], shown["footnoted"]) == ("1", "1", "0")
    screenshot("guard-in-the-loop")  # type: ignore[operator]
