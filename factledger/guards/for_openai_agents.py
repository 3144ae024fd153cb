"""The guard around an OpenAI Agents SDK run: check the run's result, and retry the run
with the nudge as the conversation's next user message.

    from factledger.guards.for_openai_agents import run
    result = await run(agent, "Push branch main of acme/shop.")   # result.final_output: checked

The SDK's output guardrails can only trip (`OutputGuardrailTripwireTriggered` ends the
run) and see the final output without the run's tool calls, so the guard checks the run
result instead: `RunResult.to_input_list()` holds the request, every tool call with its
output, and the reply. A rejected reply is retried the way the SDK continues a
conversation: a new run of the last agent on that list plus the nudge (with a `session`,
on the nudge alone: the session holds the rest). At most `max_nudges` retries; then the
escalated footnote replaces `final_output`, or, with `on_exhausted="raise"`, the SDK's
`OutputGuardrailTripwireTriggered` is raised with the guard's decision as the tripped
guardrail's `output_info`.

Streaming: `run_streamed` runs each attempt with `Runner.run_streamed`, hands every event
to `on_event` and returns the last attempt's `RunResultStreaming`. A structured (non-text)
`final_output` is returned unchecked. Each decision is
recorded on a `factledger.guard` span around the whole run (factledger.guards.telemetry).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from agents import Agent, Runner
from agents.exceptions import OutputGuardrailTripwireTriggered
from agents.guardrail import GuardrailFunctionOutput, OutputGuardrail, OutputGuardrailResult
from agents.result import RunResult, RunResultStreaming
from opentelemetry import trace

from factledger.guards import telemetry
from factledger.guards.policy import Decision, GuardOptions, GuardPolicy
from factledger.processors.assembly.transcript import content_text

ResultT = TypeVar("ResultT", RunResult, RunResultStreaming)

_tracer = trace.get_tracer("factledger.guards")
"""The run's own span: the SDK traces to its own processors, not to OpenTelemetry, so
the guard's decisions of one run share a span of the guard's."""


async def run(
    agent: Agent[Any],
    input: str | list[Any],
    *,
    policy: GuardPolicy | None = None,
    guard: GuardOptions | None = None,
    **run_kwargs: Any,
) -> RunResult:
    """`Runner.run(agent, input, **run_kwargs)` with the guard (`guard=`: its options,
    `{"max_nudges": 2, ...}`, as `GuardPolicy` takes them): the returned result's
    `final_output` is the reply that passed, or the footnoted one."""
    chosen = policy or GuardPolicy(**(guard or {}))

    async def attempt(on: Agent[Any], given: str | list[Any]) -> RunResult:
        return await Runner.run(on, given, **run_kwargs)

    return await _guarded(chosen, agent, input, attempt, "session" in run_kwargs)


async def run_streamed(
    agent: Agent[Any],
    input: str | list[Any],
    *,
    on_event: Callable[[Any], Awaitable[None] | None] | None = None,
    policy: GuardPolicy | None = None,
    guard: GuardOptions | None = None,
    **run_kwargs: Any,
) -> RunResultStreaming:
    """`Runner.run_streamed` with the guard: every attempt's events go to `on_event`
    (a rejected attempt's too: a caller that shows them can drop them on the next
    `AgentUpdatedStreamEvent`); returns the last attempt's finished result."""
    chosen = policy or GuardPolicy(**(guard or {}))

    async def attempt(on: Agent[Any], given: str | list[Any]) -> RunResultStreaming:
        streamed = Runner.run_streamed(on, given, **run_kwargs)
        async for event in streamed.stream_events():
            if on_event is not None:
                handled = on_event(event)
                if handled is not None:
                    await handled
        return streamed

    return await _guarded(chosen, agent, input, attempt, "session" in run_kwargs)


async def _guarded(
    policy: GuardPolicy,
    agent: Agent[Any],
    input: str | list[Any],
    attempt: Callable[[Agent[Any], str | list[Any]], Awaitable[ResultT]],
    has_session: bool,
) -> ResultT:
    with _tracer.start_as_current_span("factledger.guard"):
        result = await attempt(agent, input)
        if not isinstance(result.final_output, str):  # a structured output is not a reply
            return result
        nudges: list[str] = []
        while True:
            history: list[Any] = result.to_input_list()
            decision = await _decide(policy, transcript_of(history), len(nudges))
            telemetry.record(decision)
            if decision.action != "nudge":
                break
            assert decision.nudge is not None
            nudges.append(decision.nudge)
            nudge = {"role": "user", "content": decision.nudge}
            result = await attempt(result.last_agent, [nudge] if has_session else [*history, nudge])
        if decision.action == "raise":
            raise _tripped(decision, result.last_agent)
        result.final_output = decision.reply
        return result


async def _decide(policy: GuardPolicy, transcript: dict[str, Any], nudges_sent: int) -> Decision:
    if not policy.verifiers:  # a check alone takes about a millisecond
        return policy.decide(transcript, nudges_sent=nudges_sent)
    # Verifiers ask their sources for up to `budget_seconds`: not on the event loop.
    return await asyncio.to_thread(policy.decide, transcript, nudges_sent=nudges_sent)


def _tripped(decision: Decision, agent: Agent[Any]) -> OutputGuardrailTripwireTriggered:
    """The SDK's own output-guardrail error, the guard's decision as its `output_info`."""

    def factledger_guard(context: Any, checked: Agent[Any], output: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=decision, tripwire_triggered=True)

    tripped = OutputGuardrailResult(
        guardrail=OutputGuardrail(guardrail_function=factledger_guard, name="factledger_guard"),
        agent_output=decision.reply,
        agent=agent,
        output=GuardrailFunctionOutput(output_info=decision, tripwire_triggered=True),
    )
    error = OutputGuardrailTripwireTriggered(tripped)
    error.args = (f"{error.args[0]}: {decision.error()}",)
    return error


def transcript_of(items: Sequence[Any]) -> dict[str, Any]:
    """Responses API input items (`RunResult.to_input_list()`) as an OpenAI-style
    transcript: user and assistant messages, function calls and their outputs."""
    messages: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {
                "id": str(item.get("call_id", "")),
                "type": "function",
                "function": {"name": item.get("name", ""), "arguments": item.get("arguments", "")},
            }
            if messages and messages[-1]["role"] == "assistant" and not messages[-1]["content"]:
                messages[-1].setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id", "")),
                    "content": output if isinstance(output, str) else json.dumps(output),
                }
            )
        elif kind == "message" and item.get("role") in ("user", "assistant", "system", "developer"):
            messages.append({"role": item["role"], "content": content_text(item.get("content"))})
    return {"messages": messages}
