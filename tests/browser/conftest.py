"""The browser tests' world: a service (`factledger serve` as a child process on a
temporary store) with seeded demo traffic, the dashboard (`streamlit run`) pointed at it,
and Debian's Chromium driven by Playwright. All session-scoped: each starts once.

Chromium is never downloaded: the tests use /usr/bin/chromium (`apt-get install
chromium`). Without it they skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from factledger.dashboard_cli import dashboard_url, start_dashboard, stop, wait_healthy
from factledger.demo import run_demo
from factledger.service_process import ServiceProcess, free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEMO_TURNS = 150
JUDGED_TIMEOUT = 120.0
DASHBOARD_TIMEOUT = 120.0
STABLE_OUTPUT = Path(__file__).parent / "output"
"""Screenshots are copied here too (git-ignored), to look at after a run."""
VIEWPORT = {"width": 1440, "height": 1000}
WAIT_MS = 45_000
"""How long a page element may take to appear (Streamlit reruns, chDB queries)."""

expect.set_options(timeout=WAIT_MS)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    message = (
        f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`; "
        ".ci/run does this when run as root)"
    )
    if _in_ci():
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory, chromium: Path) -> Iterator[ServiceProcess]:
    with ServiceProcess(tmp_path_factory.mktemp("service")) as running:
        yield running


@pytest.fixture(scope="session")
def seeded(service: ServiceProcess) -> ServiceProcess:
    """The service with DEMO_TURNS demo turns, every one judged."""
    report = run_demo(service.url, turns=DEMO_TURNS, progress=False)
    assert report.failed == 0, f"{report.failed} spans not acknowledged"
    deadline = time.monotonic() + JUDGED_TIMEOUT
    total = 0
    while time.monotonic() < deadline:
        total = httpx.get(f"{service.url}/api/v1/turns", params={"limit": 1}).json()["total"]
        if total >= DEMO_TURNS:
            return service
        time.sleep(0.5)
    raise AssertionError(f"only {total} of {DEMO_TURNS} turns judged:\n{service.log()[-3000:]}")


def judged_turn(url: str, conversation_id: str) -> dict[str, Any]:
    """The judged turn of a conversation as `GET /turns/{id}` serves it, once there is one."""
    deadline = time.monotonic() + JUDGED_TIMEOUT
    while time.monotonic() < deadline:
        found = httpx.get(
            f"{url}/api/v1/turns", params={"conversation_id": conversation_id}, timeout=30
        ).json()["turns"]
        if found:
            turn: dict[str, Any] = httpx.get(
                f"{url}/api/v1/turns/{found[0]['turn_id']}", timeout=30
            ).json()
            return turn
        time.sleep(0.3)
    raise AssertionError(f"no judged turn for {conversation_id}")


def dashboard_of(api_url: str, log_path: Path) -> Iterator[str]:
    """A dashboard reading `api_url` for as long as the generator runs: yields its URL."""
    yield from _dashboard(api_url, log_path)


def _dashboard(api_url: str, log_path: Path) -> Iterator[str]:
    port = free_port()
    with log_path.open("wb") as log:
        process = start_dashboard(api_url, port=port, output=log)
        url = dashboard_url(port)
        try:
            if not wait_healthy(url, process, DASHBOARD_TIMEOUT):
                raise AssertionError(f"dashboard not healthy:\n{log_path.read_text()[-3000:]}")
            yield url
        finally:
            stop(process)


@pytest.fixture(scope="session")
def dashboard(seeded: ServiceProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard's URL, reading the seeded service."""
    yield from _dashboard(seeded.url, tmp_path_factory.mktemp("dashboard") / "streamlit.log")


@pytest.fixture(scope="session")
def orphan_dashboard(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard whose service is down (nothing listens on its API port)."""
    api = f"http://127.0.0.1:{free_port()}"
    yield from _dashboard(api, tmp_path_factory.mktemp("orphan") / "streamlit.log")


@pytest.fixture(scope="session")
def playwright_session(chromium: Path) -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_session: Playwright, chromium: Path) -> Iterator[Browser]:
    launched = playwright_session.chromium.launch(
        executable_path=str(chromium), args=CHROMIUM_ARGS, timeout=60_000
    )
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    context.set_default_timeout(WAIT_MS)
    opened = context.new_page()
    try:
        yield opened
    finally:
        context.close()


@pytest.fixture
def screenshot(page: Page, tmp_path: Path):
    """`screenshot("overview")` saves the page under the test's output folder and copies
    it to tests/browser/output/overview.png."""

    def take(name: str) -> Path:
        path = tmp_path / f"{name}.png"
        # Tables are canvases painted after their data arrives; the accessible copy of
        # their cells says when it has.
        grids = page.locator('[data-testid="stDataFrame"]')
        for index in range(grids.count()):
            grids.nth(index).locator("td").first.wait_for(state="attached")
        page.wait_for_timeout(500)
        # Streamlit scrolls inside its main block, not the document: grow the viewport to
        # the content's height so the picture holds the whole page.
        height = page.evaluate(
            "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
            " return m ? m.scrollHeight : document.body.scrollHeight; }"
        )
        page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height), 9000)})
        page.wait_for_timeout(300)
        page.screenshot(path=str(path), full_page=True)
        page.set_viewport_size(VIEWPORT)  # type: ignore[arg-type]
        STABLE_OUTPUT.mkdir(exist_ok=True)
        shutil.copyfile(path, STABLE_OUTPUT / path.name)
        return path

    return take


RATIOS = (1, 2)
"""The device pixel ratios a page's look is checked at: a common screen's and a dense one's."""


@pytest.fixture(params=RATIOS, ids=lambda ratio: f"dpr{ratio}")
def dense_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    """A page at each of RATIOS."""
    context = browser.new_context(
        viewport=VIEWPORT,  # type: ignore[arg-type]
        device_scale_factor=request.param,
    )
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


def save_picture(page: Page, name: str, selector: str | None = None) -> None:
    """Save the view (or the first element `selector` finds) as
    tests/browser/output/NAME-dprN.png, N the page's device pixel ratio."""
    ratio = page.evaluate("() => window.devicePixelRatio")
    STABLE_OUTPUT.mkdir(exist_ok=True)
    path = STABLE_OUTPUT / f"{name}-dpr{int(ratio)}.png"
    if selector:
        page.locator(selector).first.screenshot(path=str(path))
    else:
        page.screenshot(path=str(path))


def rgb(colour: str) -> str:
    """`#rrggbb` as the browser's computed style writes it: `rgb(r, g, b)`."""
    value = colour.lstrip("#")
    red, green, blue = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgb({red}, {green}, {blue})"


def settled(page: Page) -> None:
    """Wait until Streamlit has finished running the page's script."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
