"""What a new reader sees first, at a device pixel ratio of 1 and of 2: an identifier in a
mark is shown whole (its underscores inside the mark's box, never under its outline),
chips are red for a reject and amber for a flag whatever their kind, and the theme's
primary colour (buttons, selection, focus) is not the reject red. Each page is saved as a
screenshot (tests/browser/output/first-hour-*.png).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from factledger.dashboard import palette
from factledger.service_process import ServiceProcess
from tests.browser.conftest import _dashboard, rgb, save_picture, settled

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


def _open_turn(page: Page, dashboard: str, turn_id: str) -> None:
    page.goto(f"{dashboard}/turns?turn_id={turn_id}")
    page.locator(".fl-reply").first.wait_for()
    settled(page)


def _save(page: Page, name: str, selector: str | None = None) -> None:
    save_picture(page, f"first-hour-{name}", selector)


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
    wanted = rgb(palette.SEVERITY_BACKGROUNDS[severity])
    colours = chips.evaluate_all("(els) => els.map((e) => getComputedStyle(e).backgroundColor)")
    assert set(colours) == {wanted}, colours
    marks = dense_page.locator(".fl-reply mark.fl-mark")
    outlines = marks.evaluate_all("(els) => els.map((e) => getComputedStyle(e).outlineColor)")
    assert set(outlines) == {rgb(palette.SEVERITY_OUTLINES[severity])}, outlines


def test_the_theme_primary_colour_is_not_the_reject_red(
    dense_page: Page, dashboard: str, judged: list[Mapping[str, Any]]
) -> None:
    _open_turn(dense_page, dashboard, _with_only(judged, "flag"))
    button = dense_page.locator(".st-key-fl_hallucination button").first
    colour = button.evaluate("(e) => getComputedStyle(e).backgroundColor")
    _save(dense_page, "theme", ".st-key-fl_turn_labels")
    assert colour == rgb(palette.PRIMARY), colour
    assert colour != rgb(palette.REJECT)


def _with_kind(turns: list[Mapping[str, Any]], kind: str) -> Mapping[str, Any]:
    for turn in turns:
        if any(f["kind"] == kind for f in turn["findings"]):
            return turn
    raise AssertionError(f"no demo turn with a {kind} finding")


def test_the_failed_call_question_names_the_call_and_the_page_its_own_bar(
    page: Page, dashboard: str, judged: list[Mapping[str, Any]]
) -> None:
    turn = _with_kind(judged, "error_reported_as_success")
    finding = next(f for f in turn["findings"] if f["kind"] == "error_reported_as_success")
    (call,) = finding["checked_against"]
    _open_turn(page, dashboard, turn["turn_id"])
    _save(page, "question", ".st-key-fl_turn_labels")
    question = page.locator(".fl-question").inner_text()
    assert question.startswith(f"The call {call} failed."), question
    assert f"The call {finding['token']} failed" not in question
    assert page.get_by_text("on the Verify page").count() == 0
    name = page.get_by_label("Your name (stored with your labels)")
    assert name.is_visible()  # the turn page labels as someone too


def test_turns_cells_are_plain_text_with_a_class_column_and_a_service_filter(
    page: Page, dashboard: str, judged: list[Mapping[str, Any]]
) -> None:
    page.goto(f"{dashboard}/turns")
    grid = page.locator('[data-testid="stDataFrame"]')
    grid.locator("td").first.wait_for(state="attached")
    settled(page)
    _save(page, "turns")
    assert page.locator(".st-key-turns_service").count() == 1
    headers = grid.locator("th").all_inner_texts()
    assert "class" in [h.strip() for h in headers], headers
    cells = grid.locator("td").all_inner_texts()
    assert cells and not [c for c in cells if "`" in c], [c for c in cells if "`" in c][:3]
    # The reply around its first flagged token: an identifier late in a reply shows.
    underscored = [c for c in cells if "retry_with_backoff" in c]
    assert len(underscored) >= 2, "why and reply both show the identifier exactly"


@pytest.fixture(scope="module")
def empty_dashboard(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard reading a service whose store holds nothing."""
    with ServiceProcess(tmp_path_factory.mktemp("empty-service")) as empty:
        yield from _dashboard(empty.url, tmp_path_factory.mktemp("empty") / "streamlit.log")


def test_an_empty_stores_queue_has_nothing_to_review_yet(page: Page, empty_dashboard: str) -> None:
    page.goto(f"{empty_dashboard}/verify")
    page.get_by_text("Nothing to review yet.").wait_for()
    settled(page)
    _save(page, "verify-empty")
    assert page.get_by_text("Every flagged turn has a label").count() == 0
