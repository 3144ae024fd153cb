"""The Overview's charts and the Turns table in a real browser, read the way a new user
reads them: an axis that fits the data there is, a bucket still filling that does not pass
for a finished point, series colours apart from the verdicts' red, legends beside the
plot, and a table with coloured verdicts, readable kinds, the reason for each verdict,
replies cut on whole words and pages beyond the first.

Vega draws the charts as SVG with ARIA labels: an axis says the values it spans, a mark
its role (`aria-roledescription`) and description, which is what these tests read. The
Turns grid is a canvas: its cells are read from the grid's accessible table, its colours
from the pixels of a screenshot.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Locator, Page, expect

from factledger.dashboard import charts
from factledger.dashboard.screens import turns
from factledger.demo import run_demo
from factledger.service_process import ServiceProcess
from tests.browser.conftest import JUDGED_TIMEOUT, _dashboard, settled

NO_TRACEBACK = '[data-testid="stException"]'
CHART = '[data-testid="stVegaLiteChart"]'
FIRST_BATCH = 36
"""Turns sent at once to the fresh service: a dozen per demo model, a finished bucket."""
SECOND_BATCH = 9
"""Turns sent just after the next minute starts: the bucket the page sees filling."""
POINTS = ", ".join(
    f'[aria-roledescription="{role}"]'
    for role in ("settled bucket", "bucket with few turns", "bucket still filling")
)


def api(service: ServiceProcess, path: str, **params: Any) -> Any:
    response = httpx.get(f"{service.url}/api/v1{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stMain"]')


def wait_judged(service: ServiceProcess, turns: int) -> None:
    deadline = time.monotonic() + JUDGED_TIMEOUT
    total = 0
    while time.monotonic() < deadline:
        total = api(service, "/turns", limit=1)["total"]
        if total >= turns:
            return
        time.sleep(0.3)
    raise AssertionError(f"only {total} of {turns} turns judged:\n{service.log()[-3000:]}")


@pytest.fixture(scope="session")
def fresh_service(
    tmp_path_factory: pytest.TempPathFactory, chromium: Path
) -> Iterator[ServiceProcess]:
    """A service of its own, without traffic until a test sends some."""
    with ServiceProcess(tmp_path_factory.mktemp("fresh-service")) as running:
        yield running


@pytest.fixture(scope="session")
def fresh_dashboard(
    fresh_service: ServiceProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    yield from _dashboard(fresh_service.url, tmp_path_factory.mktemp("fresh") / "streamlit.log")


@pytest.fixture(scope="session")
def minute_of_traffic(fresh_service: ServiceProcess, fresh_dashboard: str) -> datetime:
    """About a minute of turns: a batch now, another as soon as the next minute starts
    (so that, for the page opened right after, the first minute is a finished bucket
    and the second is still filling). Returns the start of the second minute."""
    report = run_demo(fresh_service.url, turns=FIRST_BATCH, seed=11, progress=False)
    assert report.failed == 0
    wait_judged(fresh_service, FIRST_BATCH)
    now = datetime.now(UTC)
    minute = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    time.sleep((minute - now).total_seconds() + 0.5)
    report = run_demo(fresh_service.url, turns=SECOND_BATCH, seed=12, progress=False)
    assert report.failed == 0
    wait_judged(fresh_service, FIRST_BATCH + SECOND_BATCH)
    assert datetime.now(UTC) < minute + timedelta(seconds=40), "the second minute is nearly over"
    return minute


def x_axis_span(chart: Locator) -> tuple[str, str]:
    """The first and last time an x axis labels, from its ARIA description."""
    axis = chart.locator('g[aria-roledescription="axis"][aria-label^="X-axis"]').first
    label = axis.get_attribute("aria-label") or ""
    found = re.search(r"values from (\S+) to (\S+)", label)
    assert found, label
    return found[1], found[2]


def clock(value: str, day: datetime) -> datetime:
    return datetime.combine(day.date(), datetime.strptime(value, "%H:%M:%S").time(), UTC)


def test_a_minute_of_data_gets_an_axis_fitted_to_it_and_the_filling_bucket_is_hollow(
    page: Page, fresh_dashboard: str, minute_of_traffic: datetime, screenshot: Any
) -> None:
    open_page(page, fresh_dashboard)
    expect(page.get_by_role("heading", name="Reject rate per model")).to_be_visible()
    rates = page.locator(CHART).first
    expect(rates.locator("svg")).to_be_visible()
    settled(page)

    # The window is an hour; the axis spans the two minutes that have turns, in seconds.
    first, last = x_axis_span(rates)
    start, end = clock(first, minute_of_traffic), clock(last, minute_of_traffic)
    assert minute_of_traffic - timedelta(minutes=1) <= start < minute_of_traffic
    assert end - start <= timedelta(minutes=2), (first, last)
    assert page.locator('[data-testid="stMetricValue"]').first.inner_text() == str(
        FIRST_BATCH + SECOND_BATCH
    )

    # Finished buckets are filled points on the line; the minute still open is a hollow,
    # dashed ring per model, said so in its description and in the caption.
    solid = rates.locator('[aria-roledescription="settled bucket"]')
    hollow = rates.locator('[aria-roledescription="bucket still filling"]')
    expect(hollow.first).to_be_attached()
    assert solid.count() >= 1
    for index in range(hollow.count()):
        mark = hollow.nth(index)
        assert mark.get_attribute("fill") in ("transparent", "none", None)
        assert mark.get_attribute("stroke-dasharray")
        assert "bucket still filling" in (mark.get_attribute("aria-label") or "")
    for index in range(solid.count()):
        assert solid.nth(index).get_attribute("fill") not in ("transparent", "none", None)
    expect(
        page.get_by_text(f"The bucket from {minute_of_traffic:%H:%M} UTC is still filling")
    ).to_be_visible()
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("overview-one-minute")


def test_rates_per_model_come_first_with_their_turns_in_colours_that_are_not_verdicts(
    page: Page, dashboard: str, seeded: ServiceProcess, screenshot: Any
) -> None:
    open_page(page, dashboard)
    expect(page.get_by_role("heading", name="Turn volume per model")).to_be_visible()
    settled(page)
    headings = page.locator('[data-testid="stHeading"] :is(h1, h2, h3)').all_inner_texts()
    assert [h.strip() for h in headings[:3]] == [
        "Overview",
        "Reject rate per model",
        "Flagged rate per model",
    ]

    rates = page.locator(CHART).first
    expect(rates.locator("svg")).to_be_visible()
    # Each model's legend entry gives its rate over the window and the turns behind it.
    now = datetime.now(UTC)
    series = api(
        seeded,
        "/stats/reject-rate",
        group_by="model",
        bucket="1m",
        since=(now - timedelta(hours=2)).isoformat(),
        until=now.isoformat(),
    )["series"]
    legend = " ".join(
        rates.locator('g[aria-roledescription="legend"] text').evaluate_all(
            "texts => texts.map(t => t.textContent)"
        )
    )
    for one in series:
        count = sum(p["turns"] for p in one["points"])
        rejected = sum(p["rejected"] for p in one["points"])
        assert f"{one['key']} · {rejected / count:.1%} of {count} turns" in legend

    # Series colours are never the red that means "reject" (nor red at all).
    painted = rates.locator(POINTS).evaluate_all(
        "marks => marks.flatMap(m => [m.getAttribute('fill'), m.getAttribute('stroke')])"
    )
    colours = {c for c in painted if c and c not in ("transparent", "none")}
    assert colours
    for colour in colours | set(charts.SERIES_COLOURS):
        assert not reddish(parse_colour(colour)), colour

    # The plot is wide and the legends sit beside it, not on it.
    frame, legends = rates.evaluate(
        """chart => {
            const box = e => { const r = e.getBoundingClientRect();
                return [r.left, r.top, r.right, r.bottom]; };
            const plot = chart.querySelector('.role-frame.root > g > path.background');
            return [box(plot), [...chart.querySelectorAll('.role-legend')].map(box)];
        }"""
    )
    assert frame[2] - frame[0] >= 600, frame
    assert legends
    for box in legends:
        assert box[0] >= frame[2] or box[2] <= frame[0] or box[1] >= frame[3], (box, frame)
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("overview-seeded")


def parse_colour(value: str) -> tuple[int, int, int]:
    value = value.strip()
    if value.startswith("#"):
        return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)
    found = re.findall(r"\d+", value)
    return int(found[0]), int(found[1]), int(found[2])


def reddish(rgb: tuple[int, int, int]) -> bool:
    """Red or amber enough to read as the verdicts' reject or flag."""
    r, g, b = rgb
    return r > 150 and r - max(g, b) > 60 and abs(g - b) < 120 and g < 160


def grid_cells(page: Page, column: int) -> list[str]:
    """The texts of a column of the Turns grid's accessible table (0: row selector).

    Read in one pass in the page: the grid re-renders when a page changes, so counting
    the rows and then reading them one by one can ask for a row that has just gone."""
    rows = page.locator('[data-testid="stDataFrame"] table tbody tr')
    texts = rows.evaluate_all(
        "(rows, column) => rows.map("
        " r => (r.querySelectorAll('td')[column]?.innerText ?? '').trim())",
        column,
    )
    return [str(text) for text in texts]


def header_index(page: Page, name: str) -> int:
    headers = page.locator('[data-testid="stDataFrame"] table thead th').all_inner_texts()
    return [h.strip() for h in headers].index(name)


def test_turns_table_colours_verdicts_names_kinds_and_gives_the_reason(
    page: Page, dashboard: str, seeded: ServiceProcess, screenshot: Any
) -> None:
    listed = api(seeded, "/turns", verdict=["reject", "flag"], limit=turns.DEFAULT_PAGE_SIZE)
    open_page(page, f"{dashboard}/turns")
    grid = page.locator('[data-testid="stDataFrame"]')
    expect(grid).to_be_visible()
    expect(grid.locator("td").first).to_be_attached()
    settled(page)
    screenshot("turns-table")

    # The grid fills the page's width without a horizontal scroll, and about a screen.
    box = grid.bounding_box()
    content = page.locator('[data-testid="stMainBlockContainer"]').evaluate(
        "e => { const s = getComputedStyle(e);"
        " return e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); }"
    )
    assert box is not None
    assert box["width"] >= content - 2, (box, content)
    assert box["height"] >= turns.HEADER_HEIGHT + turns.ROWS_IN_VIEW * turns.ROW_HEIGHT - 4
    scroller = grid.locator(".dvn-scroller").first
    widths = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1] + 2, widths

    kinds = grid_cells(page, header_index(page, "finding kinds"))
    assert kinds and all("_" not in cell for cell in kinds), kinds[:5]
    why = grid_cells(page, header_index(page, "why"))
    replies = grid_cells(page, header_index(page, "reply"))
    for row, turn in enumerate(listed["turns"][:10]):
        detail = api(seeded, f"/turns/{turn['turn_id']}")
        deciding = [f for f in detail["findings"] if f["severity"] == turn["verdict"]]
        assert deciding, turn
        message = turns.plain_text(deciding[0]["message"])
        assert why[row].rstrip("…") and message.startswith(why[row].rstrip("…"))
        # A reply (from just before its first flagged token) is plain text, whole or cut
        # after a whole word, never inside one.
        shown = replies[row]
        full = " ".join(turns.plain_text(detail["reply"]).split())
        kept = shown.removeprefix("…").removesuffix("…")
        assert kept in full, (shown, full[:200])
        at = full.index(kept)
        assert shown.startswith("…") == (at > 0), (shown, full[:200])
        if shown.endswith("…"):
            assert full[at + len(kept)] in " ,;:-", (shown, full[: at + len(kept) + 10])
        else:
            assert at + len(kept) == len(full), (shown, full[:200])

    # The verdict is a coloured pill: the first row holds its verdict's colour and not
    # the other one's (the rest of the row is text on white).
    first = listed["turns"][0]["verdict"]
    picture = Image.open(io.BytesIO(grid.screenshot())).convert("RGB")
    strip = picture.crop((0, turns.HEADER_HEIGHT, picture.width, turns.HEADER_HEIGHT + 60))
    raw = strip.tobytes()
    pixels = [(raw[i], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 3)]
    for verdict in ("reject", "flag"):
        colour = parse_colour(turns.VERDICT_COLOURS[verdict])
        assert any(close(p, colour) for p in pixels) == (verdict == first), (verdict, first)
    assert page.locator(NO_TRACEBACK).count() == 0


def close(a: tuple[int, int, int], b: tuple[int, int, int], tolerance: int = 6) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def test_turns_table_pages_past_the_first_page(
    page: Page, dashboard: str, seeded: ServiceProcess, screenshot: Any
) -> None:
    every = _settled_total(seeded)
    size = turns.PAGE_SIZES[0]
    assert every > 2 * size, "the seeded traffic fills fewer than three pages"
    last = -(-every // size)
    open_page(page, f"{dashboard}/turns")
    expect(page.locator('[data-testid="stDataFrame"]')).to_be_visible()
    page.get_by_label("Verdict").click()
    page.get_by_role("option", name="any").click()
    expect(page.get_by_text(f"{every:,} turns match")).to_be_visible()
    page.get_by_label("Rows per page").click()
    page.get_by_role("option", name=f"{size}", exact=True).click()
    expect(page.get_by_text(f"showing 1–{size}, newest first")).to_be_visible()

    box = page.get_by_label(f"Page (of {last})")
    box.fill(str(last))
    box.press("Enter")
    first_shown = (last - 1) * size + 1
    expect(
        page.get_by_text(f"{every:,} turns match; showing {first_shown}–{every}")
    ).to_be_visible()
    settled(page)
    expected = api(seeded, "/turns", limit=1, offset=first_shown - 1)["turns"][0]
    assert api(seeded, "/turns", limit=1)["total"] == every, "turns arrived meanwhile"
    started = datetime.fromisoformat(expected["started_at"].replace("Z", "+00:00"))
    # The grid of the page before may still be on screen, and the grid renders only the
    # rows in view (each four lines high): wait for the last page's first row on top.
    deadline = time.monotonic() + 45
    while True:
        times = grid_cells(page, header_index(page, "time (UTC)"))
        if times and times[0].startswith(f"{started:%Y-%m-%d %H:%M:%S}"):
            break
        assert time.monotonic() < deadline, times[:3]
        page.wait_for_timeout(300)
    rows = page.locator('[data-testid="stDataFrame"] table tbody tr')
    assert 0 < rows.count() <= every - first_shown + 1
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot("turns-last-page")


def _settled_total(service: ServiceProcess) -> int:
    """The number of turns once the seeded traffic is all judged: a late turn of a seeded
    conversation can start before turns already listed, so it would move rows anywhere
    in the list, not only from the top. Waits until the count holds for three seconds."""
    deadline = time.monotonic() + 90
    seen = api(service, "/turns", limit=1)["total"]
    held_since = time.monotonic()
    while time.monotonic() - held_since < 3:
        assert time.monotonic() < deadline, "the seeded turns kept arriving for 90 s"
        time.sleep(0.5)
        now = api(service, "/turns", limit=1)["total"]
        if now != seen:
            seen, held_since = now, time.monotonic()
    return int(seen)
