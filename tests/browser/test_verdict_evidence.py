"""What a verdict rests on, on real turn pages at device pixel ratios 1 and 2: the demo's
scripted agents run against their real tools, their turns reach a service of this
module's own as OTLP, and the dashboard shows

- on a reject, the real key the tools returned beside the fabricated one, marked in the
  evidence colour, its text exactly the token, with the call it came from;
- on a pass, the reply's commit SHA green with "✓ in gh_put_file (call_…)";
- a class-5 set as one finding listing its invented names and, green, its real one.

Each page is saved (tests/browser/output/verdict-<case>-dpr<ratio>.png).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from random import Random
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from factledger.dashboard import palette
from factledger.demo import MODELS, SCENARIOS, AgentRun, Scenario, World, play
from factledger.replay import OtlpPipeline
from factledger.service_process import ServiceProcess
from tests.browser.conftest import (
    STABLE_OUTPUT,
    VIEWPORT,
    dashboard_of,
    judged_turn,
    rgb,
    settled,
)

NO_TRACEBACK = '[data-testid="stException"]'
EVIDENCE_GREEN = rgb(palette.EVIDENCE_MARK)


def cache_tests_one_real(run: AgentRun, rng: Random) -> None:
    """Lists the tests, then names the one real cache test beside three invented ones."""
    run.user("Which tests cover the cache module?")
    run.step(None, ("list_files", {"dir": "tests"}))
    run.reply(
        "The cache is covered by tests/test_cache.py, tests/test_cache_eviction.py, "
        "tests/test_cache_expiry.py and tests/test_cache_sizing.py."
    )


def _scenario(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)


CASES = {
    "reject": _scenario("fabricated_ticket"),
    "pass": _scenario("push"),
    "set": Scenario("cache_tests_one_real", "coder", cache_tests_one_real),
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, chromium: Path) -> Iterator[dict[str, Any]]:
    """A service of this module's own with one turn per case; yields its URL and each
    case's judged turn as the API serves it."""
    with ServiceProcess(tmp_path_factory.mktemp("verdict-service")) as service:
        pipeline = OtlpPipeline(service.url, service_name="verdict-evidence")
        world = World(Random(3))
        try:
            for n, (name, scenario) in enumerate(CASES.items()):
                play(world, scenario, MODELS[n % 3], Random(n), pipeline.tracer, name)
        finally:
            pipeline.close()
        turns = {name: judged_turn(service.url, name) for name in CASES}
        yield {"url": service.url, "turns": turns}


@pytest.fixture(scope="module")
def verdict_dashboard(
    judged: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    log_path = tmp_path_factory.mktemp("verdict-dashboard") / "streamlit.log"
    yield from dashboard_of(judged["url"], log_path)


def _open(page: Page, dashboard: str, turn: dict[str, Any]) -> None:
    page.goto(f"{dashboard}/turns?turn_id={turn['turn_id']}")
    page.locator(".fl-reply").first.wait_for()
    settled(page)
    assert page.locator(NO_TRACEBACK).count() == 0


def _save(page: Page, name: str) -> Path:
    ratio = int(page.evaluate("() => window.devicePixelRatio"))
    STABLE_OUTPUT.mkdir(exist_ok=True)
    path = STABLE_OUTPUT / f"verdict-{name}-dpr{ratio}.png"
    # Streamlit scrolls inside its main block: grow the viewport to hold the findings.
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height), 4000)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)  # type: ignore[arg-type]
    return path


def _background(page: Page, selector: str) -> str:
    return str(page.locator(selector).first.evaluate("e => getComputedStyle(e).backgroundColor"))


def test_the_real_key_is_marked_beside_the_fabricated_one(
    dense_page: Page, judged: dict[str, Any], verdict_dashboard: str
) -> None:
    turn = judged["turns"]["reject"]
    (fabricated,) = [f for f in turn["findings"] if f["kind"] == "fabricated_identifier"]
    (real,) = fabricated["real"]
    assert real["tool"] == "create_ticket" and real["token"] != fabricated["token"]
    assert real["token"] in str(turn["tool_calls"][0]["result"])

    _open(dense_page, verdict_dashboard, turn)
    reply = dense_page.locator(".fl-reply").first
    mark = reply.locator("mark.fl-kind-fabricated_identifier")
    expect(mark).to_have_text(fabricated["token"])
    chip = reply.locator(".fl-real-chip")
    expect(chip).to_have_count(1)
    token = chip.locator("mark.fl-real-token")
    expect(token).to_have_text(real["token"])  # exactly the token, nothing around it
    expect(chip).to_contain_text(f"in create_ticket ({real['call_id']})")
    # beside the fabricated one: right after its mark and its label, and in view with it
    follows = mark.evaluate(
        "m => [m.nextElementSibling?.className, m.nextElementSibling?.nextElementSibling"
        "?.className]"
    )
    assert "fl-label" in follows[0] and follows[1] == "fl-real-chip", follows
    mark_box, token_box = mark.bounding_box(), token.bounding_box()
    assert mark_box and token_box
    assert abs(token_box["y"] - mark_box["y"]) < 3 * mark_box["height"]
    assert _background(dense_page, ".fl-real-chip mark.fl-real-token") == EVIDENCE_GREEN
    # the evidence line and the tool result show it too, in the same colour
    line = dense_page.locator('.fl-evidence[data-kind="fabricated_identifier"]').first
    expect(line).to_contain_text(
        f"the tools returned {real['token']} in create_ticket ({real['call_id']})"
    )
    expect(dense_page.locator("pre.fl-result mark.fl-real").first).to_have_text(real["token"])
    _save(dense_page, "reject")


def test_a_passing_turn_marks_its_commit_green_with_the_call(
    dense_page: Page, judged: dict[str, Any], verdict_dashboard: str
) -> None:
    turn = judged["turns"]["pass"]
    assert (turn["verdict"], turn["findings"]) == ("pass", [])
    (backing,) = turn["backings"]
    assert backing["tool"] == "gh_put_file"
    assert re.fullmatch(r"[0-9a-f]{12}", backing["token"])

    _open(dense_page, verdict_dashboard, turn)
    reply = dense_page.locator(".fl-reply").first
    green = reply.locator("mark.fl-backed")
    expect(green).to_have_count(1)
    expect(green).to_have_text(backing["token"])
    expect(reply.locator(".fl-backed-note")).to_have_text(
        f"✓ in gh_put_file ({backing['call_id']})"
    )
    assert _background(dense_page, ".fl-reply mark.fl-backed") == EVIDENCE_GREEN
    # a pass draws nothing red or amber, and no finding's mark or chip
    assert reply.locator(".fl-sev-reject, .fl-sev-flag, .fl-mark, .fl-label").count() == 0
    _save(dense_page, "pass")


def test_a_class5_set_is_one_finding_with_its_real_name_contrasted(
    dense_page: Page, judged: dict[str, Any], verdict_dashboard: str
) -> None:
    turn = judged["turns"]["set"]
    invented = [f["token"] for f in turn["findings"]]
    assert invented == [
        "tests/test_cache_eviction.py",
        "tests/test_cache_expiry.py",
        "tests/test_cache_sizing.py",
    ]

    _open(dense_page, verdict_dashboard, turn)
    entries = dense_page.locator('.fl-finding[data-finding-kind="confabulated_identifier_set"]')
    expect(entries).to_have_count(1)
    entry = entries.first
    expect(entry.locator("code.fl-set-invented")).to_have_text(invented)
    expect(entry.locator("code.fl-set-real")).to_have_text(["tests/test_cache.py"])
    expect(entry).to_contain_text("✓ in list_files (")
    expect(dense_page.get_by_text("Findings (1)")).to_be_visible()
    lines = dense_page.locator('.fl-evidence[data-kind="confabulated_identifier_set"]')
    expect(lines).to_have_count(1)
    # in the reply: each invented name in the set's colour, one label, the real name green
    reply = dense_page.locator(".fl-reply").first
    severity = turn["findings"][0]["severity"]  # as the service grades the kind
    expect(reply.locator(f"mark.fl-sev-{severity}")).to_have_count(3)
    expect(reply.locator(f".fl-label.fl-sev-{severity}")).to_have_count(1)
    expect(reply.locator("mark.fl-backed")).to_have_text(["tests/test_cache.py"])
    _save(dense_page, "set")
