"""What the in-loop guard did, as the pages tell it: the Overview's table per model and
agent, a guarded turn's one sentence, and the attempts of a nudged turn (each reply the
guard sent back, with its nudge, before the one it kept). Pure functions of the API's
JSON.

The attempts are read from the turn's spans: the model call that saw the most nudges
holds the conversation up to the last attempt, where each nudge (a framework message,
`processors.nudges.is_framework_nudge`, also when the framework wraps it in feedback of
its own) follows the reply it answers. Two ways of writing messages are read: the GenAI
conventions' `gen_ai.input.messages` and OpenInference's flattened
`llm.input_messages.<i>.message.*`; a turn whose spans hold neither shows the sentence
alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factledger.dashboard.client import GuardSummary, TurnGuard
from factledger.processors.nudges import NUDGE_MARKER, is_framework_nudge

GUARD_MEANING = (
    "Each nudge is a hallucination the guard caught inside the agent's loop: **corrected** "
    "turns fixed their reply after a nudge, **refused** ones were still rejected after the "
    "nudges (escalated footnote or raised), **footnoted** ones were annotated without a nudge."
)
"""The one sentence under the Overview's table."""

_TIMES = {1: "once", 2: "twice"}
_WRAP_SCAN = 400
"""How far into a message a framework's wrapping of the nudge may reach."""
_OPENINFERENCE = re.compile(r"^llm\.input_messages\.(\d+)\.message\.(.+)$")


@dataclass(frozen=True)
class Attempt:
    """A reply the guard sent back, and the nudge it sent with it."""

    reply: str
    nudge: str


def table_rows(summary: GuardSummary) -> list[dict[str, Any]]:
    """One row per model and agent: guarded turns, nudges, corrected, refused, footnoted."""
    return [
        {
            "model": group["model"] or "–",
            "agent": group["agent"] or "–",
            "guarded turns": group["turns"],
            "nudges": group["nudges"],
            "corrected": group["corrected"],
            "refused": group["refused"],
            "footnoted": group["footnoted"],
        }
        for group in summary["groups"]
    ]


def _times(count: int) -> str:
    return _TIMES.get(count, f"{count} times")


def guard_sentence(guard: TurnGuard | None) -> str | None:
    """What the guard did in one turn, in a sentence; None for an unguarded turn."""
    if guard is None or guard["result"] == "unguarded":
        return None
    nudges = guard["nudges"]
    match guard["result"]:
        case "corrected":
            return f"The guard nudged {_times(nudges)}; the model corrected itself."
        case "refused" if guard["action"] == "raise":
            nudged = f"nudged {_times(nudges)}, the reply" if nudges else "the reply"
            return f"The guard {nudged} was still rejected; it stopped the run."
        case "refused":
            return (
                f"The guard nudged {_times(nudges)}; the reply was still rejected and "
                "carries the escalated footnote."
            )
        case "footnoted":
            return "The guard footnoted the reply without a nudge."
        case _:
            return "The guard checked the reply; it passed untouched."


def is_nudge(text: str) -> bool:
    """A framework's nudge, also where the framework wraps it in words of its own on the
    same line (smolagents hands a failed final-answer check back as a tool response,
    "Error:\\nCheck factledger_guard failed with error: [FACTLEDGER ..."), which the service's rule
    (`is_framework_nudge`, a marker that opens the message or one of its first lines)
    leaves to the user's words."""
    if is_framework_nudge(text):
        return True
    at = text.find(NUDGE_MARKER, 0, _WRAP_SCAN)
    return at >= 0 and is_framework_nudge(text[at:])


def attempts(spans: Iterable[Mapping[str, Any]]) -> list[Attempt]:
    """The replies the guard sent back, oldest first, each with its nudge: from the span
    whose input holds the most nudges; empty when no span shows one."""
    best: list[Attempt] = []
    for span in spans:
        found = _attempts_in(_input_messages(span.get("attributes") or {}))
        if len(found) > len(best):
            best = found
    return best


def _attempts_in(messages: Sequence[tuple[str, str]]) -> list[Attempt]:
    found: list[Attempt] = []
    reply = ""
    for role, text in messages:
        if role == "assistant":
            reply = text or reply
        elif is_nudge(text):
            found.append(Attempt(reply, text))
            reply = ""
    return found


def _input_messages(attributes: Mapping[str, str]) -> list[tuple[str, str]]:
    """(role, text) of a model call's input messages, text parts joined."""
    raw = attributes.get("gen_ai.input.messages")
    if raw:
        return _genai_messages(raw)
    return _openinference_messages(attributes)


def _genai_messages(raw: str) -> list[tuple[str, str]]:
    try:
        parsed = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(parsed, list):
        return []
    out: list[tuple[str, str]] = []
    for message in parsed:
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role") or "")
        content = message.get("content")
        texts = [content] if isinstance(content, str) else []
        for part in message.get("parts") or ():
            if isinstance(part, Mapping) and part.get("type") == "text":
                texts.append(str(part.get("content") or ""))
        out.append((role, "\n".join(texts)))
    return out


def _openinference_messages(attributes: Mapping[str, str]) -> list[tuple[str, str]]:
    roles: dict[int, str] = {}
    texts: dict[int, list[tuple[str, str]]] = {}
    for key, value in attributes.items():
        match = _OPENINFERENCE.match(key)
        if match is None:
            continue
        index, field = int(match.group(1)), match.group(2)
        if field == "role":
            roles[index] = value
        elif field == "content" or field.endswith("message_content.text"):
            texts.setdefault(index, []).append((field, value))
    return [
        (roles.get(i, ""), "\n".join(text for _, text in sorted(texts.get(i, []))))
        for i in sorted(set(roles) | set(texts))
    ]
