"""Which tool call backs a token, and which real identifier a fabricated one was compared
with.

A token is backed by a call when that call's result holds it, compared as the identifier
validators compare (`identifiers.is_grounded`, `codeish.name_grounded`): the turn's own
calls first, then those of earlier turns of the session, each in call order, the first
that holds it named. Only a call that succeeded backs anything: a failed call's text
("recipient rejected: x@partner.example") never backs the reply that claims it worked,
and the call that delivered the reply (`ToolCall.answer`) is the reply itself.

The nearest real identifier of a fabricated one is an identifier of the same shape in a
tool result (for a ticket or record key, of the same project prefix: `OPS-5680` for
`OPS-5707`), the one most like it character by character. It is what a reader compares
the fabricated token with; it grounds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import partial

from ..codeish import name_grounded
from ..identifiers import Identifier, Shape, extract_identifiers, is_grounded
from ..model import ResultToken, ToolCall, Turn
from .outcomes import call_succeeded

MAX_BACKINGS = 200
"""Backed identifiers kept per turn (a reply listing a thousand SHAs keeps the first)."""
MAX_CANDIDATES = 500
"""Identifiers of the tool results a fabricated token is compared with, at most."""
_PREFIX = re.compile(r"^[#]?[A-Za-z]*")


@dataclass(frozen=True)
class Backing:
    """An identifier of the reply at [start, end), and the call whose result holds it."""

    token: str
    start: int
    end: int
    tool: str
    call_id: str


def result_calls(turn: Turn) -> tuple[ToolCall, ...]:
    """The calls whose results are evidence, the turn's own first, in call order: those
    that returned a result and succeeded, without the one that delivered the reply."""
    return tuple(
        c
        for c in (*turn.tool_calls, *turn.history_tool_calls)
        if c.result is not None and not c.answer and call_succeeded(c)
    )


def backing_call(turn: Turn, holds: Callable[[str], bool]) -> ToolCall | None:
    """The first call of `result_calls` whose lower-cased result `holds`."""
    for call in result_calls(turn):
        if holds((call.result or "").lower()):
            return call
    return None


def name_source(name: str, turn: Turn) -> ResultToken | None:
    """A code name (file, path, function) as the first tool result that shows it."""
    call = backing_call(turn, partial(name_grounded, name))
    return None if call is None else ResultToken(name, call.name, call.call_id)


def identifier_backings(turn: Turn, identifiers: Iterable[Identifier]) -> tuple[Backing, ...]:
    """Each of `identifiers` (the reply's) that a tool result holds, with that call, in
    reply order, one per position, at most MAX_BACKINGS."""
    out: list[Backing] = []
    seen: set[tuple[int, int]] = set()
    for ident in sorted(identifiers, key=lambda i: (i.start, i.end)):
        if (ident.start, ident.end) in seen:
            continue
        call = backing_call(turn, partial(is_grounded, ident))
        if call is None:
            continue
        seen.add((ident.start, ident.end))
        out.append(Backing(ident.text, ident.start, ident.end, call.name, call.call_id))
        if len(out) >= MAX_BACKINGS:
            break
    return tuple(out)


class NearestReal:
    """The nearest real identifier of a fabricated one (see the module docstring). The
    tool results are read once, on the first question."""

    def __init__(self, turn: Turn) -> None:
        self._turn = turn
        self._candidates: Sequence[tuple[Identifier, ToolCall]] | None = None

    def __call__(self, fabricated: Identifier) -> ResultToken | None:
        wanted = fabricated.text.lower()
        prefix = _prefix(fabricated)
        best: tuple[float, Identifier, ToolCall] | None = None
        for ident, call in self._read():
            if ident.shape is not fabricated.shape or ident.text.lower() == wanted:
                continue
            if prefix is not None and _prefix(ident) != prefix:
                continue
            ratio = SequenceMatcher(None, wanted, ident.text.lower(), autojunk=False).ratio()
            if best is None or ratio > best[0]:
                best = (ratio, ident, call)
        if best is None:
            return None
        return ResultToken(best[1].text, best[2].name, best[2].call_id)

    def _read(self) -> Sequence[tuple[Identifier, ToolCall]]:
        if self._candidates is None:
            found: list[tuple[Identifier, ToolCall]] = []
            for call in result_calls(self._turn):
                for ident in extract_identifiers(call.result or ""):
                    found.append((ident, call))
                    if len(found) >= MAX_CANDIDATES:
                        break
                if len(found) >= MAX_CANDIDATES:
                    break
            self._candidates = found
        return self._candidates


def _prefix(ident: Identifier) -> str | None:
    """The project prefix of a key or record (`OPS` of `OPS-5707`, `#W` of `#W2378156`),
    which a near match must share; None for shapes compared whole."""
    if ident.shape not in (Shape.KEY, Shape.RECORD):
        return None
    m = _PREFIX.match(ident.text)
    return m.group().upper() if m else ""
