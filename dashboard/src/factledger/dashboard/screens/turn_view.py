"""One turn on the page: the request, the reply with its findings highlighted, and beside
it what the tools were called with and returned; then the span waterfall and the verdict
history. The verification queue reuses the reply and tool blocks."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from factledger.dashboard import charts, evidence, figures, labeling, palette, verification
from factledger.dashboard.client import Citation, SnapshotRef, Turn
from factledger.dashboard.finding_evidence import (
    FindingEvidence,
    Part,
    badges_on,
    finding_evidence,
    marks_on,
    severity_on,
)
from factledger.dashboard.finding_sets import FindingGroup, finding_groups
from factledger.dashboard.highlight import highlight_reply, label_html, mark_tokens
from factledger.dashboard.safe_text import code_html, markdown_text
from factledger.dashboard.screens.guard_views import guard_block
from factledger.dashboard.snapshot_notes import backing_note
from factledger.dashboard.ui import verdict_html, when


def turn_title(turn_id: str) -> str:
    """The page title: the turn id's first characters, as plain text."""
    return f"Turn {markdown_text(turn_id[:12])}"


def render_turn(turn: Turn) -> None:
    """The whole turn page."""
    st.title(turn_title(turn["turn_id"]))
    st.html(
        f"{verdict_html(turn['verdict'])}"
        f'<span class="fl-meta">{html.escape(turn["model"])} · agent '
        f"{html.escape(turn['agent'] or '–')} · {when(turn['started_at'])} · trace "
        f"<code>{html.escape(turn['trace_id'])}</code> · conversation "
        f"<code>{html.escape(turn['conversation_id'] or '–')}</code> · verdict version "
        f"{turn['version']}</span>"
    )
    guard_block(turn)
    labeling.turn_labels(turn)
    found = finding_evidence(
        turn["findings"], turn["tool_calls"], turn["user_message"], turn["spans"]
    )
    left, right = st.columns([3, 2], gap="large")
    with left:
        request_block(turn["user_message"])
        reply_block(turn["reply"], turn["findings"], backings=turn.get("backings", []))
        citations_block(turn["citations"], turn["snapshots"])
        evidence_block(turn["findings"], turn["tool_calls"], turn["user_message"], found=found)
        findings_block(turn["findings"], turn.get("verifications", []))
        verification_block(turn.get("verifications", []), turn["reply"])
    with right:
        st.subheader(f"Tool calls ({len(turn['tool_calls'])})")
        tool_calls_block(turn["tool_calls"], found)

    st.subheader("Span waterfall")
    spans = figures.span_rows(turn["spans"])
    if spans:
        st.altair_chart(charts.waterfall(spans), width="stretch")
    else:
        st.info("The spans of this turn are no longer stored (or never were).")

    history, reviews = st.columns(2)
    with history:
        st.subheader("Verdict history")
        st.dataframe(
            [
                {
                    "version": v["version"],
                    "verdict": v["verdict"],
                    "kinds": ", ".join(v["kinds"]) or "–",
                    "validated": when(v["validated_at"]),
                }
                for v in turn["versions"]
            ],
            hide_index=True,
        )
        st.caption("Validators: " + ", ".join(turn["validators"]))
    with reviews:
        st.subheader("Human reviews")
        if turn["reviews"]:
            st.dataframe(
                [
                    {
                        "label": r["label"].replace("_", " "),
                        "note": r["note"],
                        "reviewer": r["reviewer"],
                        "at": when(r["created_at"]),
                    }
                    for r in turn["reviews"]
                ],
                hide_index=True,
            )
        elif turn["verdict"] == "flag":
            st.info("Not reviewed yet: label it with the buttons at the top of this page.")
        else:
            st.caption("No reviews.")


def request_block(user_message: str, *, compact: bool = False) -> None:
    _heading("User request", compact)
    text = user_message or "(no user message in this turn)"
    st.html(f'<div class="fl-request">{html.escape(text)}</div>')


def reply_block(
    reply: str,
    findings: Sequence[Mapping[str, Any]],
    *,
    compact: bool = False,
    backings: Sequence[Mapping[str, Any]] = (),
) -> None:
    """The reply with its findings marked, and green what the tool results back."""
    _heading("Reply", compact)
    st.html(highlight_reply(reply or "(empty reply)", findings, backings))


def citations_block(citations: Sequence[Citation], snapshots: Sequence[SnapshotRef]) -> None:
    """Each source the reply cites, beside what backs it: a snapshot of a read of the turn
    (its hash, time, tool and call) or none."""
    if not citations:
        return
    st.html(
        '<div class="fl-meta">Cited sources and the evidence snapshots behind them:</div>'
        + "".join(
            f'<div class="fl-evidence" data-backed="{str(c["snapshot"] is not None).lower()}">'
            f"<code>{html.escape(c['cited'])}</code> · "
            f"{html.escape(backing_note(c, snapshots))}</div>"
            for c in citations
        )
    )


def evidence_block(
    findings: Sequence[Mapping[str, Any]],
    tool_calls: Sequence[Mapping[str, Any]],
    user_message: str,
    *,
    found: Sequence[FindingEvidence] | None = None,
) -> None:
    """One line per finding: what it rests on in the tool trace, worded for its kind
    (`finding_evidence`). Green only where the trace backs the reply."""
    if found is None:
        found = finding_evidence(findings, tool_calls, user_message)
    if not found:
        return
    lines = [
        f'<div class="fl-evidence fl-sev-{palette.severity_key(item.severity)}" '
        f'data-kind="{html.escape(item.kind, quote=True)}">'
        f"{label_html(item.kind, item.severity)} {''.join(map(_part_html, item.parts))}</div>"
        for item in found
    ]
    st.html(
        '<div class="fl-meta">What each finding rests on in the tool trace '
        '(<span class="fl-part fl-backed">green: backs the reply</span> or '
        '<span class="fl-part fl-real">is the real one the tools returned</span> · '
        '<span class="fl-part fl-against">red</span> or <span class="fl-sev-flag">'
        "<span class=\"fl-part fl-against\">amber</span></span>: a reject's or a flag's "
        "evidence · "
        '<span class="fl-part fl-seen">grey: shows up, backs nothing</span>):</div>'
        + "".join(lines)
    )


def _part_html(part: Part) -> str:
    text = html.escape(part.text)
    if not part.code and part.tone is None:
        return text
    classes = f"fl-part fl-{part.tone}" if part.tone else "fl-part"
    tag = "code" if part.code else "span"
    return f'<{tag} class="{classes}">{text}</{tag}>'


def findings_block(
    findings: Sequence[Mapping[str, Any]], verifications: Sequence[Mapping[str, Any]] = ()
) -> None:
    """Each finding with its severity and what it was checked against, and beside it the
    answers of the sources of truth that settled it (`verification.evidence_html`). A
    class-5 set is one finding listing its names (`finding_sets`)."""
    groups = finding_groups(findings)
    st.subheader(f"Findings ({len(groups)})")
    if not findings:
        st.caption("None: the validators found nothing to object to.")
        return
    answers = verification.settling(verifications)
    for group in groups:
        index = group.first
        finding = findings[index]
        kind = str(finding["kind"])
        score = finding.get("score")
        bits = [
            label_html(kind, str(finding["severity"])),
            f"<b>{html.escape(str(finding['severity']))}</b>",
        ]
        if finding.get("class"):
            bits.append(f"class {html.escape(str(finding['class']))}")
        if score is not None:
            bits.append(f"score {float(score):.2f}")
        note = finding.get("checked_note")
        checked = ", ".join([*(finding.get("checked_against") or []), *([note] if note else [])])
        checked = checked or "–"
        message = (
            _set_html(group, str(finding["severity"]))
            if group.is_set
            else code_html(finding["message"])
        )
        settled = [a for i in group.indices for a in answers.get(i, ())]
        named = html.escape(kind, quote=True)
        st.html(
            f'<div class="fl-evidence fl-finding" data-finding-kind="{named}">'
            f"{' · '.join(bits)}<br>{message}<br>"
            f'<span class="fl-meta">checked against: {html.escape(checked)} · '
            f"{html.escape(str(finding['validator']))}</span>"
            + "".join(map(verification.evidence_html, settled))
            + "</div>"
        )


def _set_html(group: FindingGroup, severity: str) -> str:
    """A class-5 set's names: the invented ones in its severity's colour, and beside them
    the real ones, green, with the call that shows each."""
    invented = ", ".join(
        f'<code class="fl-part fl-against fl-set-invented">{html.escape(n)}</code>'
        for n in group.invented
    )
    text = f"{len(group.invented)} names presented as existing that no tool result shows: "
    text += invented
    if group.real:
        text += "<br>real, in the tools: " + ", ".join(
            f'<code class="fl-part fl-backed fl-set-real">{html.escape(r.token)}</code> '
            f'<span class="fl-part fl-backed">✓ in {html.escape(r.source)}</span>'
            for r in group.real
        )
    return f'<span class="fl-sev-{palette.severity_key(severity)}">{text}</span>'


def verification_block(verifications: Sequence[Mapping[str, Any]], reply: str) -> None:
    """The findings verification withdrew (a source shows the name exists), with the
    answer that withdrew each, and the names it checked that no finding named."""
    gone = verification.withdrawn(verifications)
    if gone:
        st.subheader(f"Withdrawn by verification ({len(gone)})")
        st.html(
            '<div class="fl-meta">A source of truth shows these exist: the findings no longer '
            "count in the verdict.</div>"
            + "".join(verification.withdrawn_html(v, reply) for v in gone)
        )
    others = verification.unattached(verifications)
    if others:
        st.markdown("**Other names verification checked**")
        st.html("".join(map(verification.evidence_html, others)))


def tool_calls_block(
    tool_calls: Sequence[Mapping[str, Any]], found: Sequence[FindingEvidence] = ()
) -> None:
    """Each call's arguments and result, errors marked, and the findings' evidence marked
    in its tone; a call a finding is about carries that finding's badge."""
    if not tool_calls:
        st.info("No tool was called in this turn.")
        return
    for index, call in enumerate(tool_calls):
        with st.container(border=True):
            failed = not call.get("ok", True)
            never_ran = call.get("origin") == "prose"
            status = (
                '<span class="fl-verdict fl-verdict-error">error</span>'
                if failed
                else '<span class="fl-verdict fl-verdict-pass">ok</span>'
            )
            if never_ran:
                status += (
                    '<span class="fl-verdict fl-verdict-flag">described in prose, never ran</span>'
                )
            status += "".join(
                f'<span class="fl-badge fl-{tone}">{html.escape(text)}</span>'
                for text, tone in badges_on(found, index)
            )
            # The finding's evidence in this call takes its severity's colour.
            severity = severity_on(found, index)
            st.html(
                f'<div class="fl-call fl-sev-{severity}">'
                f"{status}<b>{html.escape(evidence.call_label(call, index))}</b>"
                '<div class="fl-meta">arguments</div>'
                + mark_tokens(
                    evidence.pretty(call.get("arguments")) or "{}",
                    marks_on(found, index, "arguments"),
                )
                + '<div class="fl-meta">result</div>'
                + mark_tokens(
                    evidence.pretty(call.get("result")) or "(no result recorded)",
                    marks_on(found, index, "result"),
                    error=failed,
                )
                + "</div>"
            )


def _heading(text: str, compact: bool) -> None:
    if compact:
        st.markdown(f"**{text}**")
    else:
        st.subheader(text)
