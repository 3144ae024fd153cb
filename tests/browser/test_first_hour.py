"""What a new reader sees first, at a device pixel ratio of 1 and of 2: an identifier in a
mark is shown whole (its underscores inside the mark's box, never under its outline),
chips are red for a reject and amber for a flag whatever their kind, and the theme's
primary colour (buttons, selection, focus) is not the reject red. Each page is saved as a
screenshot (tests/browser/output/first-hour-*.png).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from factledger.dashboard import palette
from factledger.service_process import ServiceProcess
from tests.browser.conftest import STABLE_OUTPUT, VIEWPORT, WAIT_MS, settled

RATIOS = (1, 2)

# Where each mark's underscore ink ends against the mark's box. The text's baseline is
# the bottom of its content box less the font's descent; an underscore's ink reaches
# `actualBoundingBoxDescent` below it, which in common monospace fonts is lower than
# the descent: the bug this guards against.
_MARK_BOXES = """
() => [...document.querySelectorAll('.fl-reply mark.fl-mark')].map((mark) => {
  mark.scrollIntoView({block: 'center'});
  const style = getComputedStyle(mark);
  const box = mark.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(mark);
  const text = range.getBoundingClientRect();
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const metrics = context.measureText(mark.textContent);
  const underscore = context.measureText('_');
  const baseline = text.bottom - metrics.fontBoundingBoxDescent;
  // Any ancestor that clips (overflow other than visible) must hold the whole mark.
  const clipped = [];
  for (let node = mark.parentElement; node && node !== document.body; node = node.parentElement) {
    if (getComputedStyle(node).overflowY === 'visible') continue;
    const edge = node.getBoundingClientRect();
    if (box.top < edge.top || box.bottom > edge.bottom) clipped.push(node.className);
  }
  if (getComputedStyle(mark).overflow !== 'visible') clipped.push('the mark itself');
  return {
    text: mark.textContent,
    boxTop: box.top, boxBottom: box.bottom, textTop: text.top, textBottom: text.bottom,
    underscoreBottom: baseline + underscore.actualBoundingBoxDescent,
    clipped,
  };
})
"""


def _rgb(colour: str) -> str:
    value = colour.lstrip("#")
    red, green, blue = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgb({red}, {green}, {blue})"


def _turns(service: ServiceProcess) -> list[Mapping[str, Any]]:
    listed = httpx.get(f"{service.url}/api/v1/turns", params={"limit": 1000}).json()["turns"]
    return [
        httpx.get(f"{service.url}/api/v1/turns/{t['turn_id']}").json()
        for t in listed
        if t["verdict"] != "pass"
    ]


@pytest.fixture(scope="module")
def judged(seeded: ServiceProcess) -> list[Mapping[str, Any]]:
    return _turns(seeded)


def _underscored(turns: list[Mapping[str, Any]]) -> tuple[str, str]:
    """A turn whose finding's token (located by offsets) holds an underscore."""
    for turn in turns:
        for finding in turn["findings"]:
            token = str(finding.get("token") or "")
            if "_" in token and finding.get("span") and " " not in token:
                return turn["turn_id"], token
    raise AssertionError("the demo traffic has no finding on an identifier with `_`")


def _with_only(turns: list[Mapping[str, Any]], severity: str) -> str:
    """A turn whose findings are all `severity`s, one of them marked in the reply."""
    for turn in turns:
        severities = {f["severity"] for f in turn["findings"]}
        if severities == {severity} and any(f.get("span") for f in turn["findings"]):
            return str(turn["turn_id"])
    raise AssertionError(f"no demo turn whose findings are all {severity}s")


@pytest.fixture(params=RATIOS, ids=lambda ratio: f"dpr{ratio}")
def dense_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    context = browser.new_context(
        viewport=VIEWPORT,  # type: ignore[arg-type]
        device_scale_factor=request.param,
    )
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


def _open_turn(page: Page, dashboard: str, turn_id: str) -> None:
    page.goto(f"{dashboard}/turns?turn_id={turn_id}")
    page.locator(".fl-reply").first.wait_for()
    settled(page)


def _save(page: Page, name: str, selector: str | None = None) -> None:
    ratio = page.evaluate("() => window.devicePixelRatio")
    STABLE_OUTPUT.mkdir(exist_ok=True)
    path = STABLE_OUTPUT / f"first-hour-{name}-dpr{int(ratio)}.png"
    if selector:
        page.locator(selector).first.screenshot(path=str(path))
    else:
        page.screenshot(path=str(path))


def test_an_identifier_in_a_mark_is_whole_and_unclipped(
    dense_page: Page, dashboard: str, judged: list[Mapping[str, Any]]
) -> None:
    turn_id, token = _underscored(judged)
    _open_turn(dense_page, dashboard, turn_id)
    _save(dense_page, "mark", ".fl-reply")
    boxes = dense_page.evaluate(_MARK_BOXES)
    marked = [b for b in boxes if b["text"] == token]
    assert marked, f"no mark holds {token!r} exactly: {[b['text'] for b in boxes]}"
    for box in boxes:
        assert box["boxBottom"] - box["boxTop"] >= box["textBottom"] - box["textTop"], box
        assert box["underscoreBottom"] < box["boxBottom"], (
            f"the underscore of {box['text']!r} reaches below its mark: {box}"
        )
        assert not box["clipped"], f"{box['text']!r} is clipped by {box['clipped']}"


@pytest.mark.parametrize("severity", ["reject", "flag"])
def test_chips_are_coloured_by_severity_not_kind(
    dense_page: Page, dashboard: str, judged: list[Mapping[str, Any]], severity: str
) -> None:
    _open_turn(dense_page, dashboard, _with_only(judged, severity))
    _save(dense_page, f"chips-{severity}")
    chips = dense_page.locator(".fl-reply .fl-label, .fl-evidence .fl-label")
    assert chips.count() > 0
    wanted = _rgb(palette.SEVERITY_BACKGROUNDS[severity])
    colours = chips.evaluate_all("(els) => els.map((e) => getComputedStyle(e).backgroundColor)")
    assert set(colours) == {wanted}, colours
    marks = dense_page.locator(".fl-reply mark.fl-mark")
    outlines = marks.evaluate_all("(els) => els.map((e) => getComputedStyle(e).outlineColor)")
    assert set(outlines) == {_rgb(palette.SEVERITY_OUTLINES[severity])}, outlines


def test_the_theme_primary_colour_is_not_the_reject_red(
    dense_page: Page, dashboard: str, judged: list[Mapping[str, Any]]
) -> None:
    _open_turn(dense_page, dashboard, _with_only(judged, "flag"))
    button = dense_page.locator(".st-key-fl_hallucination button")
    colour = button.evaluate("(e) => getComputedStyle(e).backgroundColor")
    _save(dense_page, "theme", ".st-key-fl_turn_labels")
    assert colour == _rgb(palette.PRIMARY), colour
    assert colour != _rgb(palette.REJECT)
