"""HTML for a reply with its findings marked, and for tool results with the findings'
tokens marked. Pure functions of strings; every piece of text is HTML-escaped, so a
reply or a tool result can never inject markup into the page.

A finding is located by its character offsets in the reply (`span`); one without
offsets is located by its token wherever the token occurs (at most MAX_MARKS_PER_TOKEN
times). Overlapping findings split the text into segments; a segment covered by several
findings carries every kind's class, and each finding's label follows its last segment.

In a tool payload, text is marked in the tone of the evidence it is (`evidence.Tone`):
green `fl-backed` only where it backs what the reply says, red `fl-against` where it is
what a finding rests on, amber `fl-seen` where the token merely shows up.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from factledger.dashboard.evidence import Tone
from factledger.processors.kinds import KIND_INFO, HallucinationClass, Kind

MAX_MARKS_PER_TOKEN = 20
MAX_TOKEN_CHARS = 500
"""Longer tokens (a whole paragraph quoted as evidence) are not searched for."""

SEVERITY_RANK = {"reject": 2, "flag": 1, "info": 0}

# One colour per hallucination class, so kinds of one class read as one family.
_CLASS_COLOURS: Mapping[HallucinationClass | Literal["-"], str] = {
    "1": "#f8b4b4",
    "2": "#f9c6a0",
    "3": "#fbd38d",
    "4": "#d6bcfa",
    "4b": "#fde68a",
    "5": "#bee3f8",
    "mirror": "#fbb6ce",
    "citation": "#b2f5ea",
    "stall": "#e2e8f0",
    "-": "#edf2f7",
}
_FALLBACK_COLOUR = "#e2e8f0"


@dataclass(frozen=True)
class Mark:
    """One located finding: reply[start:end] is marked with `kind`."""

    start: int
    end: int
    kind: str
    severity: str
    message: str


def css_class(kind: str) -> str:
    """The CSS class of a kind: `fl-kind-<kind>`, reduced to safe characters."""
    return "fl-kind-" + re.sub(r"[^a-z0-9_-]", "-", kind.lower())


def kind_label(kind: str) -> str:
    """How a kind reads on the page: `fabricated_identifier` -> `fabricated identifier`."""
    return kind.replace("_", " ")


def stylesheet() -> str:
    """The <style> block the highlighting relies on (one rule per known kind)."""
    rules = [
        ".fl-reply, .fl-result { white-space: pre-wrap; word-break: break-word;"
        " font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.86rem;"
        " line-height: 1.55; border-radius: 0.5rem; padding: 0.75rem 0.9rem; margin: 0; }",
        ".fl-reply { background: #fffdf7; border: 1px solid #e9e3cf; }",
        ".fl-result { background: #f7f8fa; border: 1px solid #e3e6ea; max-height: 16rem;"
        " overflow: auto; }",
        ".fl-result.fl-error { background: #fff5f5; border-color: #feb2b2; }",
        ".fl-mark { border-radius: 0.25rem; padding: 0 0.15rem; color: inherit; }",
        ".fl-mark.fl-sev-reject { outline: 1.5px solid #c53030; }",
        ".fl-mark.fl-sev-flag { outline: 1.5px dashed #b7791f; }",
        ".fl-label { font-family: system-ui, sans-serif; font-size: 0.68rem; font-weight: 600;"
        " border-radius: 0.6rem; padding: 0.05rem 0.4rem; margin: 0 0.2rem; white-space: nowrap;"
        " vertical-align: 0.12rem; }",
        ".fl-tone { border-radius: 0.25rem; padding: 0 0.1rem; color: inherit; }",
        "mark.fl-backed { background: #9ae6b4; }",
        "mark.fl-against { background: #feb2b2; outline: 1px solid #c53030; }",
        "mark.fl-seen { background: #fefcbf; outline: 1px dashed #b7791f; }",
        ".fl-part.fl-backed { color: #276749; font-weight: 600; }",
        ".fl-part.fl-against { color: #c53030; font-weight: 600; }",
        ".fl-part.fl-seen { color: #975a16; }",
        "code.fl-part.fl-backed { background: #c6f6d5; }",
        "code.fl-part.fl-against { background: #fed7d7; }",
        "code.fl-part.fl-seen { background: #fefcbf; }",
        ".fl-badge { display: inline-block; font-size: 0.75rem; font-weight: 600;"
        " border-radius: 0.7rem; padding: 0.05rem 0.5rem; margin-right: 0.4rem; }",
        ".fl-badge.fl-against { background: #fed7d7; color: #9b2c2c; }",
        ".fl-badge.fl-backed { background: #c6f6d5; color: #22543d; }",
        ".fl-badge.fl-seen { background: #fefcbf; color: #744210; }",
    ]
    for kind in Kind:
        colour = _CLASS_COLOURS.get(KIND_INFO[kind].hallucination_class, _FALLBACK_COLOUR)
        cls = css_class(kind.value)
        rules.append(f".fl-mark.{cls}, .fl-label.{cls} {{ background: {colour}; }}")
    return "<style>\n" + "\n".join(rules) + "\n</style>"


def locate(reply: str, findings: Iterable[Mapping[str, Any]]) -> list[Mark]:
    """Where each finding sits in `reply`: its offsets when it has valid ones, else every
    occurrence of its token. Findings with neither are not located."""
    marks: list[Mark] = []
    for finding in findings:
        kind = str(finding.get("kind", ""))
        severity = str(finding.get("severity", ""))
        message = str(finding.get("message", ""))
        span = finding.get("span")
        if span and 0 <= int(span[0]) < int(span[1]) <= len(reply):
            marks.append(Mark(int(span[0]), int(span[1]), kind, severity, message))
            continue
        token = str(finding.get("token") or "")
        for start in _occurrences(reply, token):
            marks.append(Mark(start, start + len(token), kind, severity, message))
    return marks


def highlight_reply(reply: str, findings: Iterable[Mapping[str, Any]]) -> str:
    """The reply as `<div class="fl-reply">` HTML with every located finding in a
    `<mark class="fl-mark fl-kind-...">` followed by a label naming its kind."""
    marks = locate(reply, findings)
    cuts = sorted({0, len(reply)} | {m.start for m in marks} | {m.end for m in marks})
    parts: list[str] = []
    for start, end in itertools.pairwise(cuts):
        text = html.escape(reply[start:end])
        covering = [m for m in marks if m.start <= start and end <= m.end]
        if not covering:
            parts.append(text)
            continue
        covering.sort(key=lambda m: -SEVERITY_RANK.get(m.severity, 0))
        classes = " ".join(
            dict.fromkeys(
                ["fl-mark", f"fl-sev-{_safe(covering[0].severity)}"]
                + [css_class(m.kind) for m in covering]
            )
        )
        title = html.escape("; ".join(f"{m.kind}: {m.message}" for m in covering), quote=True)
        kinds = html.escape(" ".join(dict.fromkeys(m.kind for m in covering)), quote=True)
        parts.append(f'<mark class="{classes}" data-kinds="{kinds}" title="{title}">{text}</mark>')
        for ending in dict.fromkeys(m.kind for m in covering if m.end == end):
            parts.append(
                f'<span class="fl-label {css_class(ending)}">{html.escape(kind_label(ending))}'
                "</span>"
            )
    return f'<div class="fl-reply">{"".join(parts)}</div>'


TONE_RANK: dict[Tone, int] = {"against": 0, "backed": 1, "seen": 2}
"""Where two marks start at the same place, the finding's own evidence wins."""
_SEEN: Tone = "seen"


def mark_tokens(text: str, marks: Sequence[str | tuple[str, Tone]], *, error: bool = False) -> str:
    """`text` (a tool's arguments or result) as `<pre class="fl-result">` HTML with every
    occurrence of each mark's text in `<mark class="fl-tone fl-<tone>">`. A bare string
    is marked `seen`: a token that shows up, which by itself backs nothing."""
    spans: list[tuple[int, int, Tone]] = []
    for mark in dict.fromkeys(marks):
        token, tone = (mark, _SEEN) if isinstance(mark, str) else mark
        spans.extend((s, s + len(token), tone) for s in _occurrences(text, token))
    spans.sort(key=lambda span: (span[0], TONE_RANK[span[2]], -span[1]))
    parts: list[str] = []
    position = 0
    for start, end, tone in spans:
        if start < position:  # overlaps an earlier mark: that one already shows it
            continue
        parts.append(html.escape(text[position:start]))
        parts.append(f'<mark class="fl-tone fl-{tone}">{html.escape(text[start:end])}</mark>')
        position = end
    parts.append(html.escape(text[position:]))
    classes = "fl-result fl-error" if error else "fl-result"
    return f'<pre class="{classes}">{"".join(parts)}</pre>'


def _occurrences(text: str, token: str) -> list[int]:
    if not token or len(token) > MAX_TOKEN_CHARS:
        return []
    found: list[int] = []
    start = text.find(token)
    while start >= 0 and len(found) < MAX_MARKS_PER_TOKEN:
        found.append(start)
        start = text.find(token, start + len(token))
    return found


def _safe(value: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())
