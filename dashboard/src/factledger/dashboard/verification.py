"""What the sources of truth answered, as the pages show it: an outcome chip with the
evidence (source, the exact query, the answer, when, how long) beside the finding it
settled, the findings verification withdrew, a queue item's one-line summary, and the
table of answers per finding kind. Pure functions of the API's JSON; every piece of text
is HTML-escaped.

confirmed is drawn in the reject colour (the hallucination is proven), refuted green
(the source agrees with the reply, the finding is withdrawn), unverifiable grey.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from factledger.dashboard.client import QueueVerification
from factledger.dashboard.figures import parse_time
from factledger.dashboard.highlight import kind_label, label_html

OUTCOMES = ("confirmed", "refuted", "unverifiable")
OUTCOME_WORDS = {
    "confirmed": "confirmed: hallucination",
    "refuted": "refuted: it exists",
    "unverifiable": "unverifiable",
}
STYLES = """
<style>
.fl-outcome { display: inline-block; font-weight: 600; font-size: 0.75rem;
  border-radius: 0.7rem; padding: 0.05rem 0.5rem; margin-right: 0.4rem; }
.fl-outcome-confirmed { background: #fed7d7; color: #9b2c2c; }
.fl-outcome-refuted { background: #c6f6d5; color: #22543d; }
.fl-outcome-unverifiable { background: #e2e8f0; color: #4a5568; }
.fl-verification { font-size: 0.82rem; margin: 0.2rem 0 0.2rem 1rem; }
</style>
"""
"""The chips' colours (added to every page by `ui.styles`)."""


def outcome_chip(outcome: str) -> str:
    """The outcome as a coloured chip: `<span class="fl-outcome fl-outcome-confirmed">`."""
    safe = outcome if outcome in OUTCOMES else "unverifiable"
    words = html.escape(OUTCOME_WORDS[safe])
    return f'<span class="fl-outcome fl-outcome-{safe}" data-outcome="{safe}">{words}</span>'


def checked_when(checked_at: str | None, duration_ms: float) -> str:
    """When the source was asked and how long it took: `at 14:05:09 UTC · 12 ms`."""
    took = f"{duration_ms:.0f} ms" if duration_ms >= 1 else f"{duration_ms:.1f} ms"
    if not checked_at:
        return took
    return f"at {parse_time(checked_at):%H:%M:%S} UTC · {took}"


def evidence_html(verification: Mapping[str, Any]) -> str:
    """One answer with its evidence: the chip, the name, the source, the exact query in
    code style, the answer, why it is unverifiable, when and how long."""
    name = html.escape(str(verification.get("name") or ""))
    query = str(verification.get("query") or "")
    answer = str(verification.get("answer") or "")
    reason = verification.get("reason")
    bits = [
        f"{outcome_chip(str(verification.get('outcome')))}<code>{name}</code>",
        f"asked <b>{html.escape(str(verification.get('source') or '–'))}</b>",
    ]
    if query:
        bits.append(f'<code class="fl-query">{html.escape(query)}</code>')
    if answer:
        bits.append(f"answered <code>{html.escape(answer)}</code>")
    if reason:
        bits.append(f"why unverifiable: {html.escape(str(reason))}")
    when = checked_when(verification.get("checked_at"), float(verification.get("duration_ms", 0)))
    bits.append(f'<span class="fl-meta">{html.escape(when)}</span>')
    outcome = html.escape(str(verification.get("outcome")), quote=True)
    return f'<div class="fl-verification" data-outcome="{outcome}">{" · ".join(bits)}</div>'


def settling(verifications: Iterable[Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]]:
    """The answers about each finding, by the finding's index in the turn's `findings`."""
    found: dict[int, list[Mapping[str, Any]]] = {}
    for verification in verifications:
        index = verification.get("finding")
        if index is not None:
            found.setdefault(int(index), []).append(verification)
    return found


def withdrawn(verifications: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The answers that withdrew a finding: refuted, about a finding of the first verdict
    (the latest verdict no longer lists it)."""
    return [
        v
        for v in verifications
        if v.get("outcome") == "refuted" and v.get("finding") is None and v.get("finding_kind")
    ]


def unattached(verifications: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Answers about names no finding named that changed nothing (a short SHA that
    exists, a name no source knew)."""
    return [v for v in verifications if v.get("finding") is None and not v.get("finding_kind")]


def withdrawn_html(verification: Mapping[str, Any], reply: str) -> str:
    """A withdrawn finding: its kind, where the reply says it, and the answer that
    withdrew it."""
    kind = str(verification.get("finding_kind") or "")
    label = label_html(kind, "info")  # withdrawn: it no longer counts in the verdict
    span = verification.get("span")
    quoted = ""
    if span and 0 <= int(span[0]) < int(span[1]) <= len(reply):
        quoted = f' · the reply: "<i>{html.escape(reply[int(span[0]) : int(span[1])])}</i>"'
    return (
        f'<div class="fl-evidence fl-withdrawn" data-kind="{html.escape(kind, quote=True)}">'
        f"{label}<s>{html.escape(str(verification.get('name') or ''))}</s>{quoted}"
        f"{evidence_html(verification)}</div>"
    )


def queue_line(tally: Mapping[str, Any] | None) -> str:
    """What verification answered of a queued turn, in a line: `not verified: ...`, `no
    source could settle this: no source / timeout`, or the counts."""
    counts = {outcome: int((tally or {}).get(outcome, 0)) for outcome in OUTCOMES}
    reasons = " / ".join(str(r) for r in (tally or {}).get("reasons") or ()) or "no reason given"
    if not any(counts.values()):
        return "not verified: no source was asked"
    if counts["unverifiable"] and not counts["confirmed"] and not counts["refuted"]:
        return f"no source could settle this: {reasons}"
    said = ", ".join(f"{n} {outcome}" for outcome, n in counts.items() if n)
    if counts["unverifiable"]:
        said += f" (unverifiable: {reasons})"
    return f"verification: {said}"


def summary_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answers per kind as table rows: kind, confirmed, refuted, unverifiable, and
    the share settled (confirmed or refuted) of all answers."""
    rows = []
    for entry in summary.get("kinds") or ():
        counts = {outcome: int(entry.get(outcome, 0)) for outcome in OUTCOMES}
        answered = sum(counts.values())
        settled = counts["confirmed"] + counts["refuted"]
        rows.append(
            {
                "kind": kind_label(str(entry.get("kind"))),
                **counts,
                "settled": settled / answered if answered else None,
            }
        )
    return rows


QUEUE_FILTERS: Sequence[tuple[QueueVerification, str]] = (
    ("any", "all"),
    ("unverified", "not verified"),
    ("unsettled", "verification could not settle"),
)
"""The Verify page's verification filter: (API value, what the page calls it)."""
