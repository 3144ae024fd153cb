"""Tiny builders for OpenAI-style transcripts used by the validator tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.model import Turn
from factledger.processors.runner import default_runner


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: str | None = "ok"
    is_error: bool = False
    text: str | None = None
    """Assistant text written alongside the call (the plan)."""


def tool(name: str, required: tuple[str, ...] = (), **props: dict[str, Any]) -> dict[str, Any]:
    properties = {p: {"type": "string"} for p in required} | props
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }


def chat(
    reply: str,
    *,
    user: str = "Please take care of it.",
    calls: list[Call] | None = None,
    tools: Sequence[str | dict[str, Any]] | None = None,
    history: list[dict[str, Any]] | None = None,
    system: str | None = None,
) -> dict[str, Any]:
    """A transcript: optional system prompt, history, the user request, the calls, the reply.

    `tools` defaults to the names of the calls (all offered); pass [] for none offered.
    """
    calls = calls or []
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend(history or [])
    messages.append({"role": "user", "content": user})
    for i, call in enumerate(calls):
        call_id = f"call_{i}"
        messages.append(
            {
                "role": "assistant",
                "content": call.text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                ],
            }
        )
        if call.result is not None:
            message: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": call_id,
                "content": call.result,
            }
            if call.is_error:
                message["is_error"] = True
            messages.append(message)
    messages.append({"role": "assistant", "content": reply})
    offered = tools if tools is not None else sorted({c.name for c in calls})
    definitions = [tool(t) if isinstance(t, str) else t for t in offered]
    return {"model": "test-model", "tools": definitions, "messages": messages}


def turn(reply: str, **kwargs: Any) -> Turn:
    return turn_from_transcript(chat(reply, **kwargs))


def kinds_of(transcript: dict[str, Any]) -> set[str]:
    """The finding kinds the default suite reports for a transcript."""
    return set(default_runner().validate(turn_from_transcript(transcript)).kinds)
