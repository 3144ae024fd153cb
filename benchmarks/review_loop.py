"""Seconds per labelled item on the Verify page: the click flow it had before against the
keyboard flow it has now, timed in Chromium against one real service.

One service (`factledger serve` on a temporary store) gets demo traffic and the flagged
cases of the eval corpus (replayed as spans), so the queue holds both repeated and
one-off suspicions. Two dashboards read it: the one of `--before` (default: the commit
before the keyboard flow; its files are taken with `git archive`, nothing in the checkout
changes) and the one of this checkout.

- before: the page shows five queue items; the reviewer clicks "Hallucination" on the
  first (Playwright scrolls to it) and waits until the page has redrawn the queue;
- after: one item on screen, the reviewer presses H and waits until the next is drawn.
  A near-duplicate group is one item, so one key may label several turns.

An item's time runs from the action until the next item is ready to be judged (the page's
script finished). The time a human spends reading is the same in both and is not part of
it. After the before run every label it gave is withdrawn through the API, so both runs
see the same queue.

    python -m benchmarks.review_loop [--items N] [--demo-turns N] [--before REF]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, sync_playwright

from factledger.dashboard_cli import HEALTH_PATH, stop
from factledger.demo import run_demo
from factledger.replay import replay
from factledger.service_process import ServiceProcess, free_port

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1440, "height": 1000}
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
ITEM = '[class*="st-key-queue_"]'
WAIT_MS = 60_000


@dataclass(frozen=True)
class Run:
    """One flow's timings: seconds per item, and the turns each item labelled."""

    name: str
    seconds: list[float]
    turns: list[int]

    def summary(self) -> dict[str, float | int | str]:
        total = sum(self.seconds)
        return {
            "flow": self.name,
            "items": len(self.seconds),
            "turns_labelled": sum(self.turns),
            "seconds_per_item_mean": round(statistics.mean(self.seconds), 3),
            "seconds_per_item_median": round(statistics.median(self.seconds), 3),
            "seconds_per_turn": round(total / sum(self.turns), 3),
        }


LABELING = "dashboard/src/factledger/dashboard/labeling.py"


def before_ref() -> str:
    """The commit before the keyboard flow: the parent of the one that added
    dashboard/labeling.py (HEAD while it is not committed)."""
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--follow", "--", LABELING],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return f"{added[-1]}^" if added else "HEAD"


def export_tree(ref: str, into: Path) -> Path:
    """The files of `ref` under `into` (git archive: the checkout is not touched)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="tar")
    return into


@contextmanager
def dashboard(tree: Path, api_url: str, log: Path) -> Iterator[str]:
    """The Streamlit dashboard of `tree` (its own `factledger` package first on the path)."""
    port = free_port()
    # Trees from before the one-path layout reach dashboard/ through a symlink in factledger/.
    parts = [tree / part / "src" for part in ("collector", "processors", "dashboard", "schemas")]
    split = (tree / "dashboard" / "src").is_dir()
    path = [tree, *parts] if split else [tree]
    app = tree / "dashboard" / "src" / "factledger" / "dashboard" / "app.py" if split else None
    env = {**os.environ, "FACTLEDGER_API": api_url, "PYTHONPATH": os.pathsep.join(map(str, path))}
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app or tree / "dashboard" / "app.py"),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
    ]
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, cwd=tree, stdout=output, stderr=output)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"dashboard did not start:\n{log.read_text()[-2000:]}")
                try:
                    if httpx.get(url + HEALTH_PATH, timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            yield url
        finally:
            stop(process)


def seed(service: ServiceProcess, demo_turns: int, work: Path) -> None:
    """Demo traffic and the corpus's flagged cases, every turn judged."""
    run_demo(service.url, turns=demo_turns, progress=False)
    flagged = work / "flagged.jsonl"
    lines = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            wanted = line.strip() and not line.startswith("//")
            if wanted and json.loads(line)["expected"]["verdict"] == "flag":
                lines.append(line)
    flagged.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = replay(flagged, service.url, progress=False)
    expected = demo_turns + report.records
    deadline = time.monotonic() + 180
    while _api(service, "/turns", limit="1")["total"] < expected:
        if time.monotonic() > deadline:
            raise RuntimeError("the seeded turns were not judged in time")
        time.sleep(0.5)


def _api(service: ServiceProcess, path: str, **params: str) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.get(
        f"{service.url}/api/v1{path}", params=params, timeout=60
    ).json()
    return answer


def withdraw_all(service: ServiceProcess) -> int:
    """Withdraw every review that counts; returns how many."""
    cases = httpx.get(f"{service.url}/api/v1/reviews", timeout=120).json()["cases"]
    for case in cases:
        review_id = case["review"]["review_id"]
        httpx.delete(f"{service.url}/api/v1/reviews/{review_id}", timeout=30).raise_for_status()
    return len(cases)


def _ready(page: Page) -> None:
    page.wait_for_selector(IDLE, timeout=WAIT_MS)


def _first_item(page: Page) -> str:
    return page.locator(ITEM).first.get_attribute("class") or ""


def click_flow(page: Page, url: str, items: int) -> Run:
    """The page before: click "Hallucination" on the first of the items shown."""
    page.goto(f"{url}/verify")
    page.wait_for_selector(ITEM, timeout=WAIT_MS)
    _ready(page)
    seconds, turns = [], []
    for _ in range(items):
        first = _first_item(page)
        started = time.perf_counter()
        page.locator(ITEM).first.get_by_role("button", name="Hallucination", exact=True).click()
        page.wait_for_function(
            "(c) => { const e = document.querySelector('[class*=\"st-key-queue_\"]');"
            " return !e || e.getAttribute('class') !== c; }",
            arg=first,
            timeout=WAIT_MS,
        )
        _ready(page)
        seconds.append(time.perf_counter() - started)
        turns.append(1)
        if page.locator(ITEM).count() == 0:
            break
    return Run("before: click", seconds, turns)


def key_flow(page: Page, url: str, items: int, group_size: Callable[[str], int]) -> Run:
    """The page now: press H on the item on screen."""
    page.goto(f"{url}/verify")
    page.wait_for_selector("[data-fl-item]", state="attached", timeout=WAIT_MS)
    _ready(page)
    seconds, turns = [], []
    for _ in range(items):
        marker = page.evaluate("() => document.querySelector('[data-fl-item]').dataset.flItem")
        head = _first_item(page).split("st-key-queue_")[1].split()[0]
        size = group_size(head)
        started = time.perf_counter()
        page.keyboard.press("h")
        page.wait_for_function(
            "(m) => document.querySelector('[data-fl-item]')?.dataset.flItem !== m",
            arg=marker,
            timeout=WAIT_MS,
        )
        _ready(page)
        seconds.append(time.perf_counter() - started)
        turns.append(size)
        if page.locator(ITEM).count() == 0:
            break
    return Run("after: keyboard", seconds, turns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=12, help="items labelled per flow")
    parser.add_argument("--demo-turns", type=int, default=150, help="demo turns to seed")
    parser.add_argument("--before", help="git ref of the page before (default: see above)")
    args = parser.parse_args(argv)
    ref = args.before or before_ref()
    with tempfile.TemporaryDirectory(prefix="review-loop-") as tmp:
        work = Path(tmp)
        before_tree = export_tree(ref, work / "before")
        with ServiceProcess(work / "service") as service:
            seed(service, args.demo_turns, work)
            groups = httpx.get(
                f"{service.url}/api/v1/review-queue/groups", params={"limit": "1000"}
            ).json()
            print(
                f"queue: {groups['turns']} turns in {len(groups['groups'])} items; before = {ref}",
                file=sys.stderr,
            )

            def group_size(turn_id: str) -> int:
                answer = httpx.get(
                    f"{service.url}/api/v1/review-queue/groups", params={"limit": "1000"}
                ).json()
                for group in answer["groups"]:
                    if any(t["turn_id"] == turn_id for t in group["turns"]):
                        return int(group["size"])
                return 1

            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--headless=new", "--no-sandbox"]
                )
                try:
                    with dashboard(before_tree, service.url, work / "before.log") as url:
                        page = browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
                        before = click_flow(page, url, args.items)
                        page.close()
                    withdrawn = withdraw_all(service)
                    print(f"withdrew the {withdrawn} labels of the click flow", file=sys.stderr)
                    with dashboard(ROOT, service.url, work / "after.log") as url:
                        page = browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
                        after = key_flow(page, url, args.items, group_size)
                        page.close()
                finally:
                    browser.close()
    for run in (before, after):
        print(json.dumps(run.summary()))
    ratio = statistics.mean(before.seconds) / statistics.mean(after.seconds)
    print(
        f"seconds per labelled item: before {statistics.mean(before.seconds):.2f} s "
        f"(click), after {statistics.mean(after.seconds):.2f} s (keyboard), "
        f"{ratio:.1f}x; per labelled turn {before.summary()['seconds_per_turn']} s vs "
        f"{after.summary()['seconds_per_turn']} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
