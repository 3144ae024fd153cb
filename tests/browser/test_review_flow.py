"""The review loop in a real browser, by keyboard: one queue item at a time with its label
buttons on screen, H / N / S / U to label, skip and undo (no clicks), one label for a
group of near-duplicates, filters by kind, model and agent, labelling from a turn's own
page, a question that fits the kind, and the labels exported and read by `factledger
eval`. Every label is checked through the API (the latest review that counts)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from factledger.service_process import ServiceProcess
from tests.browser.conftest import VIEWPORT, settled

NO_TRACEBACK = '[data-testid="stException"]'
ITEM = '[class*="st-key-queue_"]'
BUTTONS = ("hallucination", "not_hallucination", "skip", "undo")
CLI = (sys.executable, "-m", "factledger.cli")


def api(service: ServiceProcess, path: str, **params: Any) -> Any:
    response = httpx.get(f"{service.url}/api/v1{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def groups(service: ServiceProcess, **filters: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api(service, "/review-queue/groups", **filters)["groups"]
    return found


def labels(service: ServiceProcess, turn_ids: list[str]) -> list[str | None]:
    """Each turn's label that counts (its latest review not withdrawn), None without."""
    latest = []
    for turn_id in turn_ids:
        reviews = api(service, f"/turns/{turn_id}")["reviews"]
        latest.append(reviews[-1]["label"] if reviews else None)
    return latest


def eventually(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def marker(page: Page) -> str | None:
    value: str | None = page.evaluate(
        "() => document.querySelector('[data-fl-item]')?.getAttribute('data-fl-item') ?? null"
    )
    return value


def open_labelling(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("[data-fl-item]", state="attached")
    # The key bindings are in place once their script has run, not when its element is.
    page.wait_for_function("() => window.__factledgerLabelKeys === true")
    settled(page)


def press(page: Page, key: str) -> None:
    """Press `key` on the page (no element focused) and wait until the page has acted on
    it: the item marker changes whenever a label, undo or skip happened."""
    before = marker(page)
    page.keyboard.press(key)
    page.wait_for_function(
        "(m) => document.querySelector('[data-fl-item]')?.getAttribute('data-fl-item') !== m",
        arg=before,
    )
    settled(page)


def shown_item(page: Page) -> str:
    """The turn id of the queue item on screen (its container's key)."""
    expect(page.locator(ITEM)).to_have_count(1)
    classes = page.locator(ITEM).get_attribute("class") or ""
    key = next(c for c in classes.split() if c.startswith("st-key-queue_"))
    return key.removeprefix("st-key-queue_")


def group_of(service: ServiceProcess, turn_id: str, **filters: str) -> list[str]:
    for group in groups(service, **filters):
        ids = [t["turn_id"] for t in group["turns"]]
        if turn_id in ids:
            return ids
    raise AssertionError(f"{turn_id} is in no group of the queue")


def test_one_item_at_a_time_by_keyboard_label_undo_and_skip(
    page: Page, dashboard: str, seeded: ServiceProcess, screenshot: Callable[[str], Path]
) -> None:
    assert len(groups(seeded)) >= 2, "the demo traffic left too little to verify"
    open_labelling(page, f"{dashboard}/verify")
    first = shown_item(page)
    covered = group_of(seeded, first)

    # The buttons are on screen without scrolling, above the evidence.
    for name in BUTTONS:
        box = page.locator(f".st-key-fl_{name} button").first.bounding_box()
        assert box is not None, name
        assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], (name, box)
    scrolled = page.evaluate(
        "() => window.scrollY + (document.querySelector('[data-testid=\"stMain\"]')"
        "?.scrollTop ?? 0)"
    )
    assert scrolled == 0
    screenshot("review-queue")

    press(page, "h")
    assert labels(seeded, covered) == ["hallucination"] * len(covered)
    second = shown_item(page)
    assert second not in covered
    assert first not in {t["turn_id"] for g in groups(seeded) for t in g["turns"]}

    press(page, "u")  # the label is taken back: the item returns, first again
    assert labels(seeded, covered) == [None] * len(covered)
    assert shown_item(page) == first
    assert first in group_of(seeded, first)

    press(page, "s")  # skipped: no label, the next item shows
    assert labels(seeded, covered) == [None] * len(covered)
    skipped_to = shown_item(page)
    assert skipped_to not in covered
    next_group = group_of(seeded, skipped_to)

    press(page, "n")
    assert labels(seeded, next_group) == ["not_hallucination"] * len(next_group)
    press(page, "u")
    assert labels(seeded, next_group) == [None] * len(next_group)
    assert shown_item(page) == skipped_to  # the undone item comes back on screen
    assert page.locator(NO_TRACEBACK).count() == 0


def test_keys_typed_into_the_note_do_not_label_and_the_note_is_stored(
    page: Page, dashboard: str, seeded: ServiceProcess
) -> None:
    open_labelling(page, f"{dashboard}/verify")
    turn_id = shown_item(page)
    covered = group_of(seeded, turn_id)
    note = page.locator(ITEM).get_by_label("Note (optional)")
    note.focus()  # a reviewer tabs into it; no click
    page.keyboard.type("no test named so in the listing")
    assert labels(seeded, covered) == [None] * len(covered)  # "n", "s", "h" were typed
    page.keyboard.press("Escape")  # leave the field, then label
    settled(page)
    press(page, "h")
    reviews = api(seeded, f"/turns/{turn_id}")["reviews"]
    assert [(r["label"], r["note"]) for r in reviews] == [
        ("hallucination", "no test named so in the listing")
    ]
    press(page, "u")
    assert labels(seeded, covered) == [None] * len(covered)


def test_one_label_covers_a_group_of_near_duplicates(
    page: Page, dashboard: str, seeded: ServiceProcess, screenshot: Callable[[str], Path]
) -> None:
    group = max(groups(seeded), key=lambda g: g["size"])
    assert group["size"] > 1, "the demo traffic has repeated suspicions"
    turn_ids = [t["turn_id"] for t in group["turns"]]
    assert len({t["model"] for t in group["turns"]}) >= 1
    kind, agent = group["kinds"][0], group["agent"]
    open_labelling(page, f"{dashboard}/verify?kind={kind}&agent={agent}")
    item = page.locator(ITEM)
    expect(
        item.get_by_text(f"one label covers {len(turn_ids)} near-duplicate turns")
    ).to_be_visible()
    assert shown_item(page) in turn_ids
    item.get_by_text(f"The {len(turn_ids)} turns this label covers").click()
    for turn_id in turn_ids:
        expect(item.get_by_text(turn_id[:12], exact=True)).to_be_visible()
    screenshot("review-group")

    press(page, "n")
    assert labels(seeded, turn_ids) == ["not_hallucination"] * len(turn_ids)
    assert not set(turn_ids) & {t["turn_id"] for g in groups(seeded) for t in g["turns"]}
    press(page, "u")
    assert labels(seeded, turn_ids) == [None] * len(turn_ids)


def test_filters_by_kind_model_and_agent(
    page: Page, dashboard: str, seeded: ServiceProcess
) -> None:
    facets = api(seeded, "/review-queue/groups")["facets"]
    assert len(facets["kinds"]) >= 2 and facets["models"] and facets["agents"]
    open_labelling(page, f"{dashboard}/verify")
    for name, label in (("kind", "Finding kind"), ("agent", "Agent"), ("model", "Model")):
        option = facets[f"{name}s"][-1]
        page.get_by_role("combobox", name=label).click()
        page.get_by_role("option", name=option, exact=True).click()
        # The choice reaches the URL from the rerun it starts; only then does "not running"
        # mean that rerun is over (before it, the page may still show the last run's state).
        page.wait_for_function("(p) => location.search.includes(p)", arg=f"{name}={option}")
        settled(page)
    chosen = {name: facets[f"{name}s"][-1] for name in ("kind", "agent", "model")}
    wanted = groups(seeded, **chosen)
    if not wanted:
        expect(page.get_by_text("No queue item matches these filters")).to_be_visible()
        return
    turns = sum(g["size"] for g in wanted)
    expect(page.get_by_text(f"{turns} flagged turns await a label")).to_be_visible()
    shown = shown_item(page)
    summary = next(t for g in wanted for t in g["turns"] if t["turn_id"] == shown)
    assert chosen["kind"] in summary["kinds"]
    assert (summary["agent"], summary["model"]) == (chosen["agent"], chosen["model"])

    # A link with a filter opens the page filtered.
    only = facets["kinds"][0]
    open_labelling(page, f"{dashboard}/verify?kind={only}")
    shown = shown_item(page)
    assert only in next(
        t["kinds"] for g in groups(seeded, kind=only) for t in g["turns"] if t["turn_id"] == shown
    )


def test_the_question_fits_the_kind(page: Page, dashboard: str, seeded: ServiceProcess) -> None:
    asks = {
        "ungrounded_tool_argument": "Judge the call, not the reply (it may be honest): "
        "was the argument",
        "confabulated_identifier_set": "The reply presents them as existing",
        "missing_tool_arguments": "Judge the call, not the reply (it may be honest): was",
    }
    queued = {kind for g in groups(seeded) for kind in g["kinds"]}
    checked = 0
    for kind, ask in asks.items():
        if kind not in queued:
            continue
        open_labelling(page, f"{dashboard}/verify?kind={kind}")
        expect(page.locator(".fl-question").first).to_contain_text(ask)
        checked += 1
    assert checked >= 2, f"the queue holds too few kinds: {queued}"

    # An identifier flag on a turn's own page asks whether the identifier is backed.
    summary = api(seeded, "/turns", kind="fabricated_identifier", limit=1)["turns"][0]
    turn = api(seeded, f"/turns/{summary['turn_id']}")
    token = next(f["token"] for f in turn["findings"] if f["kind"] == "fabricated_identifier")
    open_labelling(page, f"{dashboard}/turns?turn_id={summary['turn_id']}")
    expect(page.locator(".fl-question").first).to_contain_text(
        f"Is {token} backed by a tool result or by the conversation?"
    )


def test_label_and_undo_from_the_turn_page(
    page: Page, dashboard: str, seeded: ServiceProcess, screenshot: Callable[[str], Path]
) -> None:
    summary = api(seeded, "/turns", verdict=["reject"], limit=1)["turns"][0]
    turn_id = summary["turn_id"]
    assert labels(seeded, [turn_id]) == [None]
    open_labelling(page, f"{dashboard}/turns?turn_id={turn_id}")
    for name in ("hallucination", "not_hallucination", "undo"):
        box = page.locator(f".st-key-fl_{name} button").first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"], name
    press(page, "h")
    assert labels(seeded, [turn_id]) == ["hallucination"]
    expect(page.get_by_text("Labelled hallucination").first).to_be_visible()
    press(page, "n")  # a new label replaces it
    assert labels(seeded, [turn_id]) == ["not_hallucination"]
    screenshot("review-turn-page")
    press(page, "u")  # back to the label before
    assert labels(seeded, [turn_id]) == ["hallucination"]
    press(page, "u")
    assert labels(seeded, [turn_id]) == [None]

    flagged = groups(seeded)[-1]["turns"][-1]["turn_id"]
    open_labelling(page, f"{dashboard}/turns?turn_id={flagged}")
    press(page, "h")
    assert labels(seeded, [flagged]) == ["hallucination"]
    assert flagged not in {t["turn_id"] for g in groups(seeded) for t in g["turns"]}
    press(page, "u")
    assert flagged in {t["turn_id"] for g in groups(seeded) for t in g["turns"]}
    assert page.locator(NO_TRACEBACK).count() == 0


def test_labels_given_in_the_browser_are_eval_cases(
    page: Page, dashboard: str, seeded: ServiceProcess, tmp_path: Path
) -> None:
    open_labelling(page, f"{dashboard}/verify")
    confirmed = group_of(seeded, shown_item(page))
    press(page, "h")
    rejected = group_of(seeded, shown_item(page))
    press(page, "n")
    clean = api(seeded, "/turns", verdict=["pass"], limit=1)["turns"][0]["turn_id"]
    open_labelling(page, f"{dashboard}/turns?turn_id={clean}")
    press(page, "h")  # a hallucination the validators missed
    expected = {turn_id: "hallucination" for turn_id in [*confirmed, clean]}
    expected.update({turn_id: "not_hallucination" for turn_id in rejected})
    assert labels(seeded, list(expected)) == list(expected.values())

    out = tmp_path / "labels.jsonl"
    exported = subprocess.run(
        [*CLI, "reviews", "export", "--api", seeded.url, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    ran = subprocess.run(
        [*CLI, "eval", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    reviewed = api(seeded, "/stats/review-precision")["turns"]["reviewed"]
    assert report["cases"] == reviewed  # every labelled turn, each once
    results = {r["id"]: r for r in report["results"]}
    for turn_id, label in expected.items():
        result = results[turn_id]
        wanted = "pass" if label == "not_hallucination" else result["expected_verdict"]
        assert result["expected_verdict"] == wanted
        assert (result["expected_verdict"] != "pass") == (label == "hallucination")
    for turn_id in confirmed:
        assert results[turn_id]["ok"], results[turn_id]  # the stored spans judge the same
    assert results[clean]["verdict"] == "pass" and not results[clean]["ok"]
