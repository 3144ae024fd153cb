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


NOT_OWN_USE = [
    pytest.param(
        chat(
            "Instead of using the `perform_web_search` function, paste the poem here.", tools=TOOLS
        ),
        id="instead-of-using-x",
    ),
    pytest.param(
        chat("Rather than the shell_run tool, I read the file directly.", tools=TOOLS),
        id="rather-than-x",
    ),
    pytest.param(
        chat(
            "It computes each distance using the `geodesic` function from `geopy.distance`.",
            tools=TOOLS,
        ),
        id="library-function-named-in-prose",
    ),
    pytest.param(
        chat("```python\n# found it (via local_exec)\nprint(1)\n```", tools=TOOLS),
        id="name-inside-code",
    ),
]
STILL_CITED = [
    pytest.param(
        chat("I computed the distance using the geodesic_calc tool.", tools=TOOLS),
        id="using-the-x-tool",
    ),
    pytest.param(chat("Distances checked (via geodesic).", tools=TOOLS), id="via-x"),
    pytest.param(
        chat("I called the `geodesic` function to get 3,941 km.", tools=TOOLS),
        id="i-called-the-x-function",
    ),
    pytest.param(
        chat("I ran the search using the `fetch_url` function.", tools=TOOLS),
        id="using-an-offered-tool-named-function",
    ),
]


@pytest.mark.parametrize("transcript", NOT_OWN_USE)
def test_contrast_library_functions_and_code_cite_no_tool(transcript: dict[str, Any]) -> None:
    found = kinds_of(transcript)
    assert "citation_uncalled_tool" not in found
    assert "citation_unregistered_tool" not in found


@pytest.mark.parametrize("transcript", STILL_CITED)
def test_the_agents_own_call_is_still_a_citation(transcript: dict[str, Any]) -> None:
    found = kinds_of(transcript)
    assert {"citation_uncalled_tool", "citation_unregistered_tool"} & set(found)


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


EARLIER_SEARCH: list[dict[str, Any]] = [
    {"role": "user", "content": "find the limits page"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "h1",
                "type": "function",
                "function": {"name": "web_search", "arguments": '{"q": "limits"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "h1", "content": SEARCH_RESULT},
    {"role": "assistant", "content": "I found a page about limits."},
]
EARLIER_FETCH: list[dict[str, Any]] = [
    {"role": "user", "content": "read the limits page"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "h1",
                "type": "function",
                "function": {"name": "fetch_url", "arguments": f'{{"url": "{PAGE}"}}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "h1", "content": "<html>The limit is 10.</html>"},
    {"role": "assistant", "content": "I read it."},
]
SESSION_EVIDENCE = [
    pytest.param(
        chat(f"The limit is 10.\n\nSources:\n- {PAGE}", history=EARLIER_FETCH, tools=TOOLS),
        id="fetched-in-an-earlier-turn",
    ),
    pytest.param(
        chat(
            f"Here are the results:\n1. [Limits]({PAGE})\n\nI'll open the first one next.",
            history=EARLIER_SEARCH,
            tools=TOOLS,
        ),
        id="link-list-relays-an-earlier-search",
    ),
    pytest.param(
        chat(
            f"Useful results:\n1. {PAGE}",
            calls=[Call("web_search", {"q": "limit"}, result=SEARCH_RESULT)],
            tools=TOOLS,
        ),
        id="link-list-relays-this-turns-search",
    ),
    pytest.param(
        chat(f"1. Go to the [limits page]({PAGE}).\n2. Read the table.", tools=TOOLS),
        id="how-to-link-is-a-place-to-go",
    ),
    pytest.param(
        chat(f'```python\n# the cited page\nurl = "{PAGE}"\n```', tools=TOOLS),
        id="url-in-code",
    ),
]
SEARCH_ONLY_CITATIONS = [
    pytest.param(
        chat(f"According to {PAGE}, the limit is 10.", history=EARLIER_SEARCH, tools=TOOLS),
        id="according-to-an-earlier-search-result",
    ),
    pytest.param(
        chat(
            f"The limit is 10 [1].\n\n1. {PAGE}",
            calls=[Call("web_search", {"q": "limit"}, result=SEARCH_RESULT)],
            tools=TOOLS,
        ),
        id="numbered-endnote-with-its-marker",
    ),
    pytest.param(
        chat(
            f"The limit is 10.\n\nSources:\n1. {PAGE}",
            calls=[Call("web_search", {"q": "limit"}, result=SEARCH_RESULT)],
            tools=TOOLS,
        ),
        id="sources-heading-over-a-numbered-list",
    ),
    pytest.param(
        chat("Useful results:\n1. https://docs.example.org/guide/quotas", tools=TOOLS),
        id="link-list-no-tool-showed",
    ),
]


@pytest.mark.parametrize("transcript", SESSION_EVIDENCE)
def test_session_fetches_relayed_links_and_places_to_go(transcript: dict[str, Any]) -> None:
    assert "unfetched_citation" not in kinds_of(transcript)


@pytest.mark.parametrize("transcript", SEARCH_ONLY_CITATIONS)
def test_a_search_result_cited_for_content_is_still_unfetched(
    transcript: dict[str, Any],
) -> None:
    assert "unfetched_citation" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", UNFETCHED)
def test_unfetched_citation(transcript: dict[str, Any]) -> None:
    assert "unfetched_citation" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", FETCHED)
def test_fetched_or_not_a_citation(transcript: dict[str, Any]) -> None:
    assert "unfetched_citation" not in kinds_of(transcript)
