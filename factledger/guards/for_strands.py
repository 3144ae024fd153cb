"""The guard as a Strands hook provider: after a model call that ends the turn, a rejected
reply is discarded with Strands' own model retry (`AfterModelCallEvent.retry`), the
nudge added to the conversation, and the model answers again in the same run.

    from factledger.guards.for_strands import FactLedgerGuard
    agent = Agent(model=model, tools=[git_push], hooks=[FactLedgerGuard()])
    result = agent("Push branch main of acme/shop.")              # str(result): checked

The hook reads the turn from the agent's own history (`agent.messages`: the user's
request, the assistant's `toolUse` blocks, the `toolResult` blocks with their `status`,
and the nudges already sent, which stay there as user messages that start with the
nudge marker) and the reply under test, the model's message of this call. A retry is
what Strands' own steering does with a `Guide`: `retry = True` drops the reply, and the
nudge, appended to `agent.messages` as a user message, is what the model reads next. A
reply that passes is left as it is; a footnoted one replaces the text of the model's
message, which Strands then adds to the history and returns as the run's result
(`AgentResult.message`); with `on_exhausted="raise"`, Strands' `EventLoopException` (the
error of a failed event-loop step, what `Agent.__call__` raises for one) is raised, its
`original_exception` the guard's `GuardExhausted`.

`agent(...)`, `invoke_async` and `stream_async` run the same event loop, so all three
are checked. Streamed: the rejected reply's text events have already been sent when the
retry discards it (as Strands says of every `AfterModelCallEvent` retry); the result
event carries the reply that passed, or the footnoted one. Structured output
(`structured_output_model`) ends in a tool call, not a reply, and passes unchecked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from strands.hooks import AfterModelCallEvent, HookProvider, HookRegistry
from strands.types.exceptions import EventLoopException

from factledger.guards import telemetry
from factledger.guards.policy import Decision, GuardOptions, GuardPolicy, as_sent, marked

_REPLY_STOPS = frozenset({"end_turn", "stop_sequence"})
"""Stop reasons of a model call that answers the user (`tool_use` asks for tools;
`max_tokens`, `guardrail_intervened` and `cancelled` are Strands' own business)."""


class FactLedgerGuard(HookProvider):
    """The guard's hooks; one instance serves every run of any agent (it keeps no state
    of its own: the nudges sent are read from the agent's messages)."""

    def __init__(
        self,
        *,
        policy: GuardPolicy | None = None,
        **options: Unpack[GuardOptions],
    ) -> None:
        self.policy = policy or GuardPolicy(**options)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the check on every model call's end (`AfterModelCallEvent`)."""
        registry.add_callback(AfterModelCallEvent, self.after_model_call)

    async def after_model_call(self, event: AfterModelCallEvent) -> None:
        """Check a reply that ends the turn; retry it with the nudge, footnote it, or
        raise. Strands runs it in the event loop cycle's span, where it records."""
        response = event.stop_response
        if response is None or response.stop_reason not in _REPLY_STOPS:
            return
        message = response.message
        if any(_is_block(block, "toolUse") for block in message.get("content") or []):
            return
        agent = event.agent
        decision = await _decide(self.policy, transcript_of(agent.messages, reply_of(message)))
        telemetry.record(decision)
        if decision.action == "nudge":
            # As Strands' own steering handler applies a `Guide`: the nudge a user message
            # of its own (for a Bedrock model that rejects a user turn after a tool-result
            # turn, Strands' BedrockModel separates the two), the reply dropped by the retry.
            agent.messages.append({"role": "user", "content": [{"text": decision.nudge or ""}]})
            event.retry = True
        elif decision.action == "raise":
            error = decision.error()
            raise EventLoopException(error) from error
        elif decision.action == "annotate":
            message["content"] = _with_reply(message.get("content") or [], decision.reply)


async def _decide(policy: GuardPolicy, transcript: dict[str, Any]) -> Decision:
    if not policy.verifiers:  # a check alone takes about a millisecond
        return policy.decide(transcript)
    # Verifiers ask their sources for up to `budget_seconds`: not on the event loop.
    # `to_thread` carries the context over, the current span with it.
    return await asyncio.to_thread(policy.decide, transcript)


def reply_of(message: Mapping[str, Any]) -> str:
    """A model message's reply: its text blocks, joined (reasoning is not the reply)."""
    return "\n".join(
        block["text"]
        for block in message.get("content") or []
        if isinstance(block, Mapping) and isinstance(block.get("text"), str)
    )


def _with_reply(content: Sequence[Any], reply: str) -> list[Any]:
    """The message's blocks with its text blocks replaced by one: `reply`, where the
    first of them stood (other blocks, reasoning and citations, kept in place)."""
    out: list[Any] = []
    placed = False
    for block in content:
        if isinstance(block, Mapping) and "text" in block:
            if not placed:
                out.append({"text": reply})
                placed = True
            continue
        out.append(block)
    if not placed:
        out.append({"text": reply})
    return out


def transcript_of(messages: Sequence[Mapping[str, Any]], reply: str) -> dict[str, Any]:
    """Strands' messages (Bedrock Converse content blocks) as an OpenAI-style transcript
    ending in `reply`: text as user and assistant messages, `toolUse` blocks as the
    assistant's tool calls, `toolResult` blocks as tool messages (`status: "error"` as
    `is_error`), and each nudge a user message of its own (also one that was joined to
    the user message before it, as a text block of its own)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        blocks = [b for b in message.get("content") or [] if isinstance(b, Mapping)]
        texts = [b["text"] for b in blocks if isinstance(b.get("text"), str)]
        if role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
            calls = [_call(b["toolUse"]) for b in blocks if _is_block(b, "toolUse")]
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif role == "user":
            out.extend(_result(b["toolResult"]) for b in blocks if _is_block(b, "toolResult"))
            said = "\n".join(t for t in texts if not marked(t))
            if said:
                out.append({"role": "user", "content": said})
            out.extend({"role": "user", "content": as_sent(t)} for t in texts if marked(t))
    out.append({"role": "assistant", "content": reply})
    return {"messages": out}


def _is_block(block: Any, kind: str) -> bool:
    return isinstance(block, Mapping) and isinstance(block.get(kind), Mapping)


def _call(use: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": str(use.get("toolUseId", "")),
        "type": "function",
        "function": {"name": str(use.get("name", "")), "arguments": _json(use.get("input"))},
    }


def _result(result: Mapping[str, Any]) -> dict[str, Any]:
    parts: list[str] = []
    for block in result.get("content") or []:
        if not isinstance(block, Mapping):
            continue
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif "json" in block:
            parts.append(_json(block["json"]))
    return {
        "role": "tool",
        "tool_call_id": str(result.get("toolUseId", "")),
        "content": "\n".join(parts),
        "is_error": result.get("status") == "error",
    }


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value if value is not None else {}, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
