"""Evidence snapshots of a turn's document reads, and the citations they back."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from factledger.processors.evidence.snapshots import (
    CitationBacking,
    Snapshot,
    citation_backing,
    document_snapshots,
    normalized_address,
    read_address,
)
from factledger.processors.model import ToolCall, Turn

PAGE = "https://docs.example.org/limits"
TEXT = "Rate limits: 10 requests per second per key."
T0_NS = 1_767_000_000_000_000_000


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def call(name: str, arguments: dict[str, Any], result: str | None = TEXT, **kw: Any) -> ToolCall:
    return ToolCall(
        name=name,
        call_id=kw.pop("call_id", f"call_{name}"),
        arguments=arguments,
        arguments_text=json.dumps(arguments),
        result=result,
        **kw,
    )


def turn(*calls: ToolCall, reply: str = "Done.") -> Turn:
    return Turn(reply=reply, tool_calls=calls, turn_id="turn-1", trace_id="trace-1")


FETCH_SHAPES = [
    pytest.param(call("fetch_url", {"url": PAGE}), PAGE, id="fetch-url"),
    pytest.param(call("http_get", {"URL": PAGE}), PAGE, id="http-get-upper-key"),
    pytest.param(call("browse", {"href": PAGE, "wait": 2}), PAGE, id="browse-href"),
    pytest.param(call("web.fetch", {"request": {"url": PAGE}}), PAGE, id="nested-url"),
    pytest.param(call("kb_read", {"source_id": "src_012"}), "src_012", id="kb-read-source-id"),
    pytest.param(call("read_file", {"path": "docs/limits.md"}), "docs/limits.md", id="read-file"),
    pytest.param(call("visit_page", {"target": PAGE}), PAGE, id="only-string-argument"),
    pytest.param(call("retrieve", {"count": 3}), "", id="nothing-named"),
]


@pytest.mark.parametrize(("fetch", "address"), FETCH_SHAPES)
def test_a_successful_document_read_is_one_snapshot(fetch: ToolCall, address: str) -> None:
    (snapshot,) = document_snapshots(turn(fetch), fetched_at_ns=T0_NS)
    assert snapshot == Snapshot(
        hash=sha(TEXT),
        url_or_path=address,
        tool=fetch.name,
        call_id=fetch.call_id,
        turn_id="turn-1",
        trace_id="trace-1",
        fetched_at_ns=T0_NS,
        size=len(TEXT.encode()),
        content=TEXT,
    )


def test_size_counts_utf8_bytes_and_the_hash_is_of_the_text_as_returned() -> None:
    text = "Grüße, 世界\n"
    (snapshot,) = document_snapshots(turn(call("fetch_url", {"url": PAGE}, text)))
    assert snapshot.size == 16 != len(text)
    assert snapshot.hash == sha(text)


def test_the_same_document_fetched_twice_is_one_snapshot_named_by_the_first_call() -> None:
    first = call("fetch_url", {"url": PAGE}, call_id="call_1")
    again = call("fetch_url", {"url": PAGE + "/"}, call_id="call_2")
    other = call("fetch_url", {"url": PAGE + "/2"}, "Another page.", call_id="call_3")
    snapshots = document_snapshots(turn(first, again, other))
    assert [(s.call_id, s.hash) for s in snapshots] == [
        ("call_1", sha(TEXT)),
        ("call_3", sha("Another page.")),
    ]


RETRIEVED_NOTHING = [
    pytest.param(call("fetch_url", {"url": PAGE}, error=True), id="span-error"),
    pytest.param(
        call("fetch_url", {"url": PAGE}, '{"ok": false, "error": "timeout"}'), id="ok-false"
    ),
    pytest.param(call("fetch_url", {"url": PAGE}, "HTTP 404 Not Found"), id="http-404"),
    pytest.param(call("fetch_url", {"url": PAGE}, None), id="no-result"),
    pytest.param(call("fetch_url", {"url": PAGE}, ""), id="empty-result"),
    pytest.param(call("web_search", {"query": "rate limits"}), id="search-is-no-read"),
    pytest.param(call("fetch_url", {"url": PAGE}, origin="prose"), id="written-out-call"),
    pytest.param(call("final_answer", {"url": PAGE}, answer=True), id="answer-call"),
]


@pytest.mark.parametrize("attempt", RETRIEVED_NOTHING)
def test_a_call_that_read_nothing_is_no_snapshot(attempt: ToolCall) -> None:
    assert document_snapshots(turn(attempt)) == ()


def test_reads_of_earlier_turns_are_their_own_turns_snapshots() -> None:
    earlier = Turn(
        reply="See the page.",
        history_tool_calls=(call("fetch_url", {"url": PAGE}),),
    )
    assert document_snapshots(earlier) == ()


@pytest.mark.parametrize(
    ("cited", "expected"),
    [
        pytest.param(PAGE, PAGE, id="same"),
        pytest.param(PAGE + "/", PAGE, id="trailing-slash"),
        pytest.param(PAGE + "#burst", PAGE, id="fragment"),
        pytest.param("HTTPS://Docs.Example.org/limits/#x", PAGE, id="case-slash-fragment"),
        pytest.param(PAGE + ".", PAGE, id="sentence-stop"),
    ],
)
def test_normalized_address(cited: str, expected: str) -> None:
    assert normalized_address(cited) == normalized_address(expected) == expected


def test_read_address_prefers_an_address_key_over_other_strings() -> None:
    fetch = call("fetch_url", {"format": "markdown", "url": PAGE})
    assert read_address(fetch) == PAGE


BACKING = [
    pytest.param(f"The limit is 10.\n\nSources:\n- {PAGE}", PAGE, True, id="backed"),
    pytest.param(f"The limit is 10.\n\nSources:\n- {PAGE}/", PAGE + "/", True, id="slash"),
    pytest.param(
        f"The limit is 10 (according to {PAGE}#burst).", PAGE + "#burst", True, id="fragment"
    ),
    pytest.param(
        "The limit is 10.\n\nSources:\n- https://docs.example.org/quotas",
        "https://docs.example.org/quotas",
        False,
        id="unbacked",
    ),
    pytest.param(
        f"The limit is 10.\n\nSources:\n- {PAGE}/v2", PAGE + "/v2", False, id="deeper-path"
    ),
]


@pytest.mark.parametrize(("reply", "cited", "backed"), BACKING)
def test_a_citation_maps_to_the_snapshot_of_the_read_of_its_address(
    reply: str, cited: str, backed: bool
) -> None:
    judged = turn(call("fetch_url", {"url": PAGE}), reply=reply)
    snapshots = document_snapshots(judged)
    start = reply.index(cited)
    assert citation_backing(judged, snapshots) == (
        CitationBacking(cited, start, start + len(cited), sha(TEXT) if backed else None),
    )


def test_backed_and_unbacked_citations_in_reply_order() -> None:
    reply = (
        "The limit is 10 [1] and bursts are capped [2].\n\n"
        f"[1] {PAGE}\n[2] https://docs.example.org/bursts\nsrc_012"
    )
    judged = turn(
        call("fetch_url", {"url": PAGE}),
        call("kb_read", {"source_id": "src_012"}, "Bursts: 20."),
        call("web_search", {"q": "bursts"}, "https://docs.example.org/bursts - Bursts"),
        reply=reply,
    )
    backing = citation_backing(judged, document_snapshots(judged))
    assert [(b.cited, b.snapshot_hash) for b in backing] == [
        (PAGE, sha(TEXT)),
        ("https://docs.example.org/bursts", None),
        ("src_012", sha("Bursts: 20.")),
    ]
    assert all(reply[b.start : b.end] == b.cited for b in backing)


def test_a_reply_without_citations_maps_nothing() -> None:
    judged = turn(call("fetch_url", {"url": PAGE}), reply="The limit is 10.")
    assert citation_backing(judged, document_snapshots(judged)) == ()
