"""What a span means for turn assembly, whatever convention it was written in.

`normalize(span)` (in `processors.normalize.dispatch`) returns one of these values, or
None for a span that says nothing about an agent turn (HTTP, database, framework noise).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import ToolDefinition


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


NormalizedSpan = LlmStep | ToolExecution | AgentInvocation
