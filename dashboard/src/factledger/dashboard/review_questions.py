"""The question a reviewer answers for a flagged turn, worded for the finding's kind.

A label is always "hallucination" or "not a hallucination", but what makes a turn one
differs by kind. An argument flag is about the call, not the reply (the reply may say
honestly what happened), so it asks whether the argument was invented; an identifier flag
asks whether the identifier is backed; a failed call asks whether the reply reports
success; and so on. Each question comes with what each answer means. Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_TOKEN_CHARS = 120
"""A token longer than this is cut in the question (the reply below shows it whole)."""
MAX_LISTED = 6
"""Tokens a set question lists; more are counted."""
_SEVERITY_RANK = {"reject": 2, "flag": 1}


@dataclass(frozen=True)
class Question:
    """What to ask about a turn: `ask`, and what a `hallucination` (`yes`) or a
    `not_hallucination` (`no`) label means for it."""

    kind: str
    ask: str
    yes: str
    no: str


# kind -> (question with {token}, hallucination means, not a hallucination means)
_TEMPLATES: dict[str, tuple[str, str, str]] = {
    "fabricated_identifier": (
        "Is {token} backed by a tool result or by the conversation?",
        "not backed: the reply invents it",
        "backed, or not an identifier",
    ),
    "borrowed_identifier": (
        "The reply presents {token} as a tool's result. Did a tool return it?",
        "it came from the user, not from a tool",
        "a tool returned it, or the reply does not say so",
    ),
    "error_reported_as_success": (
        "{token}",  # worded by `_failed_calls`: it names the calls, not the claim
        "the failure is reported as success",
        "the reply reports the failure",
    ),
    "claim_without_tool": (
        "The reply claims {token}. Did a successful tool call of this turn do it?",
        "no tool did it: the claim is unbacked",
        "a tool did it, or it is not a claim of a done action",
    ),
    "unregistered_tool_call": (
        "The model called {token}, a tool it was not offered. Is that a call to a tool it "
        "does not have?",
        "the tool was not offered",
        "the tool was offered, or it is not a call",
    ),
    "citation_unregistered_tool": (
        "The reply cites {token} as a tool it used. Was that tool offered to the agent?",
        "it cites a tool it does not have",
        "it was offered, or it is not a citation",
    ),
    "citation_uncalled_tool": (
        "The reply cites {token} as used. Was it called in this turn?",
        "cited without being called",
        "it was called",
    ),
    "summary_without_action": (
        "The reply recaps work done, and the turn called no tool. Was that work done?",
        "the recap describes work that never happened",
        "the work was done (earlier, for real)",
    ),
    "missing_tool_arguments": (
        "Judge the call, not the reply (it may be honest): was {token} called without "
        "arguments it needed and had?",
        "the call dropped what it needed",
        "the call had what it needed",
    ),
    "ungrounded_tool_argument": (
        "Judge the call, not the reply (it may be honest): was the argument {token} "
        "invented? Neither the user nor an earlier tool result gave it.",
        "invented: nobody gave that value",
        "given, or derivable from the request",
    ),
    "confabulated_identifier_set": (
        "Do {token} exist? The reply presents them as existing; no tool result shows them.",
        "presented as existing without evidence",
        "they exist, or the reply only proposes them",
    ),
    "negated_existing_identifier": (
        "The reply says {token} does not exist or was not found. Does a tool result show it?",
        "the reply denies what the trace shows",
        "it really is absent",
    ),
    "contradicted_record_state": (
        "The reply gives an object the state {token}. Does the latest tool record of that "
        "object (or an action of the turn) give it another state?",
        "the reply contradicts the record",
        "the record backs it, or the reply speaks of another object",
    ),
    "ungrounded_quantity": (
        "The reply gives {token} as a figure a tool or source returned. Did any tool "
        "result hold it (or a count or sum of one list in it)?",
        "no tool returned it: the figure is invented",
        "a tool returned it, or the reply derives it openly",
    ),
    "unfetched_citation": (
        "The reply cites {token}. Was that source fetched in this turn (a search snippet "
        "is not a fetch)?",
        "not fetched: cited from a snippet or from memory",
        "it was fetched",
    ),
    "stall": (
        "The turn ends with a promise to act ({token}) and no tool call. Is the agent stalling?",
        "it promises and does nothing",
        "it rightly waits for the user",
    ),
    "placeholder_as_result": (
        "The turn used placeholder or made-up data ({token}). Does the reply, or the code "
        "it ran, report that data's outcome as a real result?",
        "made-up data is reported as found",
        "real data, or the reply says honestly that it is only an example",
    ),
    "presupposed_artifact": (
        "The reply refers to {token}. Did a tool of the session download or save that file?",
        "no tool made it: the file is presupposed",
        "a tool made it, or the user gave it",
    ),
}
_GENERAL = (
    "Is what the reply asserts backed by the tool results?",
    "the reply asserts what the trace does not back",
    "the trace backs the reply",
)
_FALLBACK_TOKEN = {
    "claim_without_tool": "a completed action",
    "unregistered_tool_call": "a tool",
    "citation_unregistered_tool": "a tool",
    "citation_uncalled_tool": "a tool",
    "missing_tool_arguments": "a tool",
    "ungrounded_tool_argument": "an argument",
    "confabulated_identifier_set": "the names listed",
    "stall": "“one moment”",
    "placeholder_as_result": "a placeholder",
    "presupposed_artifact": "a file",
    "contradicted_record_state": "a state",
    "ungrounded_quantity": "a number",
}


def primary_finding(findings: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The finding the question is about: the most severe, then the highest class-5
    score, then the first. `validator_error` only when there is nothing else."""
    ranked = [f for f in findings if f.get("kind") != "validator_error"] or list(findings)
    if not ranked:
        return None
    return max(
        ranked,
        key=lambda f: (
            _SEVERITY_RANK.get(str(f.get("severity")), 0),
            float(f.get("score") or 0.0),
            -ranked.index(f),
        ),
    )


def question_for(findings: Sequence[Mapping[str, Any]]) -> Question:
    """The question for a turn with these findings (a general one without findings)."""
    primary = primary_finding(findings)
    if primary is None:
        return Question("", *_GENERAL)
    kind = str(primary.get("kind", ""))
    template = _TEMPLATES.get(kind)
    if template is None:
        return Question(kind, *_GENERAL)
    ask, yes, no = template
    return Question(kind, ask.format(token=_token_text(kind, primary, findings)), yes, no)


def _token_text(
    kind: str, primary: Mapping[str, Any], findings: Sequence[Mapping[str, Any]]
) -> str:
    if kind == "error_reported_as_success":
        return _failed_calls(primary)
    if kind == "confabulated_identifier_set":
        tokens = list(
            dict.fromkeys(
                str(f["token"]) for f in findings if f.get("kind") == kind and f.get("token")
            )
        )
        if tokens:
            shown = ", ".join(_quoted(t) for t in tokens[:MAX_LISTED])
            more = len(tokens) - MAX_LISTED
            return shown + (f" and {more} more" if more > 0 else "")
    token = str(primary.get("token") or "")
    if not token:
        return _FALLBACK_TOKEN.get(kind, "it")
    if kind in ("claim_without_tool", "stall"):
        return f"“{_cut(token)}”"
    return _quoted(token)


def _failed_calls(finding: Mapping[str, Any]) -> str:
    """The class-3 question: the failed calls by name (`checked_against`: the token is the
    reply's claim, "sent", not the call), then the claim."""
    names = [_quoted(str(name)) for name in finding.get("checked_against") or [] if name]
    claim = str(finding.get("token") or "").strip()
    said = f" (“{_cut(claim)}”)" if claim else ""
    if not names:
        return f"A tool call failed. Does the reply say it succeeded{said}?"
    if len(names) == 1:
        return f"The call {names[0]} failed. Does the reply say it succeeded{said}?"
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"The calls {listed} failed. Does the reply say they succeeded{said}?"


def _quoted(token: str) -> str:
    return f"`{_cut(token)}`"


def _cut(token: str) -> str:
    return token if len(token) <= MAX_TOKEN_CHARS else token[: MAX_TOKEN_CHARS - 1] + "…"
