"""Citations of tools and of sources."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.transcripts import Call, chat, kinds_of

TOOLS = ["read_file", "grep", "memory_write", "web_search", "fetch_url"]

UNREGISTERED = [
    pytest.param(chat("Verified with grep (via local_exec).", tools=TOOLS), id="via-local-exec"),
    pytest.param(
        chat("I used the shell_run tool to list the files.", tools=TOOLS), id="used-the-x-tool"
    ),
    pytest.param(chat("My db_query call returned three rows.", tools=TOOLS), id="my-x-call"),
    pytest.param(chat("Ich habe das mit dem `kube_ctl`-Tool geprüft.", tools=TOOLS), id="german"),
    pytest.param(chat("我调用了 deploy_service 工具。", tools=TOOLS), id="chinese"),
]
UNCALLED = [
    pytest.param(chat("Noted (via memory_write).", tools=TOOLS), id="via-memory-write"),
    pytest.param(
        chat("I used read_file to confirm it.", tools=TOOLS), id="used-offered-not-called"
    ),
    pytest.param(
        chat("My fetch_url call shows the page.", calls=[Call("read_file")], tools=TOOLS),
        id="other-tool-called",
    ),
    pytest.param(chat("Found it (via `grep`).", tools=TOOLS), id="backticked"),
]
TOOL_TRAPS = [
    pytest.param(
        chat("Found it (via grep).", calls=[Call("grep", {"q": "x"})], tools=TOOLS), id="called"
    ),
    pytest.param(chat("I used Python and a bit of regex.", tools=TOOLS), id="plain-words"),
    pytest.param(chat("I'll contact you (via email) tomorrow.", tools=TOOLS), id="via-email"),
    pytest.param(chat("You can use the read_file tool to inspect it.", tools=TOOLS), id="advice"),
    pytest.param(
        chat("Smartwatch (from order #W7553978) is delivered.", tools=TOOLS), id="from-order"
    ),
    pytest.param(
        chat("Checked (via functions.read_file).", calls=[Call("read_file")], tools=TOOLS),
        id="namespaced-and-called",
    ),
    pytest.param(chat("I used the search to find nothing.", tools=TOOLS), id="generic-name"),
    pytest.param(
        chat("Confirmed (via grep).", calls=[Call("grep")], tools=TOOLS), id="called-grep"
    ),
    pytest.param(chat("Nothing to report; no tool was needed.", tools=TOOLS), id="no-citation"),
]


@pytest.mark.parametrize("transcript", UNREGISTERED)
def test_citation_unregistered_tool(transcript: dict[str, Any]) -> None:
    assert "citation_unregistered_tool" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", UNCALLED)
def test_citation_uncalled_tool(transcript: dict[str, Any]) -> None:
    found = kinds_of(transcript)
    assert "citation_uncalled_tool" in found
    assert "citation_unregistered_tool" not in found


@pytest.mark.parametrize("transcript", TOOL_TRAPS)
def test_tool_citation_traps(transcript: dict[str, Any]) -> None:
    found = kinds_of(transcript)
    assert "citation_uncalled_tool" not in found
    assert "citation_unregistered_tool" not in found


PAGE = "https://docs.example.org/guide/limits"
SEARCH_RESULT = f'[{{"title": "Limits", "url": "{PAGE}", "snippet": "The limit is 10."}}]'

UNFETCHED = [
    pytest.param(chat(f"The limit is 10.\n\nSources:\n- {PAGE}", tools=TOOLS), id="never-fetched"),
    pytest.param(
        chat(
            f"The limit is 10 [1].\n\n[1] {PAGE}",
            calls=[Call("web_search", {"q": "limit"}, result=SEARCH_RESULT)],
            tools=TOOLS,
        ),
        id="search-result-is-not-evidence",
    ),
    pytest.param(chat(f"According to {PAGE}, the limit is 10.", tools=TOOLS), id="according-to"),
    pytest.param(
        chat("Quellen: https://example.net/report/2026.pdf", tools=TOOLS), id="german-quellen"
    ),
    pytest.param(
        chat(
            "The summary relies on src_003.",
            calls=[Call("fetch_url", {"url": "a"}, result="src_001")],
            tools=TOOLS,
        ),
        id="unknown-source-id",
    ),
]
FETCHED = [
    pytest.param(
        chat(
            f"The limit is 10.\n\nSources:\n- {PAGE}",
            calls=[Call("fetch_url", {"url": PAGE}, result="<html>limit 10</html>")],
            tools=TOOLS,
        ),
        id="fetched",
    ),
    pytest.param(
        chat(
            "See src_001 for the figure.",
            calls=[Call("fetch_url", {"url": PAGE}, result='{"source_id": "src_001"}')],
            tools=TOOLS,
        ),
        id="source-id-of-fetched-snapshot",
    ),
    pytest.param(
        chat(
            "Your pull request: https://github.com/o/r/pull/9",
            calls=[Call("create_pr", result="https://github.com/o/r/pull/9")],
        ),
        id="link-to-created-thing-is-not-a-citation",
    ),
    pytest.param(
        chat("No sources were needed for this arithmetic: 2 + 2 = 4.", tools=TOOLS), id="no-url"
    ),
    pytest.param(
        chat(
            f"Sources:\n- {PAGE}/",
            calls=[Call("fetch_url", {"url": PAGE}, result="ok")],
            tools=TOOLS,
        ),
        id="trailing-slash",
    ),
]


@pytest.mark.parametrize("transcript", UNFETCHED)
def test_unfetched_citation(transcript: dict[str, Any]) -> None:
    assert "unfetched_citation" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", FETCHED)
def test_fetched_or_not_a_citation(transcript: dict[str, Any]) -> None:
    assert "unfetched_citation" not in kinds_of(transcript)
