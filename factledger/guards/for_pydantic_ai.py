"""The guard as a Pydantic AI output validator: a rejected reply raises `ModelRetry` with
the nudge, so the model answers again inside the same run.

    from factledger.guards.for_pydantic_ai import guard
    agent = guard(Agent(model, tools=[git_push], retries={"output": 2}))
    result = agent.run_sync("Push branch main of acme/shop.")   # result.output: checked

The validator reads the run's own messages (`RunContext.messages`: the user prompt, tool
calls, tool returns and the nudges already sent, which Pydantic AI keeps as retry
feedback) and the output under test. Pydantic AI counts output retries itself and ends a
run that exceeds them (`retries={"output": n}`, default 1): the guard nudges at most
`min(max_nudges, ctx.max_retries)` times, so it never spends a retry the agent lacks.

Text output only: a structured output passes untouched. Partial outputs (streaming) are
not checked; the final one is. `Agent.run_stream()` does not retry a validator's
`ModelRetry` (it ends the run), so a streamed run that must retry streams through
`run(event_stream_handler=...)`; with `run_stream()` use `max_nudges=0` (footnote only).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar, Unpack

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from factledger.guards import telemetry
from factledger.guards.policy import GuardOptions, GuardPolicy, as_sent, marked
from factledger.processors.assembly.transcript import content_text

AgentT = TypeVar("AgentT", bound=Agent[Any, Any])

_ERROR_OUTCOMES = frozenset({"failed", "denied", "interrupted"})
"""Tool return outcomes that mean the call did not do its job (`retried` is feedback)."""


def guard(
    agent: AgentT,
    *,
    policy: GuardPolicy | None = None,
    **options: Unpack[GuardOptions],
) -> AgentT:
    """Register the guard on `agent` as an output validator and return the agent.

    `on_exhausted="raise"` raises Pydantic AI's `UnexpectedModelBehavior` (from
    `GuardExhausted`) when the reply is still rejected after the nudges."""
    chosen = policy or GuardPolicy(**options)

    def factledger_guard(ctx: RunContext[Any], output: Any) -> Any:
        if ctx.partial_output or not isinstance(output, str):
            return output
        allowed = min(chosen.max_nudges, ctx.max_retries)
        effective = chosen if allowed == chosen.max_nudges else replace(chosen, max_nudges=allowed)
        decision = effective.decide(transcript_of(ctx.messages, output))
        telemetry.record(decision)
        if decision.action == "nudge":
            assert decision.nudge is not None
            raise ModelRetry(decision.nudge)
        if decision.action == "raise":
            raise UnexpectedModelBehavior(str(decision.error())) from decision.error()
        return decision.reply

    agent.output_validator(factledger_guard)
    return agent


def transcript_of(messages: Sequence[ModelMessage], output: str) -> dict[str, Any]:
    """The run's messages as an OpenAI-style transcript ending in `output`."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            out.extend(_request_messages(message))
        elif isinstance(message, ModelResponse):
            out.extend(_response_messages(message))
    # The response under test is the run's last one; the output stands for its text.
    if out and out[-1]["role"] == "assistant" and not out[-1].get("tool_calls"):
        out.pop()
    out.append({"role": "assistant", "content": output})
    return {"messages": out}


def _request_messages(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in request.parts:
        if isinstance(part, SystemPromptPart):
            out.append({"role": "system", "content": part.content})
        elif isinstance(part, UserPromptPart):
            out.append({"role": "user", "content": _text(part.content)})
        elif isinstance(part, ToolReturnPart):
            text = _text(part.content)
            if part.outcome == "retried" and marked(text):
                out.append({"role": "user", "content": as_sent(text)})
            else:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": part.tool_call_id,
                        "content": text,
                        "is_error": part.outcome in _ERROR_OUTCOMES,
                    }
                )
        elif isinstance(part, RetryFeedbackPart | RetryPromptPart):
            text = _text(part.content)
            # Only FactLedger's own nudges stand in the turn; other feedback is the
            # framework's business, as a user message it would start a new turn.
            if marked(text):
                out.append({"role": "user", "content": as_sent(text)})
    return out


def _response_messages(response: ModelResponse) -> list[dict[str, Any]]:
    text = "\n".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
        }
        for p in response.parts
        if isinstance(p, ToolCallPart)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return [message]


def _text(content: Any) -> str:
    """A part's content as the model saw it: strings as they are, values as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(c, str) for c in content):
        return content_text(content)
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)
