"""The dashboard in a real browser against a real service with demo traffic: every page
draws, a finding is highlighted beside the tool trace, a label clicked on the Verify page
reaches the store, and a service that is down gets a message. Each test saves a
screenshot of its page."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from factledger.replay import replay
from factledger.service_process import ServiceProcess
from tests.browser.conftest import DEMO_TURNS, settled

NO_TRACEBACK = '[data-testid="stException"]'


def api(service: ServiceProcess, path: str, **params: Any) -> Any:
    response = httpx.get(f"{service.url}/api/v1{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stMain"]')


def test_overview_draws_rates_volume_and_breakdowns(page, dashboard, seeded, screenshot):
    open_page(page, dashboard)
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    charts = page.locator('[data-testid="stVegaLiteChart"].vega-embed svg')
    expect(charts.nth(4)).to_be_visible()  # rates, flagged, volume, kinds, agents
    values = page.locator('[data-testid="stMetricValue"]')
    expect(values.first).to_have_text(str(DEMO_TURNS))
    for title in ("Reject rate per model", "Flagged rate per model", "Turn volume per model"):
        expect(page.get_by_role("heading", name=title)).to_be_visible()
    expect(page.get_by_role("heading", name="Findings by kind")).to_be_visible()
    settled(page)
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("overview")


def test_turns_table_lists_flagged_and_rejected_turns(page, dashboard, seeded, screenshot):
    expected = api(seeded, "/turns", verdict=["reject", "flag"], limit=1)["total"]
    open_page(page, f"{dashboard}/turns")
    expect(page.get_by_text(f"{expected:,} turns match")).to_be_visible()
    grid = page.locator('[data-testid="stDataFrame"]')
    expect(grid).to_be_visible()
    settled(page)
    screenshot("turns")

    token = api(seeded, "/turns", kind="fabricated_identifier", limit=1)["turns"][0]
    search = token["reply_preview"].split()[2]  # a word of that reply
    matching = api(seeded, "/turns", verdict=["reject", "flag"], q=search, limit=1)["total"]
    box = page.get_by_label("Search in replies")
    box.fill(search)
    box.press("Enter")
    expect(page.get_by_text(f"{matching:,} turns match")).to_be_visible()
    assert page.locator(NO_TRACEBACK).count() == 0


def test_turn_page_marks_the_invented_identifier_beside_the_tool_results(
    page, dashboard, seeded, screenshot
):
    summary = api(seeded, "/turns", kind="fabricated_identifier", limit=1)["turns"][0]
    turn = api(seeded, f"/turns/{summary['turn_id']}")
    finding = next(f for f in turn["findings"] if f["kind"] == "fabricated_identifier")
    open_page(page, f"{dashboard}/turns?turn_id={turn['turn_id']}")

    mark = page.locator("mark.fl-kind-fabricated_identifier").first
    expect(mark).to_have_text(finding["token"])
    expect(page.locator(".fl-label.fl-kind-fabricated_identifier").first).to_have_text(
        "fabricated identifier"
    )
    expect(page.get_by_text("in no tool result").first).to_be_visible()
    expect(page.get_by_role("heading", name="Tool calls")).to_be_visible()
    results = page.locator("pre.fl-result")
    expect(results.first).to_be_visible()
    assert finding["token"] not in " ".join(results.all_inner_texts())
    expect(page.get_by_role("heading", name="Span waterfall")).to_be_visible()
    expect(page.locator('[data-testid="stVegaLiteChart"].vega-embed svg').first).to_be_visible()
    expect(page.get_by_role("heading", name="Verdict history")).to_be_visible()
    settled(page)
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("turn")


# A class-5 suspicion no source of this service can settle: names of a module no tool
# listed or read (the demo's own listings settle its other class-5 turns as rejects).
UNSETTLED_CLASS5 = {
    "id": "unread-module-helpers",
    "transcript": {
        "model": "gpt-4o",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ],
        "messages": [
            {"role": "user", "content": "What does the app's registry module provide?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "# acme-app\n\nA service."},
            {
                "role": "assistant",
                "content": "The registry module provides `build_registry(cfg)`, "
                "`register_github_tools(registry)` and `load_plugin_manifest(path)`; each "
                "is covered by the existing tests.",
            },
        ],
    },
    "expected": {"verdict": "flag", "kinds": ["confabulated_identifier_set"], "allow": []},
}


def _class5_first(service: ServiceProcess, tmp_path: Path) -> dict[str, Any]:
    """The first item of the queue once the unsettled class-5 turn is in it."""
    cases = tmp_path / "class5.jsonl"
    cases.write_text(json.dumps(UNSETTLED_CLASS5) + "\n")
    assert replay(cases, service.url, progress=False).failed == 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        queue: list[dict[str, Any]] = api(service, "/review-queue")["turns"]
        if queue and queue[0]["has_class5"]:
            return queue[0]
        time.sleep(0.3)
    raise AssertionError(f"no class-5 suspicion first in the queue: {queue[:3]}")


def test_labelling_a_queue_item_stores_the_review_and_takes_it_out(
    page, dashboard, seeded, screenshot, tmp_path
):
    first = _class5_first(seeded, tmp_path)  # class-5 suspicions come first
    open_page(page, f"{dashboard}/verify")
    item = page.locator(f".st-key-queue_{first['turn_id']}")
    expect(item.locator("mark").first).to_be_visible()
    expect(item.get_by_text("Suspicious identifiers")).to_be_visible()
    expect(item.get_by_text("Checked against these tool results")).to_be_visible()
    screenshot("verify")

    page.get_by_label("Your name (stored with your labels)").fill("browser-test")
    note = item.get_by_label("Note (optional)")
    note.fill("the named functions do not exist")  # no Enter: the click commits it
    item.get_by_role("button", name="Hallucination", exact=True).click()

    expect(page.locator(f".st-key-queue_{first['turn_id']}")).to_have_count(0)
    reviews: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while not reviews and time.monotonic() < deadline:
        reviews = api(seeded, f"/turns/{first['turn_id']}")["reviews"]
        time.sleep(0.2)
    assert [(r["label"], r["note"], r["reviewer"]) for r in reviews] == [
        ("hallucination", "the named functions do not exist", "browser-test")
    ]
    assert first["turn_id"] not in {t["turn_id"] for t in api(seeded, "/review-queue")["turns"]}
    expect(page.get_by_role("heading", name="Precision per finding kind")).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]')).to_be_visible()
    settled(page)
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("verify-labelled")


def test_alerts_page_shows_rules_or_says_alerting_is_missing(page, dashboard, seeded, screenshot):
    open_page(page, f"{dashboard}/alerts")
    expect(page.get_by_role("heading", name="Alerts")).to_be_visible()
    has_alerts = httpx.get(f"{seeded.url}/api/v1/alerts").status_code != 404
    if has_alerts:
        expect(page.get_by_role("heading", name="Firing now")).to_be_visible()
        expect(page.get_by_role("heading", name="History")).to_be_visible()
        rules = httpx.get(f"{seeded.url}/api/v1/alerts/rules").json()["rules"]
        for rule in rules:
            cell = page.locator('[data-testid="stDataFrame"] td', has_text=rule["name"])
            expect(cell.first).to_be_attached()
    else:
        expect(page.get_by_text("This service has no alerting API")).to_be_visible()
    settled(page)
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("alerts")


@pytest.mark.parametrize("path", ["", "/turns", "/verify", "/alerts"])
def test_a_service_that_is_down_gets_a_message_not_a_traceback(
    page, orphan_dashboard, screenshot, path
):
    open_page(page, orphan_dashboard + path)
    expect(page.get_by_text("The FactLedger service is not reachable")).to_be_visible()
    settled(page)
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot(f"service-down{path.replace('/', '-')}")


def test_selecting_a_row_opens_the_turn(page, dashboard, seeded):
    newest = api(seeded, "/turns", verdict=["reject", "flag"], limit=1)["turns"][0]
    open_page(page, f"{dashboard}/turns")
    grid = page.locator('[data-testid="stDataFrame"]')
    expect(grid).to_be_visible()
    settled(page)
    box = grid.bounding_box()
    assert box is not None
    # the grid is a canvas: click the first row's selection cell, under the 35 px header
    page.mouse.click(box["x"] + 16, box["y"] + 35 + 17)
    expect(page.get_by_role("heading", name=f"Turn {newest['turn_id'][:12]}")).to_be_visible()
    assert f"turn_id={newest['turn_id']}" in page.url
    page.get_by_role("button", name="← All turns").click()
    expect(page.get_by_role("heading", name="Turns", exact=True)).to_be_visible()
