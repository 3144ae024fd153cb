"""The validator seam: a named, versioned, pure callable from a turn to findings.

A validator reads only the `Turn` it is given: no I/O, clock, globals or mutation. An
empty result means clean. Findings carry no severity; the runner applies the configured
one, so re-grading a kind never touches a validator.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ..kinds import Kind
from ..model import Finding, ResultToken, TextRange, Turn


@runtime_checkable
class Validator(Protocol):
    """`name` is stable (settings refer to it); `version` changes when verdicts may change."""

    name: str
    version: str
    kinds: frozenset[Kind]

    def __call__(self, turn: Turn) -> Sequence[Finding]: ...


# A finding's `checked_note` when there was no tool to compare it with.
NO_TOOL_RESULTS = "no tool results"
NO_TOOL_CALLS = "no tool calls in this turn"
NO_SUCCESSFUL_CALL = "no successful tool call"
NO_TOOLS_OFFERED = "no tools offered"
NO_FETCH = "no fetch-type tool call"


def label(validator: Validator) -> str:
    """`name@version`, as recorded with every finding and verdict."""
    return f"{validator.name}@{validator.version}"


def finding(
    validator: Validator,
    kind: Kind,
    message: str,
    *,
    token: str = "",
    span: tuple[int, int] | None = None,
    checked_against: Iterable[str] = (),
    checked_note: str | None = None,
    nothing_checked: str | None = None,
    score: float | None = None,
    call_id: str | None = None,
    real: Iterable[ResultToken] = (),
) -> Finding:
    """Shorthand used by validators to build a finding stamped with their label.

    `checked_against` takes tool names (kept once each, in order); `nothing_checked` is
    the note when it holds none ("no tools offered").
    """
    tools = tuple(dict.fromkeys(checked_against))
    return Finding(
        kind=kind,
        message=message,
        token=token,
        span=None if span is None else TextRange(*span),
        checked_against=tools,
        checked_note=checked_note if tools else checked_note or nothing_checked,
        validator=label(validator),
        score=score,
        call_id=call_id,
        real=tuple(dict.fromkeys(real)),
    )
