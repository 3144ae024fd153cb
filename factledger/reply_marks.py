"""The reply as `factledger check` prints it: each finding's token marked in place and
numbered like the findings list below it. ANSI colours for a terminal, brackets for a
file or a pipe (`[[token]][1]`), so the marks survive where colours do not.

A finding is located by its token inside its character span (a claim's span is its whole
sentence, the token the verb that claims); without that, by its span; without a span, by
the token's first occurrence. Marks that overlap are merged into one carrying every
number and the strongest severity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factledger.processors.kinds import Severity
from factledger.processors.model import Finding

RESET = "\x1b[0m"
DIM = "\x1b[2m"
SEVERITY_STYLE = {
    Severity.REJECT: "\x1b[1;4;31m",  # bold, underlined, red
    Severity.FLAG: "\x1b[1;4;33m",  # bold, underlined, yellow
    Severity.INFO: "\x1b[4;36m",  # underlined, cyan
}
_RANK = {Severity.INFO: 0, Severity.FLAG: 1, Severity.REJECT: 2}


@dataclass(frozen=True)
class Mark:
    """reply[start:end] belongs to the findings numbered `numbers` (1-based)."""

    start: int
    end: int
    numbers: tuple[int, ...]
    severity: Severity


def locate(reply: str, finding: Finding) -> tuple[int, int] | None:
    """Where `finding` sits in `reply`, or None when neither its span nor its token is
    found there."""
    token = finding.token
    span = finding.span
    if span is not None and 0 <= span.start < span.end <= len(reply):
        if token:
            inside = reply.find(token, span.start, span.end)
            if inside >= 0:
                return inside, inside + len(token)
        return span.start, span.end
    if token:
        first = reply.find(token)
        if first >= 0:
            return first, first + len(token)
    return None


def in_reply_order(reply: str, findings: Sequence[Finding]) -> list[Finding]:
    """`findings` ordered by where they sit in `reply`; those not found there last."""
    end = len(reply) + 1

    def position(finding: Finding) -> tuple[int, int]:
        where = locate(reply, finding)
        return (end, end) if where is None else where

    return sorted(findings, key=position)


def marks(reply: str, findings: Sequence[Finding]) -> list[Mark]:
    """The merged, ordered marks of `findings` (numbered in the order given)."""
    located = []
    for number, finding in enumerate(findings, start=1):
        where = locate(reply, finding)
        if where is not None:
            located.append(Mark(where[0], where[1], (number,), finding.effective_severity))
    located.sort(key=lambda m: (m.start, m.end))
    merged: list[Mark] = []
    for mark in located:
        if merged and mark.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Mark(
                last.start,
                max(last.end, mark.end),
                tuple(sorted(last.numbers + mark.numbers)),
                max(last.severity, mark.severity, key=_RANK.__getitem__),
            )
        else:
            merged.append(mark)
    return merged


def render(reply: str, findings: Sequence[Finding], *, color: bool) -> str:
    """`reply` with every located finding marked."""
    pieces = []
    position = 0
    for mark in marks(reply, findings):
        label = ",".join(map(str, mark.numbers))
        text = reply[mark.start : mark.end]
        pieces.append(reply[position : mark.start])
        if color:
            pieces.append(f"{SEVERITY_STYLE[mark.severity]}{text}{RESET}{DIM}[{label}]{RESET}")
        else:
            pieces.append(f"[[{text}]][{label}]")
        position = mark.end
    pieces.append(reply[position:])
    return "".join(pieces)


def severity_text(severity: Severity, *, color: bool) -> str:
    """A severity as the findings list shows it."""
    if not color:
        return severity.value
    return f"{SEVERITY_STYLE[severity]}{severity.value}{RESET}"
