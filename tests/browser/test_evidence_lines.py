"""Each finding kind's evidence line on a real turn page: the demo's scripted agents run
against their real tools, their turns go to a service of this module's own as OTLP, and
the dashboard shows, per kind, what the finding rests on: the failed call and its error,
the offered tools, where an argument could have come from, the fetches, the identifier
lookup. Green marks only what backs the reply. Each turn page is saved as a screenshot
(tests/browser/output/evidence-<kind>.png).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from factledger.demo import MODELS, SCENARIOS, AgentRun, Scenario, World, play
from factledger.processors.kinds import Kind
from factledger.replay import OtlpPipeline
from factledger.service_process import ServiceProcess
from tests.browser.conftest import dashboard_of, judged_turn, settled

NO_TRACEBACK = '[data-testid="stException"]'
FETCHED = "https://docs.acme.example/api/rate-limits"
CITED = "https://status.acme.example/incidents/2031"


def fetched_another_page(run: AgentRun, rng: Random) -> None:
    """Reads one page and cites another it never opened."""
    run.user("What are our API rate limits? Please cite the source.")
    run.step(None, ("fetch_url", {"url": FETCHED}))
    run.reply(f"Each API key may send 600 requests per minute.\n\nSources:\n- {CITED}")


@dataclass(frozen=True)
class Case:
    scenario: Scenario
    kind: Kind
    says: tuple[str, ...]
    """Fragments the kind's evidence line must hold."""
    against: str = ""
    """Text marked red in the tool calls (the finding's own evidence)."""
    badge: str = ""


def _scenario(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)


CASES = {
    "error-as-success": Case(
        _scenario("rejected_email"),
        Kind.ERROR_REPORTED_AS_SUCCESS,
        ("the reply says sent, but send_email (call_1) failed: Error: recipient rejected:",),
        against="Error: recipient rejected:",
    ),
    "unregistered-call": Case(
        _scenario("shell_exec"),
        Kind.UNREGISTERED_TOOL_CALL,
        (
            "shell_exec was called, but it is not among the offered tools; the tools offered: "
            "gh_list_commits, gh_put_file, list_files, read_file",
        ),
        badge="not offered",
    ),
    "ungrounded-argument": Case(
        _scenario("guessed_address"),
        Kind.UNGROUNDED_TOOL_ARGUMENT,
        (
            "send_email (call_1) sent to = ",
            "in neither the user request nor an earlier tool result, it came from nowhere",
        ),
        against=".ops@acme.example",
    ),
    "missing-argument": Case(
        _scenario("no_content"),
        Kind.MISSING_TOOL_ARGUMENTS,
        (
            "gh_put_file (call_1) was called without content, which its schema requires; "
            "it sent path, message; the tool answered Error: bad arguments",
        ),
        against="Error: bad arguments",
        badge="missing content",
    ),
    "citation-fetches": Case(
        Scenario("fetched_another_page", "support", fetched_another_page),
        Kind.UNFETCHED_CITATION,
        (
            f"the reply cites {CITED}; the fetches: fetch_url (call_1) → {FETCHED}; "
            "none retrieved it",
        ),
    ),
    "citation-search-only": Case(
        _scenario("snippet_source"),
        Kind.UNFETCHED_CITATION,
        (
            f"the reply cites {CITED}; no call of this session fetched a page",
            "listed in the result of web_search (call_1): seen, never opened",
        ),
    ),
    "fabricated-identifier": Case(
        _scenario("fabricated_ticket"),
        Kind.FABRICATED_IDENTIFIER,
        ("✗ in no tool result",),
    ),
    "borrowed-identifier": Case(
        _scenario("borrowed_sha"),
        Kind.BORROWED_IDENTIFIER,
        (
            "✗ in no tool result (in the user request), yet the reply presents it as a "
            "tool's output",
        ),
    ),
    "negated-identifier": Case(
        _scenario("not_defined"),
        Kind.NEGATED_EXISTING_IDENTIFIER,
        (
            "retry_with_backoff is in the result of read_file (call_1), yet the reply says it "
            "does not exist",
        ),
        against="retry_with_backoff",
    ),
    "cited-unregistered-tool": Case(
        _scenario("via_local_exec"),
        Kind.CITATION_UNREGISTERED_TOOL,
        ("the reply cites local_exec, which is not among the offered tools; the tools offered:",),
    ),
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, chromium: Path) -> Iterator[dict[str, Any]]:
    """A service of this module's own with one turn per case, sent as OTLP by the demo's
    instrumented agents; yields its URL and each case's judged turn."""
    with ServiceProcess(tmp_path_factory.mktemp("evidence-service")) as service:
        pipeline = OtlpPipeline(service.url, service_name="evidence-lines")
        world = World(Random(1))
        try:
            for n, (name, case) in enumerate(CASES.items()):
                play(world, case.scenario, MODELS[n % 3], Random(n), pipeline.tracer, name)
        finally:
            pipeline.close()
        turns = {name: judged_turn(service.url, name) for name in CASES}
        yield {"url": service.url, "turns": turns}


@pytest.fixture(scope="module")
def evidence_dashboard(
    judged: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    log_path = tmp_path_factory.mktemp("evidence-dashboard") / "streamlit.log"
    yield from dashboard_of(judged["url"], log_path)


@pytest.mark.parametrize("name", list(CASES))
def test_each_kind_shows_its_own_evidence(
    page: Page, judged: dict[str, Any], evidence_dashboard: str, screenshot: Any, name: str
):
    case = CASES[name]
    turn = judged["turns"][name]
    kinds = [f["kind"] for f in turn["findings"]]
    assert case.kind.value in kinds, f"the {name} turn was judged {kinds}"

    page.goto(f"{evidence_dashboard}/turns?turn_id={turn['turn_id']}")
    line = page.locator(f'.fl-evidence[data-kind="{case.kind.value}"]').first
    expect(line).to_be_visible()
    for fragment in case.says:
        expect(line).to_contain_text(fragment)
    if case.kind.value not in ("fabricated_identifier", "borrowed_identifier"):
        expect(line).not_to_contain_text("tool result ✗")
        expect(line).not_to_contain_text("in no tool result")
    if case.against:
        expect(page.locator("pre.fl-result mark.fl-against").first).to_contain_text(case.against)
    if case.badge:
        expect(page.locator(".fl-badge.fl-against").first).to_have_text(case.badge)
    settled(page)
    # nothing in these turns backs what the reply says: nothing may be green
    assert page.locator("mark.fl-backed, .fl-evidence .fl-backed").count() == 0
    assert page.locator(NO_TRACEBACK).count() == 0
    screenshot(f"evidence-{name}")
