"""Guarded agent turns sent through the real OTel SDK: each decision made by the guard's
policy on the attempt's transcript and recorded by the adapters' own recorder
(`factledger.guards.telemetry.record`), as a framework's adapter would."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import Tracer

from factledger.guards import GuardPolicy
from factledger.guards.policy import Decision
from factledger.guards.telemetry import record

REAL = hashlib.sha1(b"acme/shop@main").hexdigest()
FAKE = hashlib.sha1(b"fabricated:acme/shop@main").hexdigest()
USER = "Push branch main of acme/shop."
FABRICATED = f"Pushed main to acme/shop. The new head is commit {FAKE}."
CORRECT = f"Pushed main to acme/shop: commit {REAL[:12]}."
FOOTNOTE = GuardPolicy()
RAISE = GuardPolicy(on_exhausted="raise")


def conversation(replies: Sequence[str], user: str = USER) -> list[dict[str, Any]]:
    """The push and its result, then each reply, the guard's nudge between two replies."""
    call = {"name": "git_push", "arguments": json.dumps({"repo": "acme/shop", "branch": "main"})}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": user},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": call}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": True, "commit": REAL})},
    ]
    for reply in replies[:-1]:
        messages.append({"role": "assistant", "content": reply})
        nudge = FOOTNOTE.decide({"messages": messages}).nudge
        assert nudge is not None
        messages.append({"role": "user", "content": nudge})
    messages.append({"role": "assistant", "content": replies[-1]})
    return messages


def decisions(policy: GuardPolicy, replies: Sequence[str], user: str = USER) -> list[Decision]:
    """The guard's decision on each attempt, as an adapter makes them."""
    return [
        policy.decide({"messages": conversation(replies[: i + 1], user)})
        for i in range(len(replies))
    ]


def send_turn(
    tracer: Tracer,
    agent: str,
    model: str,
    made: Sequence[Decision],
    *,
    per_step: bool = False,
    replies: Sequence[str] = (),
) -> str:
    """One agent run: its chat span with the final reply, and as its input the request,
    or with `replies` (the attempts) the conversation up to the last attempt, nudges
    included; each decision recorded on the agent's span, or (`per_step`) on a step
    span of its own below it. The trace id."""
    reply = made[-1].reply if made else CORRECT
    seen = [_genai(m) for m in (conversation(replies)[:-1] if replies else [])] or [
        {"role": "user", "parts": [{"type": "text", "content": USER}]}
    ]
    with tracer.start_as_current_span(f"invoke_agent {agent}") as run:
        run.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent})
        with tracer.start_as_current_span(f"chat {model}") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": model,
                    "gen_ai.provider.name": "openai",
                    "gen_ai.input.messages": json.dumps(seen),
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}]
                    ),
                }
            )
        for attempt in made:
            if per_step:
                with tracer.start_as_current_span("step"):
                    record(attempt)
            else:
                record(attempt)
        return format(run.get_span_context().trace_id, "032x")


def _genai(message: dict[str, Any]) -> dict[str, Any]:
    """A chat message in the GenAI conventions' parts form."""
    parts: list[dict[str, Any]] = []
    if message.get("content") is not None and message["role"] != "tool":
        parts.append({"type": "text", "content": message["content"]})
    for call in message.get("tool_calls", ()):
        function = call["function"]
        parts.append({"type": "tool_call", "id": call["id"], "name": function["name"],
                      "arguments": function["arguments"]})  # fmt: skip
    if message["role"] == "tool":
        parts.append({"type": "tool_call_response", "id": message["tool_call_id"],
                      "response": message["content"]})  # fmt: skip
    return {"role": message["role"], "parts": parts}
