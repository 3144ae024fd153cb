"""The guard as LangChain `create_agent` middleware: after a model call that ends the
turn (no tool calls), a rejected reply gets the nudge as a new message and the agent
jumps back to the model.

    from factledger.guards.for_langchain import FactLedgerGuard
    agent = create_agent(model, tools=[git_push], middleware=[FactLedgerGuard()])
    state = agent.invoke({"messages": [{"role": "user", "content": "Push ..."}]})

`after_model` reads the turn from the agent state's messages (human, AI with tool calls,
tool messages with their `status`, and the nudges already sent, which stay in the state
as human messages that start with the nudge marker). A reply that passes is left as it
is; a footnoted one replaces the last AI message (same id, so `add_messages` swaps it);
with `on_exhausted="raise"`, LangChain's `OutputParserException` (the error of a model
output that failed validation) is raised from `GuardExhausted`. `invoke`, `stream` and
their async forms run the same nodes, streamed model calls included.

For a LangGraph graph of one's own, `guard_node` is the same guard as a node: the
model's final answer is routed to it, and it sends the graph back to the model with the
nudge or on with the reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command

from factledger.guards import telemetry
from factledger.guards.policy import GuardOptions, GuardPolicy
from factledger.processors.assembly.transcript import content_text


class FactLedgerGuard(AgentMiddleware[AgentState[Any], Any]):
    """The guard's middleware; one instance serves every run of the agent (it keeps
    no state of its own: the nudges sent are read from the messages)."""

    def __init__(
        self,
        *,
        policy: GuardPolicy | None = None,
        **options: Unpack[GuardOptions],
    ) -> None:
        super().__init__()
        self.policy = policy or GuardPolicy(**options)

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages: list[BaseMessage] = list(state["messages"])
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls:
            return None
        nudged, update = guarded_update(self.policy, messages)
        return {**update, "jump_to": "model"} if nudged else update

    @hook_config(can_jump_to=["model"])
    async def aafter_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        if not self.policy.verifiers:  # a check alone takes about a millisecond
            return self.after_model(state, runtime)
        # Verifiers ask their sources for up to `budget_seconds`: not on the event loop.
        # `to_thread` carries the context over, the current span with it.
        return await asyncio.to_thread(self.after_model, state, runtime)


def guard_node(
    *,
    model_node: str,
    then: str = END,
    policy: GuardPolicy | None = None,
    **options: Unpack[GuardOptions],
) -> Callable[[Mapping[str, Any]], Command[str]]:
    """The guard as a node of one's own LangGraph graph, for the edge the model's
    final answer takes (no tool calls): a nudge goes back to `model_node`; otherwise the
    graph goes on to `then` (default: the end), the reply footnoted where it must be.

        graph.add_node("guard", guard_node(model_node="model"), destinations=("model", END))
    """
    chosen = policy or GuardPolicy(**options)

    def factledger_guard(state: Mapping[str, Any]) -> Command[str]:
        messages: list[BaseMessage] = list(state["messages"])
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls:
            return Command(goto=then)
        nudged, update = guarded_update(chosen, messages)
        return Command(goto=model_node if nudged else then, update=update or None)

    return factledger_guard


def guarded_update(
    policy: GuardPolicy, messages: Sequence[BaseMessage]
) -> tuple[bool, dict[str, Any]]:
    """The decision on the last AI message as a state update for `add_messages`: (True,
    the nudge as a human message) to retry, else (False, the footnoted reply under the
    AI message's id, or nothing). Set to raise, raises `OutputParserException`."""
    decision = policy.decide(transcript_of(messages))
    telemetry.record(decision, span=_instrumented_span())
    if decision.action == "nudge":
        return True, {"messages": [HumanMessage(content=decision.nudge or "")]}
    if decision.action == "raise":
        error = decision.error()
        raise OutputParserException(str(error), llm_output=decision.reply) from error
    if decision.action == "annotate":
        return False, {"messages": [AIMessage(content=decision.reply, id=messages[-1].id)]}
    return False, {}


def _instrumented_span() -> Any:
    """The span OpenInference's LangChain instrumentation made for the running graph, if
    it is installed: it traces by callbacks, so none of its spans is ever current, and a
    decision recorded on a span of its own would start a trace apart from the turn."""
    try:
        from openinference.instrumentation.langchain import get_current_span
    except ImportError:
        return None
    span = get_current_span()
    return span if span is not None and span.is_recording() else None


def transcript_of(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """LangChain messages as an OpenAI-style transcript (the last AI message last)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        text = content_text(message.content)
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": text})
        elif isinstance(message, HumanMessage):
            out.append({"role": "user", "content": text})
        elif isinstance(message, AIMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": text}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.get("id") or "",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(call.get("args") or {}, default=str),
                        },
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolMessage):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": text,
                    "is_error": message.status == "error",
                }
            )
    return {"messages": out}
