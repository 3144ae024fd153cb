"""Which tool call backs a token, and which real identifier a fabricated one was compared
with.

A token is backed by a call when that call's result holds it, compared as the identifier
validators compare (`identifiers.is_grounded`, `codeish.name_grounded`): the turn's own
calls first, then those of earlier turns of the session, each in call order, the first
that holds it named. Only a call that succeeded backs anything: a failed call's text
("recipient rejected: x@partner.example") never backs the reply that claims it worked,
and the call that delivered the reply (`ToolCall.answer`) is the reply itself.

The nearest real identifier of a fabricated one is an identifier of the same shape in a
tool result, the closest by a measure cheap enough to run over every fabricated token: for
a ticket or record key, one of the same project prefix whose number is closest
(`OPS-5680` for `OPS-5707`); for a SHA, the longest shared leading run; for a URL, an
e-mail or a UUID, the most characters in common (`difflib`), pruned by its upper bounds.
Ties go to the first in call order. It is what a reader compares the fabricated token
with; it grounds nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import partial

from ..codeish import name_grounded
from ..identifiers import Identifier, Shape, identifiers_of_shape, is_grounded
from ..model import ResultToken, ToolCall, Turn
from .outcomes import call_succeeded

MAX_BACKINGS = 200
"""Backed identifiers kept per turn (a reply listing a thousand SHAs keeps the first)."""
MAX_CANDIDATES = 500
"""Identifiers of the tool results a fabricated token is compared with, at most (per
shape)."""
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
    return tuple(call for call, _ in turn.derived(_lowered_results))


def _lowered_results(turn: Turn) -> tuple[tuple[ToolCall, str], ...]:
    # Every backed token asks every call: the results are lower-cased once per turn.
    return tuple(
        (c, c.result.lower())
        for c in (*turn.tool_calls, *turn.history_tool_calls)
        if c.result is not None and not c.answer and call_succeeded(c)
    )


def backing_call(turn: Turn, holds: Callable[[str], bool]) -> ToolCall | None:
    """The first call of `result_calls` whose lower-cased result `holds`."""
    for call, lowered in turn.derived(_lowered_results):
        if holds(lowered):
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
        # The joined record is read once per turn; a token it lacks no single call holds.
        if (ident.start, ident.end) in seen or not is_grounded(ident, turn.evidence_lower):
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
    tool results are read for a shape on the first question about one of that shape, each
    distinct identifier kept with the first call that returned it."""

    def __init__(self, turn: Turn) -> None:
        self._turn = turn
        self._candidates: dict[Shape, Sequence[tuple[Identifier, ToolCall]]] = {}

    def __call__(self, fabricated: Identifier) -> ResultToken | None:
        wanted = fabricated.text.lower()
        prefix = _prefix(fabricated)
        best: tuple[float, Identifier, ToolCall] | None = None
        for ident, call in self._read(fabricated.shape):
            if ident.text.lower() == wanted:
                continue
            if prefix is not None and _prefix(ident) != prefix:
                continue
            floor = -math.inf if best is None else best[0]
            score = _likeness(fabricated.shape, wanted, ident.text.lower(), floor)
            if score > floor:
                best = (score, ident, call)
        if best is None:
            return None
        return ResultToken(best[1].text, best[2].name, best[2].call_id)

    def _read(self, shape: Shape) -> Sequence[tuple[Identifier, ToolCall]]:
        candidates = self._candidates.get(shape)
        if candidates is None:
            candidates = self._candidates[shape] = _result_identifiers(self._turn, shape)
        return candidates


def _result_identifiers(turn: Turn, shape: Shape) -> tuple[tuple[Identifier, ToolCall], ...]:
    """Each distinct identifier of `shape` in the tool results (at most MAX_CANDIDATES),
    with the first call that returned it."""
    found: dict[str, tuple[Identifier, ToolCall]] = {}
    for call in result_calls(turn):
        for ident in identifiers_of_shape(call.result or "", shape):
            found.setdefault(ident.text.lower(), (ident, call))
            if len(found) >= MAX_CANDIDATES:
                return tuple(found.values())
    return tuple(found.values())


_DIGITS = re.compile(r"\d+")


def _likeness(shape: Shape, wanted: str, other: str, floor: float) -> float:
    """How like `wanted` (lower-cased) `other` is, higher is nearer; a score at or below
    `floor` (the best so far) may be returned without the full comparison."""
    if shape in (Shape.KEY, Shape.RECORD):
        a, b = _number(wanted), _number(other)
        return -float(abs(a - b)) if a is not None and b is not None else -math.inf
    if shape is Shape.SHA:
        shared = 0
        for x, y in zip(wanted, other, strict=False):
            if x != y:
                break
            shared += 1
        return float(shared)
    matcher = SequenceMatcher(None, wanted, other, autojunk=False)
    if matcher.real_quick_ratio() <= floor or matcher.quick_ratio() <= floor:
        return floor
    return matcher.ratio()


def _number(key: str) -> int | None:
    """The digits of a key or record as one number (`20261127004` of `CT-20261127-004`)."""
    digits = "".join(_DIGITS.findall(key))[:18]
    return int(digits) if digits else None


def _prefix(ident: Identifier) -> str | None:
    """The project prefix of a key or record (`OPS` of `OPS-5707`, `#W` of `#W2378156`),
    which a near match must share; None for shapes compared whole."""
    if ident.shape not in (Shape.KEY, Shape.RECORD):
        return None
    m = _PREFIX.match(ident.text)
    return m.group().upper() if m else ""
