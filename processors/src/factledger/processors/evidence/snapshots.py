"""Evidence snapshots: the documents the turn's tools retrieved, and the citations they back.

A successful fetch-type call (`processors.evidence.fetches`) or file read is the system's
record that a document was read; its result is the document as the tool returned it. A
snapshot keeps that record once per content: the SHA-256 of the result text (UTF-8), where
it came from (the URL or path argument of the call) and which call made it. A citation of
the reply (a URL or source id the citations validator treats as cited) is backed by the
snapshot of a call that read the cited address, compared as `normalized_address` says, and
by nothing else: a search result that shows a URL is no snapshot of it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import ToolCall, Turn
from ..validators.citations import cited_sources
from .fetches import is_fetch
from .outcomes import call_succeeded

# Reads of a file or document by path: evidence of its content as much as a page fetch.
_READ_TOOL = re.compile(
    r"read_file|file_read|read_text_file|open_file|view_file|get_file|file_contents|"
    r"read_document|get_document|read_multiple_files",
    re.I,
)
# Arguments that name what was read, in order of preference.
_ADDRESS_KEYS = (
    "url",
    "uri",
    "href",
    "link",
    "page",
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "source",
    "source_id",
    "id",
)
_URL = re.compile(r"https?://[^\s\"'<>\\]+", re.I)


@dataclass(frozen=True)
class Snapshot:
    """One document a tool of the turn retrieved. `hash` is the SHA-256 (hex) of `content`
    encoded as UTF-8, `size` its length in bytes; `url_or_path` is what the call was asked
    to read ("" when its arguments name nothing); `fetched_at_ns` is the turn's start."""

    hash: str
    url_or_path: str
    tool: str
    call_id: str
    turn_id: str
    trace_id: str
    fetched_at_ns: int
    size: int
    content: str


@dataclass(frozen=True)
class CitationBacking:
    """One source the reply cites, at [start, end) in the reply, and the hash of the
    snapshot that backs it (None: no document of the turn was read from that address)."""

    cited: str
    start: int
    end: int
    snapshot_hash: str | None


def is_document_read(call: ToolCall) -> bool:
    """A call that reads a document: a fetch (page, URL, knowledge base) or a file read."""
    return is_fetch(call) or _READ_TOOL.search(call.name) is not None


def document_snapshots(turn: Turn, *, fetched_at_ns: int = 0) -> tuple[Snapshot, ...]:
    """The snapshots of the turn's successful document reads, once per content hash (the
    first call that read it names it), in call order. A failed read, one without a result
    and one with an empty result retrieved nothing."""
    seen: set[str] = set()
    out: list[Snapshot] = []
    for call in turn.executed_calls:
        if not call.result or not is_document_read(call) or not call_succeeded(call):
            continue
        data = call.result.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        out.append(
            Snapshot(
                hash=digest,
                url_or_path=read_address(call),
                tool=call.name,
                call_id=call.call_id,
                turn_id=turn.turn_id,
                trace_id=turn.trace_id,
                fetched_at_ns=fetched_at_ns,
                size=len(data),
                content=call.result,
            )
        )
    return tuple(out)


def read_address(call: ToolCall) -> str:
    """What the call was asked to read: the first argument named like an address
    (`_ADDRESS_KEYS`), else the first URL in its arguments' text, else its only string
    argument; "" when none of these is there."""
    strings = _string_arguments(call.arguments)
    lowered = {key.lower(): value for key, value in strings}
    for key in _ADDRESS_KEYS:
        if lowered.get(key, "").strip():
            return lowered[key].strip()
    if match := _URL.search(call.arguments_text):
        return match.group()  # nested arguments too: {"request": {"url": ...}}
    return strings[0][1].strip() if len(strings) == 1 else ""


def _string_arguments(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), v) for k, v in arguments.items() if isinstance(v, str)]


def normalized_address(address: str) -> str:
    """An address as citations are compared: lower-cased like the citations validator
    compares them, without a fragment (`#section` names a place in the same document)
    and without trailing slashes or sentence punctuation."""
    text = address.strip().lower().split("#", 1)[0]
    return text.rstrip(".,;:!?").rstrip("/")


def citation_backing(turn: Turn, snapshots: Sequence[Snapshot]) -> tuple[CitationBacking, ...]:
    """Every source the reply cites, in reply order, with the snapshot that backs it."""
    by_address = _by_address(snapshots)
    return tuple(
        CitationBacking(token, start, end, by_address.get(normalized_address(token)))
        for token, start, end, _ in sorted(cited_sources(turn), key=lambda c: c[1])
    )


def _by_address(snapshots: Iterable[Snapshot]) -> dict[str, str]:
    out: dict[str, str] = {}
    for snapshot in snapshots:
        if snapshot.url_or_path:
            out.setdefault(normalized_address(snapshot.url_or_path), snapshot.hash)
    return out
