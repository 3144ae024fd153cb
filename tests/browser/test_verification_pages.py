"""What verification answered, in a real browser: a turn page shows, beside each finding,
the answer that settled it (a confirmed one in the reject colour, an unverifiable one
grey, each with its source and exact query), and the finding a source refuted under
"Withdrawn by verification"; the Verify page filters its queue by what verification
answered and says it for each item; the Overview counts the answers per kind.

The service here is the real app over loopback HTTP on a chDB store of this module's own,
into which turns are written as the pipeline writes them (`verified_turns`): version 1
judged, version 2 settled by the sources' answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, TextRange
from tests.browser.conftest import _dashboard, settled
from tests.integration.app_server import served_app
from tests.integration.verified_turns import (
    CONFIRMED,
    REFUTED,
    UNVERIFIABLE,
    Answer,
    write_verified_turn,
)

NO_TRACEBACK = '[data-testid="stException"]'
ITEM = '[class*="st-key-queue_"]'
PATHS = ("tests/test_cache.py", "tests/test_store.py", "tests/test_queue.py")
REPLY = "The change is covered by " + ", ".join(PATHS) + "."
QUERIES = {
    "tests/test_cache.py": "git ls-tree HEAD -- tests/test_cache.py",
    "tests/test_store.py": "list_files result lists tests/test_store.py",
    "tests/test_queue.py": "git ls-tree HEAD -- tests/test_queue.py",
}
ANSWERS = {
    "tests/test_cache.py": Answer(
        CONFIRMED, "git:acme/site", QUERIES["tests/test_cache.py"], "(nothing)"
    ),
    "tests/test_store.py": Answer(
        REFUTED, "trace:list_files (call_1)", QUERIES["tests/test_store.py"], "tests/test_store.py"
    ),
    "tests/test_queue.py": Answer(
        UNVERIFIABLE, "git:acme/site", QUERIES["tests/test_queue.py"], reason="timeout"
    ),
}


def _set(reply: str, *paths: str) -> tuple[Finding, ...]:
    return tuple(
        Finding(
            Kind.CONFABULATED_IDENTIFIER_SET,
            "grounded nowhere",
            token=path,
            score=0.8,
            span=TextRange(reply.index(path), reply.index(path) + len(path)),
        )
        for path in paths
    )


def _write(store: Store) -> None:
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    write_verified_turn(store, "settled", REPLY, _set(REPLY, *PATHS), ANSWERS, started_at=start)
    unsettled = "Covered by tests/test_slow.py and tests/test_lost.py."
    write_verified_turn(
        store,
        "unsettled",
        unsettled,
        _set(unsettled, "tests/test_slow.py", "tests/test_lost.py"),
        {
            "tests/test_slow.py": Answer(UNVERIFIABLE, "git:acme/site", reason="timeout"),
            "tests/test_lost.py": Answer(UNVERIFIABLE, "workspace", reason="no source"),
        },
        started_at=start + timedelta(minutes=1),
        agent="tester",
    )
    unverified = "Covered by tests/test_never.py."
    write_verified_turn(
        store,
        "unverified",
        unverified,
        _set(unverified, "tests/test_never.py"),
        {},
        started_at=start + timedelta(minutes=2),
        agent="planner",
    )


@pytest.fixture(scope="module")
def verified_api(chdb_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the app serving a store that holds verified turns."""
    store = Store.open(StoreConfig(dsn=chdb_dsn, database="browser_verification"))
    _write(store)
    data_dir = tmp_path_factory.mktemp("verified-service")
    settings = ServiceSettings(data_dir=data_dir, grace_seconds=0.2, max_wait_seconds=5)
    try:
        with served_app(settings, store) as url:
            yield url
    finally:
        store.close()


@pytest.fixture(scope="module")
def verified_dashboard(
    verified_api: str, tmp_path_factory: pytest.TempPathFactory, chromium: Path
) -> Iterator[str]:
    yield from _dashboard(verified_api, tmp_path_factory.mktemp("dash") / "streamlit.log")


def _open(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stMain"]')
    settled(page)


def test_the_turn_page_shows_each_answer_beside_its_finding(
    page: Page, verified_dashboard: str, screenshot
) -> None:
    _open(page, f"{verified_dashboard}/turns?turn_id=settled")
    confirmed = page.locator('.fl-verification[data-outcome="confirmed"]')
    expect(confirmed).to_have_count(1)
    expect(confirmed).to_contain_text("confirmed: hallucination")
    expect(confirmed).to_contain_text("git:acme/site")
    expect(confirmed.locator("code.fl-query")).to_have_text(QUERIES["tests/test_cache.py"])
    expect(confirmed).to_contain_text(" UTC · 12 ms")
    chip = confirmed.locator(".fl-outcome")
    expect(chip).to_have_css("background-color", "rgb(254, 215, 215)")  # the reject colour

    unsure = page.locator('.fl-verification[data-outcome="unverifiable"]')
    expect(unsure).to_contain_text("why unverifiable: timeout")
    expect(unsure.locator("code.fl-query")).to_have_text(QUERIES["tests/test_queue.py"])
    expect(unsure.locator(".fl-outcome")).to_have_css("background-color", "rgb(226, 232, 240)")

    expect(page.get_by_text("Withdrawn by verification (1)")).to_be_visible()
    gone = page.locator(".fl-withdrawn")
    expect(gone).to_contain_text("tests/test_store.py")
    expect(gone).to_contain_text("trace:list_files (call_1)")
    expect(gone.locator("code.fl-query")).to_have_text(QUERIES["tests/test_store.py"])
    refuted = gone.locator(".fl-outcome")
    expect(refuted).to_have_text("refuted: it exists")
    expect(refuted).to_have_css("background-color", "rgb(198, 246, 213)")  # green
    # The two names still counted are one set, one finding (the withdrawn name is gone).
    expect(page.get_by_text("Findings (1)")).to_be_visible()
    expect(page.locator(NO_TRACEBACK)).to_have_count(0)
    screenshot("verification-turn")


def test_the_verify_page_filters_by_what_verification_answered(
    page: Page, verified_dashboard: str, screenshot
) -> None:
    _open(page, f"{verified_dashboard}/verify?verification=unsettled")
    item = page.locator(ITEM)
    expect(item.locator(".fl-queue-verification")).to_have_text(
        "no source could settle this: no source / timeout"
    )
    expect(page.get_by_text("1 flagged turns await a label")).to_be_visible()
    screenshot("verification-verify-unsettled")

    page.get_by_role("combobox", name="Verification").click()
    page.get_by_role("option", name="not verified", exact=True).click()
    page.wait_for_function("() => location.search.includes('verification=unverified')")
    settled(page)
    expect(page.locator(ITEM).locator(".fl-queue-verification")).to_have_text(
        "not verified: no source was asked"
    )
    expect(page.locator(ITEM)).to_contain_text("planner")

    page.get_by_role("combobox", name="Verification").click()
    page.get_by_role("option", name="all", exact=True).click()
    page.wait_for_function("() => !location.search.includes('verification=')")
    settled(page)
    # The settled turn is a reject now: only the two the sources could not settle wait.
    expect(page.get_by_text("2 flagged turns await a label")).to_be_visible()
    expect(page.locator(NO_TRACEBACK)).to_have_count(0)


def test_the_overview_counts_the_answers_per_kind(page: Page, verified_dashboard: str) -> None:
    _open(page, verified_dashboard)
    heading = page.get_by_text("Verification: confirmed / refuted / unverifiable per kind")
    expect(heading).to_be_visible()
    expect(page.get_by_text("1 confirmed (hallucination proven at the source)")).to_be_visible()
    expect(page.get_by_text("3 unverifiable")).to_be_visible()
    expect(page.locator(NO_TRACEBACK)).to_have_count(0)
