"""Fetch-type tool calls: what the session read, and which URLs it read them from.

A fetch (fetch_url, http_get, browse, visit_page, kb_read …) that succeeded is the
system's record that a page was read. Its arguments name what was read, so the URL it was
given is evidence that the URL exists and was read, even when the page text does not
repeat it. Search results are not fetches: a URL seen in a result list was never opened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from factledger.processors.evidence.outcomes import call_succeeded
from factledger.processors.model import ToolCall, Turn

_FETCH_TOOL = re.compile(
    r"fetch|http_get|get_url|browse|read_url|open_url|open_page|scrape|crawl|download|kb_read|"
    r"kb\.read|read_page|web_read|visit|curl|http\.get|get_page|load_url|read_source|retrieve",
    re.I,
)


def is_fetch(call: ToolCall) -> bool:
    return _FETCH_TOOL.search(call.name) is not None


def session_fetches(turn: Turn) -> tuple[ToolCall, ...]:
    """Successful fetch-type calls of the turn and of the conversation before it (another
    agent's page read earlier in a group chat included): evidence once read stays read."""
    calls: Iterable[ToolCall] = (*turn.history_tool_calls, *turn.executed_calls)
    return tuple(
        c
        for c in calls
        if c.origin == "structured" and not c.answer and is_fetch(c) and call_succeeded(c)
    )


def fetched_text(calls: Iterable[ToolCall]) -> str:
    """Arguments and results of the calls, lower-cased: what a citation is checked against."""
    return "\n".join(f"{c.arguments_text}\n{c.result or ''}" for c in calls).lower()


def fetched_arguments(turn: Turn) -> str:
    """The arguments of the session's successful fetches, lower-cased: the URLs read."""
    return "\n".join(c.arguments_text for c in session_fetches(turn)).lower()
