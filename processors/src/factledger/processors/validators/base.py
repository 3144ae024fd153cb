"""The validator seam: a named, versioned, pure callable from a turn to findings.

A validator reads only the `Turn` it is given: no I/O, clock, globals or mutation. An
empty result means clean. Findings carry no severity; the runner applies the configured
one, so re-grading a kind never touches a validator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..kinds import Kind
from ..model import Finding, Span, Turn


@runtime_checkable
class Validator(Protocol):
    """`name` is stable (settings refer to it); `version` changes when verdicts may change."""

    name: str
    version: str
    kinds: frozenset[Kind]

    def __call__(self, turn: Turn) -> Sequence[Finding]: ...


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
    checked_against: Sequence[str] = (),
    score: float | None = None,
    call_id: str | None = None,
) -> Finding:
    """Shorthand used by validators to build a finding stamped with their label."""
    return Finding(
        kind=kind,
        message=message,
        token=token,
        span=None if span is None else Span(*span),
        checked_against=tuple(checked_against),
        validator=label(validator),
        score=score,
        call_id=call_id,
    )
