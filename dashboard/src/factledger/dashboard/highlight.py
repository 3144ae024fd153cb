"""HTML for a reply with its findings marked, and for tool results with the findings'
tokens marked. Pure functions of strings; every piece of text is HTML-escaped, so a
reply or a tool result can never inject markup into the page.

A finding is located by its character offsets in the reply (`span`); one without
offsets is located by its token wherever the token occurs (at most MAX_MARKS_PER_TOKEN
times). Overlapping findings split the text into segments; a segment covered by several
findings carries every kind's class, and each finding's label follows its last segment.
Marks and labels are coloured by severity, never by kind (`palette`): red a reject,
amber a flag. A class-5 set's names are each marked, and labelled once, after the last.

Green, the evidence colour, marks what the tool results show, as the service stored it:
an identifier of the reply a tool result backs (`backings`, and the real names of a
class-5 set) is marked with "✓ in <tool> (<call id>)"; after a finding that names the real
identifier it was compared with (`real`), that identifier follows in a chip with its
call. A finding's mark wins over a backed one where they overlap.

In a tool payload, text is marked in the tone of the evidence it is (`evidence.Tone`):
green `fl-backed` only where it backs what the reply says, red `fl-against` where it is
what a finding rests on, slate `fl-seen` where the token merely shows up.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factledger.dashboard import palette
from factledger.dashboard.evidence import Tone, source_label
from factledger.dashboard.finding_sets import SET_KIND

MAX_MARKS_PER_TOKEN = 20
MAX_TOKEN_CHARS = 500
"""Longer tokens (a whole paragraph quoted as evidence) are not searched for."""

SEVERITY_RANK = {"reject": 2, "flag": 1, "info": 0}


@dataclass(frozen=True)
class Mark:
    """One located finding: reply[start:end] is marked with `kind`."""

    start: int
    end: int
    kind: str
    severity: str
    message: str


@dataclass(frozen=True)
class Backed:
    """reply[start:end] is what a tool result shows; `source` names the call."""

    start: int
    end: int
    source: str


def css_class(kind: str) -> str:
    """The CSS class of a kind: `fl-kind-<kind>`, reduced to safe characters."""
    return "fl-kind-" + re.sub(r"[^a-z0-9_-]", "-", kind.lower())


def kind_label(kind: str) -> str:
    """How a kind reads on the page: `fabricated_identifier` -> `fabricated identifier`."""
    return kind.replace("_", " ")


def label_html(kind: str, severity: str) -> str:
    """A finding's chip: its kind in words, coloured by its severity (red a reject, amber
    a flag, slate anything else), never by its kind."""
    return (
        f'<span class="fl-label fl-sev-{palette.severity_key(severity)} {css_class(kind)}">'
        f"{html.escape(kind_label(kind))}</span>"
    )


def kind_severities(findings: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each kind's most severe severity among `findings`: the colour of its chip where a
    chip names a kind rather than one finding."""
    worst: dict[str, str] = {}
    for finding in findings:
        kind, severity = str(finding.get("kind", "")), str(finding.get("severity", ""))
        if SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK.get(worst.get(kind, ""), -1):
            worst[kind] = severity
    return worst


# The mark's padding reaches below the font's descent: an underscore is drawn lower
# than the descent in common monospace fonts, and without it the outline (drawn just
# outside the box) covers the underscore at a device pixel ratio of 1.
_MARK_PADDING = "0.05em 0.15rem 0.25em"


def stylesheet() -> str:
    """The <style> block the highlighting relies on: marks and chips coloured by
    severity (`palette`), tool payloads' tones."""
    p = palette
    rules = [
        ".fl-reply, .fl-result { white-space: pre-wrap; word-break: break-word;"
        " font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.86rem;"
        " line-height: 1.7; border-radius: 0.5rem; padding: 0.75rem 0.9rem; margin: 0; }",
        ".fl-reply { background: #fffdf7; border: 1px solid #e9e3cf; }",
        ".fl-result { background: #f7f8fa; border: 1px solid #e3e6ea; max-height: 16rem;"
        " overflow: auto; }",
        f".fl-result.fl-error {{ border-color: {p.NEUTRAL}; border-style: dashed; }}",
        f".fl-mark {{ border-radius: 0.25rem; padding: {_MARK_PADDING}; color: inherit;"
        " -webkit-box-decoration-break: clone; box-decoration-break: clone; }",
        f".fl-mark.fl-sev-reject {{ background: {p.REJECT_BACKGROUND};"
        f" outline: 1.5px solid {p.REJECT}; }}",
        f".fl-mark.fl-sev-flag {{ background: {p.FLAG_BACKGROUND};"
        f" outline: 1.5px dashed {p.FLAG}; }}",
        f".fl-mark.fl-sev-info {{ background: {p.NEUTRAL_BACKGROUND}; }}",
        ".fl-label { font-family: system-ui, sans-serif; font-size: 0.68rem; font-weight: 600;"
        " border-radius: 0.6rem; padding: 0.05rem 0.4rem; margin: 0 0.2rem; white-space: nowrap;"
        f" vertical-align: 0.12rem; background: {p.NEUTRAL_BACKGROUND};"
        f" color: {p.NEUTRAL_TEXT}; }}",
        f".fl-label.fl-sev-reject {{ background: {p.REJECT_BACKGROUND}; color: {p.REJECT_TEXT}; }}",
        f".fl-label.fl-sev-flag {{ background: {p.FLAG_BACKGROUND}; color: {p.FLAG_TEXT}; }}",
        f".fl-tone {{ border-radius: 0.25rem; padding: {_MARK_PADDING}; color: inherit; }}",
        f"mark.fl-backed {{ background: {p.EVIDENCE_MARK}; }}",
        f"mark.fl-real {{ background: {p.EVIDENCE_MARK}; outline: 1px dashed {p.EVIDENCE}; }}",
        # A backed identifier of the reply: shaped like a finding's mark and chip, but not
        # one (no `fl-mark`, no `fl-label`: those are findings, in their severity's colour).
        f".fl-reply-backed {{ border-radius: 0.25rem; padding: {_MARK_PADDING};"
        f" outline: 1.5px solid {p.EVIDENCE}; -webkit-box-decoration-break: clone;"
        " box-decoration-break: clone; }",
        ".fl-backed-note { font-family: system-ui, sans-serif; font-size: 0.68rem;"
        " font-weight: 600; border-radius: 0.6rem; padding: 0.05rem 0.4rem; margin: 0 0.2rem;"
        f" white-space: nowrap; vertical-align: 0.12rem; background: {p.EVIDENCE_BACKGROUND};"
        f" color: {p.EVIDENCE_TEXT}; }}",
        ".fl-real-chip { font-family: system-ui, sans-serif; font-size: 0.72rem;"
        f" color: {p.EVIDENCE_TEXT}; margin: 0 0.2rem; }}",
        # The chip may wrap between its words, never inside the real token.
        ".fl-real-chip mark { font-family: ui-monospace, SFMono-Regular, Menlo, monospace;"
        f" font-size: 0.8rem; padding: {_MARK_PADDING}; border-radius: 0.25rem;"
        " white-space: nowrap; }",
        f"mark.fl-against {{ background: {p.REJECT_BACKGROUND}; outline: 1px solid {p.REJECT}; }}",
        f"mark.fl-seen {{ background: {p.NEUTRAL_BACKGROUND}; outline: 1px dashed {p.NEUTRAL}; }}",
        f".fl-part.fl-backed, .fl-part.fl-real {{ color: {p.EVIDENCE}; font-weight: 600; }}",
        f".fl-part.fl-against {{ color: {p.REJECT}; font-weight: 600; }}",
        f".fl-part.fl-seen {{ color: {p.NEUTRAL_TEXT}; }}",
        f"code.fl-part.fl-backed, code.fl-part.fl-real {{ background: {p.EVIDENCE_BACKGROUND}; }}",
        f"code.fl-part.fl-against {{ background: {p.REJECT_BACKGROUND}; }}",
        f"code.fl-part.fl-seen {{ background: {p.NEUTRAL_BACKGROUND}; }}",
        ".fl-badge { display: inline-block; font-size: 0.75rem; font-weight: 600;"
        " border-radius: 0.7rem; padding: 0.05rem 0.5rem; margin-right: 0.4rem; }",
        f".fl-badge.fl-against {{ background: {p.REJECT_BACKGROUND}; color: {p.REJECT_TEXT}; }}",
        f".fl-badge.fl-backed {{ background: {p.EVIDENCE_BACKGROUND}; color: {p.EVIDENCE_TEXT}; }}",
        f".fl-badge.fl-seen {{ background: {p.NEUTRAL_BACKGROUND}; color: {p.NEUTRAL_TEXT}; }}",
        # A flag's evidence is amber, not red: red is for rejects only.
        f".fl-sev-flag mark.fl-against {{ background: {p.FLAG_BACKGROUND};"
        f" outline-color: {p.FLAG}; }}",
        f".fl-sev-flag .fl-part.fl-against {{ color: {p.FLAG_TEXT}; }}",
        f".fl-sev-flag code.fl-part.fl-against {{ background: {p.FLAG_BACKGROUND}; }}",
        f".fl-sev-flag .fl-badge.fl-against {{ background: {p.FLAG_BACKGROUND};"
        f" color: {p.FLAG_TEXT}; }}",
    ]
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


def backed_spans(
    reply: str,
    findings: Iterable[Mapping[str, Any]],
    backings: Iterable[Mapping[str, Any]] = (),
) -> list[Backed]:
    """What the reply shows green: each stored backing whose offsets still hold its token,
    and each real name of a class-5 set wherever it occurs; none inside a finding's mark."""
    listed = list(findings)
    taken = [(m.start, m.end) for m in locate(reply, listed)]
    found: dict[tuple[int, int], Backed] = {}
    for backing in backings:
        start, end = int(backing.get("start", -1)), int(backing.get("end", -1))
        if 0 <= start < end <= len(reply) and reply[start:end] == backing.get("token"):
            source = source_label(str(backing.get("tool", "")), backing.get("call_id"))
            found.setdefault((start, end), Backed(start, end, source))
    for finding in listed:
        if finding.get("kind") != SET_KIND:
            continue
        for real in finding.get("real") or ():
            token = str(real.get("token") or "")
            source = source_label(str(real.get("tool", "")), real.get("call_id"))
            for start in _occurrences(reply, token):
                found.setdefault(
                    (start, start + len(token)), Backed(start, start + len(token), source)
                )
    return sorted(
        (b for b in found.values() if not any(s < b.end and b.start < e for s, e in taken)),
        key=lambda b: (b.start, -b.end),
    )


def real_chip(real: Mapping[str, Any]) -> str:
    """The real identifier a finding was compared with, and the call that returned it."""
    source = source_label(str(real.get("tool", "")), real.get("call_id"))
    return (
        f'<span class="fl-real-chip" data-source="{html.escape(source, quote=True)}">real: '
        f'<mark class="fl-tone fl-real fl-real-token">{html.escape(str(real.get("token")))}</mark>'
        f" in {html.escape(source)}</span>"
    )


def highlight_reply(
    reply: str,
    findings: Iterable[Mapping[str, Any]],
    backings: Iterable[Mapping[str, Any]] = (),
) -> str:
    """The reply as `<div class="fl-reply">` HTML with every located finding in a
    `<mark class="fl-mark fl-kind-...">` followed by a label naming its kind (and a chip
    with the real identifier it was compared with), and every backed identifier in a
    `<mark class="fl-tone fl-backed fl-reply-backed">` followed by a note "✓ in <tool>
    (<call id>)"."""
    listed = list(findings)
    marks = locate(reply, listed)
    greens = backed_spans(reply, listed, backings)
    reals = _reals_by_kind_and_end(reply, listed)
    set_end = max((m.end for m in marks if m.kind == SET_KIND), default=-1)
    cuts = sorted(
        {0, len(reply)}
        | {m.start for m in marks}
        | {m.end for m in marks}
        | {b.start for b in greens}
        | {b.end for b in greens}
    )
    parts: list[str] = []
    for start, end in itertools.pairwise(cuts):
        text = html.escape(reply[start:end])
        covering = [m for m in marks if m.start <= start and end <= m.end]
        if not covering:
            green = next((b for b in greens if b.start <= start and end <= b.end), None)
            if green is None:
                parts.append(text)
                continue
            note = html.escape(f"✓ in {green.source}")
            parts.append(
                f'<mark class="fl-tone fl-backed fl-reply-backed" title="{note}">{text}</mark>'
            )
            if green.end == end:
                parts.append(f'<span class="fl-backed-note">{note}</span>')
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
        endings = {m.kind: m.severity for m in reversed(covering) if m.end == end}
        for ending in dict.fromkeys(m.kind for m in covering if m.end == end):
            if ending == SET_KIND and end != set_end:
                continue  # a set is one finding: its label follows its last name only
            parts.append(label_html(ending, endings[ending]))
            parts.extend(real_chip(r) for r in reals.get((ending, end), ()))
    return f'<div class="fl-reply">{"".join(parts)}</div>'


def _reals_by_kind_and_end(
    reply: str, findings: Sequence[Mapping[str, Any]]
) -> dict[tuple[str, int], list[Mapping[str, Any]]]:
    """The real identifiers to show after a finding's label, keyed by its kind and the end
    of its mark; a class-5 set's real names are marked where they stand instead."""
    out: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for finding in findings:
        kind = str(finding.get("kind", ""))
        real = [r for r in finding.get("real") or () if r.get("token")]
        if not real or kind == SET_KIND:
            continue
        for mark in locate(reply, [finding]):
            listed = out.setdefault((kind, mark.end), [])
            listed.extend(r for r in real if r not in listed)
    return out


TONE_RANK: dict[Tone, int] = {"against": 0, "backed": 1, "real": 2, "seen": 3}
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
