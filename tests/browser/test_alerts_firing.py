"""The Alerts page while an alert fires, at a device pixel ratio of 1 and of 2: the Firing
card takes the reject red (and only it), the banner is one sentence whose figures are
the evaluation's of now, named as such, and the history's are named as its last
notice's, so the two never show two counts without saying which is which.

A service of its own fires: one rule with a low threshold over few turns, evaluated
every second, on demo traffic (about a third of which is rejected).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from factledger.dashboard import palette
from factledger.demo import run_demo
from factledger.service_process import ServiceProcess
from tests.browser.conftest import _dashboard, rgb, save_picture, settled

RULES = """
[[rules]]
name = "reject-rate-per-model"
group_by = "model"
window = "15m"
threshold = 0.05
baseline_factor = false
min_turns = 5
cooldown = "1h"
"""
FIRING_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def firing(tmp_path_factory: pytest.TempPathFactory, chromium: Path) -> Iterator[ServiceProcess]:
    """A service whose rule fires for at least one model, once the demo turns are judged."""
    folder = tmp_path_factory.mktemp("firing")
    rules = folder / "alerts.toml"
    rules.write_text(RULES, encoding="utf-8")
    env = {"FACTLEDGER_ALERTS": str(rules), "FACTLEDGER_ALERT_INTERVAL_SECONDS": "1"}
    with ServiceProcess(folder / "data", env) as service:
        report = run_demo(service.url, turns=40, progress=False)
        assert report.failed == 0
        deadline = time.monotonic() + FIRING_TIMEOUT
        while not _firing(service):
            assert time.monotonic() < deadline, f"nothing fired:\n{service.log()[-3000:]}"
            time.sleep(0.5)
        yield service


def _firing(service: ServiceProcess) -> list[Mapping[str, Any]]:
    current = httpx.get(f"{service.url}/api/v1/alerts").json()["current"]
    return [c for c in current if c["state"] == "firing"]


@pytest.fixture(scope="module")
def firing_dashboard(
    firing: ServiceProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    yield from _dashboard(firing.url, tmp_path_factory.mktemp("firing-ui") / "streamlit.log")


def test_a_firing_alert_turns_the_firing_card_red_and_says_one_sentence(
    dense_page: Page, firing_dashboard: str, firing: ServiceProcess
) -> None:
    dense_page.goto(f"{firing_dashboard}/alerts")
    expect(dense_page.get_by_role("heading", name="Firing now")).to_be_visible()
    settled(dense_page)
    grids = dense_page.locator('[data-testid="stDataFrame"]')
    expect(grids).to_have_count(2)  # the rules and the history, painted once they hold cells
    for index in range(2):
        grids.nth(index).locator("td").first.wait_for(state="attached")
    dense_page.wait_for_timeout(500)
    save_picture(dense_page, "alerts-firing")

    card = dense_page.locator('.st-key-fl_firing_card [data-testid="stMetric"]')
    assert card.evaluate("e => getComputedStyle(e).backgroundColor") == rgb(
        palette.REJECT_BACKGROUND
    )
    others = dense_page.locator('[data-testid="stMetric"]')
    backgrounds = others.evaluate_all("es => es.map(e => getComputedStyle(e).backgroundColor)")
    assert backgrounds.count(rgb(palette.REJECT_BACKGROUND)) == 1, backgrounds

    banners = dense_page.locator('[data-testid="stAlert"]').filter(has_text="firing since")
    expect(banners.first).to_be_visible()
    firing_now = _firing(firing)
    assert banners.count() == len(firing_now)
    for text in banners.all_inner_texts():
        sentence = text.strip()
        # One sentence: it ends once, and no full stop closes a clause inside it.
        assert sentence.endswith(".") and not re.search(r"\.\s", sentence[:-1]), sentence
        counted = re.search(r"of (\d+) turns in the last 15m now", sentence)
        assert counted, sentence
        assert int(counted.group(1)) in {c["turns"] for c in firing_now}

    history = dense_page.locator('[data-testid="stDataFrame"] table thead th').all_inner_texts()
    headers = [h.strip() for h in history]
    assert "turns at last notice" in headers and "rate at last notice" in headers
