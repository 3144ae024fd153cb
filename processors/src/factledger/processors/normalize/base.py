"""What a span means for turn assembly, whatever convention it was written in.

`normalize(span)` (in `processors.normalize.dispatch`) returns one of these values, or
None for a span that says nothing about an agent turn (HTTP, database, framework noise).

Each class spells out its `__init__` (`init=False`), storing fields with
`object.__setattr__`: mypyc compiles that to native stores, where the `__init__` that
dataclasses generates stays interpreted Python (some 25 times slower, and one of these is
made for every message and span). Fields and defaults are those of the class body;
tests/unit/test_explicit_inits.py checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import ToolDefinition


@dataclass(frozen=True, init=False)
class ToolCallPart:
    """A tool call requested in an assistant message."""

    call_id: str
    name: str
    arguments: str = ""
    """The arguments as JSON text ("" when absent)."""
    item_id: str = ""
    """The OpenAI Responses API item id (`fc_…`) a writer named the call by, when its call
    id (`call_…`) was read from the result answering it: other LLM calls of the turn may
    name the same call by this id."""

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: str = "",
        item_id: str = "",
    ) -> None:
        object.__setattr__(self, "call_id", call_id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "arguments", arguments)
        object.__setattr__(self, "item_id", item_id)


@dataclass(frozen=True, init=False)
class ChatMessage:
    """One message of an LLM call's input or output, reduced to what validation needs."""

    role: str
    """"system", "user", "assistant" or "tool"."""
    text: str = ""
    tool_calls: tuple[ToolCallPart, ...] = ()
    tool_call_id: str = ""
    """For a tool message: the call it answers."""
    is_error: bool = False
    name: str = ""
    """The speaker a user or assistant message names (Chat Completions' and GenAI's `name`,
    OpenInference's `message.name`): in a group chat, the agent or person who said it."""

    def __init__(
        self,
        role: str,
        text: str = "",
        tool_calls: tuple[ToolCallPart, ...] = (),
        tool_call_id: str = "",
        is_error: bool = False,
        name: str = "",
    ) -> None:
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "tool_calls", tool_calls)
        object.__setattr__(self, "tool_call_id", tool_call_id)
        object.__setattr__(self, "is_error", is_error)
        object.__setattr__(self, "name", name)


@dataclass(frozen=True, init=False)
class LlmStep:
    """An LLM call (chat/completion span)."""

    span_id: str
    input_messages: tuple[ChatMessage, ...] = ()
    output_messages: tuple[ChatMessage, ...] = ()
    model: str = ""
    provider: str = ""
    system_instructions: str = ""
    tools: tuple[ToolDefinition, ...] | None = None
    conversation_id: str = ""
    agent_name: str = ""
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0
    response_id: str = ""
    """The id the provider gave this call's response (OpenAI Responses `resp_…`)."""
    previous_response_id: str = ""
    """The response this call continues (the Responses API's `previous_response_id`): its
    input holds only what came after that response, whose call holds the history."""

    def __init__(
        self,
        span_id: str,
        input_messages: tuple[ChatMessage, ...] = (),
        output_messages: tuple[ChatMessage, ...] = (),
        model: str = "",
        provider: str = "",
        system_instructions: str = "",
        tools: tuple[ToolDefinition, ...] | None = None,
        conversation_id: str = "",
        agent_name: str = "",
        start_time_unix_nano: int = 0,
        end_time_unix_nano: int = 0,
        response_id: str = "",
        previous_response_id: str = "",
    ) -> None:
        object.__setattr__(self, "span_id", span_id)
        object.__setattr__(self, "input_messages", input_messages)
        object.__setattr__(self, "output_messages", output_messages)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "provider", provider)
        object.__setattr__(self, "system_instructions", system_instructions)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "conversation_id", conversation_id)
        object.__setattr__(self, "agent_name", agent_name)
        object.__setattr__(self, "start_time_unix_nano", start_time_unix_nano)
        object.__setattr__(self, "end_time_unix_nano", end_time_unix_nano)
        object.__setattr__(self, "response_id", response_id)
        object.__setattr__(self, "previous_response_id", previous_response_id)


@dataclass(frozen=True, init=False)
class ToolExecution:
    """A tool execution span (`execute_tool`, OpenInference TOOL, Traceloop tool)."""

    span_id: str
    name: str
    call_id: str = ""
    arguments: str = ""
    result: str | None = None
    error: bool = False
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0

    def __init__(
        self,
        span_id: str,
        name: str,
        call_id: str = "",
        arguments: str = "",
        result: str | None = None,
        error: bool = False,
        start_time_unix_nano: int = 0,
        end_time_unix_nano: int = 0,
    ) -> None:
        object.__setattr__(self, "span_id", span_id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "call_id", call_id)
        object.__setattr__(self, "arguments", arguments)
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "start_time_unix_nano", start_time_unix_nano)
        object.__setattr__(self, "end_time_unix_nano", end_time_unix_nano)


@dataclass(frozen=True, init=False)
class AgentInvocation:
    """An agent span (`invoke_agent`, OpenInference AGENT/CHAIN root, Traceloop workflow)."""

    span_id: str
    agent_name: str = ""
    conversation_id: str = ""
    model: str = ""
    input_text: str = ""
    output_text: str = ""
    tools: tuple[ToolDefinition, ...] | None = None
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)
    wrapper: bool = False
    """The span wraps a run rather than being an agent's own (the OpenAI Agents SDK's trace
    span, a Traceloop workflow, LangGraph's graph under its default name): its name is the
    run's, and an agent span inside it names the turn's agent."""
    messages: tuple[ChatMessage, ...] = ()
    """The whole conversation, where the run's recorded result holds it (a Haystack
    Agent's `messages`): a turn whose LLM calls no span recorded is read from it."""
    previous_response_id: str = ""
    """The response the run's first LLM call continues (`LlmStep.previous_response_id`),
    where the agent span names it and its calls' spans do not."""

    def __init__(
        self,
        span_id: str,
        agent_name: str = "",
        conversation_id: str = "",
        model: str = "",
        input_text: str = "",
        output_text: str = "",
        tools: tuple[ToolDefinition, ...] | None = None,
        start_time_unix_nano: int = 0,
        end_time_unix_nano: int = 0,
        extra: Mapping[str, Any] | None = None,
        wrapper: bool = False,
        messages: tuple[ChatMessage, ...] = (),
        previous_response_id: str = "",
    ) -> None:
        object.__setattr__(self, "span_id", span_id)
        object.__setattr__(self, "agent_name", agent_name)
        object.__setattr__(self, "conversation_id", conversation_id)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "input_text", input_text)
        object.__setattr__(self, "output_text", output_text)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "start_time_unix_nano", start_time_unix_nano)
        object.__setattr__(self, "end_time_unix_nano", end_time_unix_nano)
        object.__setattr__(self, "extra", {} if extra is None else extra)
        object.__setattr__(self, "wrapper", wrapper)
        object.__setattr__(self, "messages", messages)
        object.__setattr__(self, "previous_response_id", previous_response_id)


NormalizedSpan = LlmStep | ToolExecution | AgentInvocation
