"""The guard as a Google ADK plugin (or an agent's model callbacks): a rejected final
reply becomes a call of the guard's own tool, whose answer is the nudge, so the model
answers again inside the same invocation.

    from factledger.guards.for_google_adk import FactLedgerGuard
    runner = InMemoryRunner(agent=agent, plugins=[FactLedgerGuard()])  # every agent
    agent = guard(LlmAgent(name=..., model=model, tools=[git_push]))   # or one agent

`after_model_callback` sees each model response before ADK turns it into an event; a
complete one (not `partial`) with text and no function calls is the reply under test.
The turn is read from the session's events (the user's request, each function call with
its arguments, each function response, the nudges already sent) plus that response.
ADK's flow calls the model again only after function calls, so a nudge is ADK's own
in-run retry, the one its `ReflectAndRetryModelPlugin` uses: the response is replaced
by the rejected text plus a call of `factledger_guard`, a tool that `before_model_callback`
puts in the request's `tools_dict` (not among the tools the model is offered); the flow
runs it, its answer (the nudge) goes to the model as that call's function response,
and the model answers again. At most `max_nudges` nudges; then the escalated footnote
replaces the reply's text, or, with `on_exhausted="raise"`, the runner raises ADK's
`RuntimeError` from `GuardExhausted` (ADK has no error type for a model output that
failed a check: its model-retry plugin raises a `RuntimeError` when its retries are
spent, and its plugin manager hands on any plugin's error as one, `from` the original).

An agent with an `output_schema` answers in JSON, not with a reply: it passes unchecked.
`run_live` (bidirectional streaming over a live model connection) is not tested: the
scripted LLM the adapter is tested against has no live API.

Streaming (`RunConfig(streaming_mode=StreamingMode.SSE)`): the partial responses are not
checked, the complete one that follows them is; ADK yields the partials before the check,
so `held(runner.run_async(...))` holds each response's partial events until its complete
event, and drops them when that event is a nudge. Each decision is recorded on the span
current in the callback: ADK's `invoke_agent` span (or its `call_llm` span, where ADK's
tracing schema makes one).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar, Unpack

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from factledger.guards import telemetry
from factledger.guards.policy import (
    Decision,
    GuardExhausted,
    GuardOptions,
    GuardPolicy,
    as_sent,
    marked,
)

# The guard's own tool (its call carries the nudge, its answer hands it to the model) is
# named by the processors, which build every turn without its calls.
from factledger.processors.nudges import GUARD_TOOL

AgentT = TypeVar("AgentT", bound=LlmAgent)

_FAILED_RESPONSE = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
"""`response_type` of the function response ADK's `ReflectAndRetryToolPlugin` gives for
a tool that raised: the call failed, its error the response."""


def factledger_guard(nudge: str) -> str:
    """FactLedger's self-correction note on the reply just given. Called by the guard,
    never by the model: it is not among the tools the model is offered."""
    return nudge


_NUDGE_TOOL = FunctionTool(func=factledger_guard)


class FactLedgerGuard(BasePlugin):
    """The guard for every `LlmAgent` of a runner (`plugins=[FactLedgerGuard()]`); one
    instance serves every invocation (the nudges sent are read from the session)."""

    def __init__(
        self,
        *,
        policy: GuardPolicy | None = None,
        name: str = GUARD_TOOL,
        **options: Unpack[GuardOptions],
    ) -> None:
        super().__init__(name=name)
        self.policy = policy or GuardPolicy(**options)

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        offer_nudge_tool(llm_request)
        return None

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        return await guarded_response(self.policy, callback_context, llm_response)


def guard(
    agent: AgentT,
    *,
    policy: GuardPolicy | None = None,
    **options: Unpack[GuardOptions],
) -> AgentT:
    """Add the guard to one agent's own model callbacks (after those it has); return it.
    A plugin's callback that answers first (ADK runs plugins before agents) skips it."""
    chosen = policy or GuardPolicy(**options)

    def before(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        offer_nudge_tool(llm_request)

    async def after(
        callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        try:
            return await guarded_response(chosen, callback_context, llm_response)
        except GuardExhausted as error:
            # ADK hands an agent callback's error on as it is, a plugin's as its own
            # `RuntimeError`: the caller gets the same error from either.
            raise RuntimeError(str(error)) from error

    agent.before_model_callback = [*_listed(agent.before_model_callback), before]
    agent.after_model_callback = [*_listed(agent.after_model_callback), after]
    return agent


def offer_nudge_tool(llm_request: LlmRequest) -> None:
    """Let the flow run the guard's tool: it runs the calls of `tools_dict`'s tools."""
    llm_request.tools_dict[GUARD_TOOL] = _NUDGE_TOOL


async def guarded_response(
    policy: GuardPolicy, callback_context: CallbackContext, llm_response: LlmResponse
) -> LlmResponse | None:
    """The decision on a complete text response as ADK's callback answer: None to leave
    it (pass, or not a final reply), the text plus the guard's call (nudge), the
    footnoted text (annotate); set to raise, raises `GuardExhausted` (ADK's plugin
    manager hands it on as its `RuntimeError`)."""
    content = llm_response.content
    if llm_response.partial or content is None or llm_response.get_function_calls():
        return None
    reply = _text(content.parts or [])
    if not reply:
        return None
    agent = callback_context.get_invocation_context().agent
    if getattr(agent, "output_schema", None) is not None:  # its JSON output is no reply
        return None
    transcript = transcript_of(callback_context.session.events, reply)
    decision = await _decide(policy, transcript)
    telemetry.record(decision)
    parts = list(content.parts or [])
    if decision.action == "nudge":
        call = types.FunctionCall(
            id=f"{GUARD_TOOL}-{uuid.uuid4().hex[:12]}",
            name=GUARD_TOOL,
            args={"nudge": decision.nudge or ""},
        )
        nudged = [*parts, types.Part(function_call=call)]
        return LlmResponse(content=types.Content(role="model", parts=nudged))
    if decision.action == "raise":
        raise decision.error()
    if decision.action == "annotate":
        kept = [p for p in parts if p.thought or p.text is None]
        footnoted = [*kept, types.Part(text=decision.reply)]
        return LlmResponse(content=types.Content(role="model", parts=footnoted))
    return None


async def held(events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """A streamed run's events (`runner.run_async(...)` with SSE) with each response's
    partial events held until its complete event, which the guard has checked: released
    before it, or dropped when it is a nudge (that attempt's text was rejected)."""
    partials: list[Event] = []
    async for event in events:
        if event.partial:
            partials.append(event)
            continue
        if not is_nudge(event):
            for partial in partials:
                yield partial
        partials.clear()
        yield event
    for partial in partials:  # a run that ends on partials (ADK warns of it) loses none
        yield partial


def is_nudge(event: Event) -> bool:
    """True for the event of a response the guard rejected (it calls the guard's tool)."""
    return any(call.name == GUARD_TOOL for call in event.get_function_calls())


async def _decide(policy: GuardPolicy, transcript: dict[str, Any]) -> Decision:
    if not policy.verifiers:  # a check alone takes about a millisecond
        return policy.decide(transcript)
    # Verifiers ask their sources for up to `budget_seconds`: not on the event loop.
    return await asyncio.to_thread(policy.decide, transcript)


def transcript_of(events: Sequence[Event], reply: str) -> dict[str, Any]:
    """The session's events as an OpenAI-style transcript ending in `reply`: the user's
    messages, each agent response with its function calls, each function response (a
    tool's, or the guard's nudge as the user message it stands for)."""
    messages: list[dict[str, Any]] = []
    for event in events:
        parts = event.content.parts if event.content is not None else None
        if event.partial or not parts:
            continue
        text = _text(parts)
        if event.author == "user" and text:
            messages.append({"role": "user", "content": text})
        elif text or event.get_function_calls():
            messages.append(_assistant(text, event.get_function_calls()))
        for response in event.get_function_responses():
            messages.append(_response_message(response))
    messages.append({"role": "assistant", "content": reply})
    return {"messages": messages}


def _assistant(text: str, calls: Sequence[types.FunctionCall]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    # The guard's call stands for no tool: its nudge follows as a user message.
    tool_calls = [
        {
            "id": call.id or "",
            "type": "function",
            "function": {"name": call.name or "", "arguments": _json(call.args or {})},
        }
        for call in calls
        if call.name != GUARD_TOOL
    ]
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _response_message(response: types.FunctionResponse) -> dict[str, Any]:
    answer: Any = response.response or {}
    # FunctionTool hands a tool's non-dict return value over as {"result": value}.
    if isinstance(answer, dict) and set(answer) == {"result"}:
        answer = answer["result"]
    text = answer if isinstance(answer, str) else _json(answer)
    if response.name == GUARD_TOOL and marked(text):
        return {"role": "user", "content": as_sent(text)}
    failed = isinstance(answer, dict) and answer.get("response_type") == _FAILED_RESPONSE
    return {"role": "tool", "tool_call_id": response.id or "", "content": text, "is_error": failed}


def _text(parts: Sequence[types.Part]) -> str:
    """The text the model said (its thoughts are not the reply)."""
    return "".join(p.text for p in parts if p.text and not p.thought)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _listed(callbacks: Any) -> list[Any]:
    """An agent's callback field (none, one, or a list) as a list."""
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, list) else [callbacks]
