"""The self-correction nudge: a framework message sent back to the model, not a user turn.

The framing: a marker that says the message comes from the framework, the offending
tokens by name, the word "hallucination", two ways forward (verify with a real tool call,
or revise), and a reminder that this is not a new request.
The marker also keeps earlier nudges out of the conversation context, so a nudge that
names a fabricated token never whitewashes it in a later turn.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .kinds import Kind
from .model import Finding, ToolCall

NUDGE_MARKER = "[FACTLEDGER SELF-CORRECTION"
_FOREIGN_MARKERS = ("[FRAMEWORK SELF-CORRECTION",)
_MARKERS = (NUDGE_MARKER, *_FOREIGN_MARKERS)


GUARD_TOOL = "factledger_guard"
"""The tool a guard adapter calls itself to hand its nudge to the model, in a framework
that calls the model again only after a tool call (Google ADK): never offered to the
model, never the agent's action."""


_WRAPPER_ROOM = 200
"""How far into a message a nudge's marker may start a line: frameworks hand the nudge on
under a heading of their own ("Validation feedback:", Pydantic AI's retry prompt)."""


def is_framework_nudge(text: str) -> bool:
    """True for a self-correction message written by FactLedger or a similar framework:
    a marker that opens the message, or one of its first lines (a framework's wrapping)."""
    head = text.lstrip()[: _WRAPPER_ROOM + 64]
    if not any(marker in head for marker in _MARKERS):
        return False  # every user message is asked: most hold no marker to find a line for
    return any(
        line.lstrip().startswith(marker) for line in _opening_lines(head) for marker in _MARKERS
    )


def _opening_lines(head: str) -> list[str]:
    """The lines of `head` that start within its first `_WRAPPER_ROOM` characters."""
    lines: list[str] = []
    at = 0
    for line in head.split("\n"):
        if at > _WRAPPER_ROOM:
            break
        lines.append(line)
        at += len(line) + 1
    return lines


def is_guard_call(call: ToolCall) -> bool:
    """True for a tool call that only carries a nudge: the guard's own tool, or any call
    whose answer is a nudge (as text, or as the one string of a JSON object, the way
    frameworks wrap a tool's string answer: `{"result": "..."}`)."""
    if call.name == GUARD_TOOL:
        return True
    text = call.result or ""
    if not any(marker in text for marker in _MARKERS):
        return False  # every call of every turn is asked: most results need no parse
    text = text.lstrip()
    if is_framework_nudge(text):
        return True
    if not text.startswith("{"):
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    strings = [v for v in value.values() if isinstance(v, str)] if isinstance(value, dict) else []
    return len(strings) == 1 and len(value) == 1 and is_framework_nudge(strings[0])


def without_guard_calls(calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
    """The calls less those that carried a guard's nudge. Such a call is no tool of the
    agent (an "unregistered" call otherwise), and its answer quotes the tokens it
    corrects: kept as a tool result, it would back the very fabrication it names. Every
    turn is built without them (`assembly.turn_builder`, `assembly.transcript`)."""
    return tuple(c for c in calls if not is_guard_call(c))


_REASONS: dict[Kind, str] = {
    Kind.FABRICATED_IDENTIFIER: "identifiers that appear in no tool result of this turn",
    Kind.BORROWED_IDENTIFIER: "identifiers from the conversation presented as tool output",
    Kind.ERROR_REPORTED_AS_SUCCESS: "success for an action whose tool call failed",
    Kind.CLAIM_WITHOUT_TOOL: "actions that no successful tool call of this turn performed",
    Kind.UNREGISTERED_TOOL_CALL: "a call to a tool you were not offered",
    Kind.CITATION_UNREGISTERED_TOOL: "a tool you were not offered",
    Kind.CITATION_UNCALLED_TOOL: "a tool you did not call in this turn",
    Kind.SUMMARY_WITHOUT_ACTION: "a summary of work in a turn that called no tool",
    Kind.NEGATED_EXISTING_IDENTIFIER: "something as missing that a tool result shows",
    Kind.CONTRADICTED_RECORD_STATE: "a state that the tool's record of the object contradicts",
    Kind.UNFETCHED_CITATION: "sources that no fetch in this turn retrieved",
    Kind.STALL: "a promise to act without any tool call",
    Kind.PLACEHOLDER_AS_RESULT: "placeholder or made-up data as if it were a result",
    Kind.PRESUPPOSED_ARTIFACT: "a file that no tool of this session downloaded or saved",
}


def build_nudge(findings: Sequence[Finding]) -> str | None:
    """The nudge for the findings that warrant one, or None when nothing needs correcting."""
    relevant = [f for f in findings if f.kind in _REASONS]
    if not relevant:
        return None
    tokens = list(dict.fromkeys(f"`{f.token}`" for f in relevant if f.token))[:12]
    reasons = list(dict.fromkeys(_REASONS[f.kind] for f in relevant))
    named = f" It names {', '.join(tokens)}." if tokens else ""
    return (
        f"{NUDGE_MARKER} — not a user message] Your previous reply reports "
        + "; ".join(reasons)
        + f".{named} This is the hallucination pattern this framework checks for: "
        "the reply must only report what the tools of this turn actually returned. "
        "Before you reply again, do one of the following:\n"
        "  1. Make the real tool call that performs or verifies the action, and quote "
        "only values it returns.\n"
        "  2. Revise the reply: remove or qualify what you cannot confirm (say what was not "
        "done or is not known yet).\n"
        "Do not repeat these values unless a tool call in this turn returns them. This "
        "message is not a new request from the user: stay on the task you were doing."
    )
