"""Spans written by the Langfuse SDK (v3), chosen by `langfuse.observation.type`.

The SDK puts an observation's payload in `langfuse.observation.input` / `.output` (JSON),
the model in `langfuse.observation.model.name`, free metadata in
`langfuse.observation.metadata.<key>`, and marks errors with `langfuse.observation.level`
= ERROR. Its LangChain callback handler lists the tools offered to a chat model as
`{"role": "tool", "content": <tool definition>}` messages; they are read as tools here.

- `generation`: an LLM step. `tool`: a tool execution. `agent`: an agent run.
- any other observation (`span`, `chain`, ...) whose output is a LangChain `ToolMessage`
  (how LangGraph records a tool run): a tool execution. Everything else: None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import ToolDefinition
from ..spans import SpanRecord
from .base import AgentInvocation, LlmStep, NormalizedSpan, ToolExecution
from .messages import langchain_tool_message, read_messages, reply_text, request_text, tool_result
from .values import arguments_text, conversation_id, load_json, string, tool_definitions

TYPE = "langfuse.observation.type"
INPUT = "langfuse.observation.input"
OUTPUT = "langfuse.observation.output"
MODEL = "langfuse.observation.model.name"
LEVEL = "langfuse.observation.level"
METADATA = "langfuse.observation.metadata."


def detects(span: SpanRecord) -> bool:
    """Whether the span is a Langfuse SDK observation."""
    return TYPE in span.attributes


def normalize_langfuse(span: SpanRecord) -> NormalizedSpan | None:
    """Generations as LLM steps, tools (and LangChain tool runs) as tool executions,
    agents as agent runs; None for other observations."""
    kind = string(span.attributes, TYPE).lower()
    if kind == "generation":
        return _generation(span)
    if kind == "agent":
        return _agent(span)
    if kind == "tool" or langchain_tool_message(span.attributes.get(OUTPUT))[1] is not None:
        return _tool(span)
    return None


def _error(span: SpanRecord) -> bool:
    return span.is_error or string(span.attributes, LEVEL).upper() == "ERROR"


def _generation(span: SpanRecord) -> LlmStep:
    attributes = span.attributes
    messages, tools = _split_tool_listing(load_json(attributes.get(INPUT)))
    return LlmStep(
        span_id=span.span_id,
        input_messages=read_messages(messages, "user"),
        output_messages=read_messages(attributes.get(OUTPUT), "assistant"),
        model=string(attributes, MODEL),
        provider=string(attributes, METADATA + "ls_provider"),
        tools=tools,
        conversation_id=conversation_id(attributes),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _split_tool_listing(value: Any) -> tuple[Any, tuple[ToolDefinition, ...] | None]:
    """Input messages without the handler's tool listing, and the tools it listed."""
    if not isinstance(value, list):
        return value, None
    messages, listed = [], []
    for item in value:
        if _is_tool_listing(item):
            listed.append(item["content"])
        else:
            messages.append(item)
    return messages, (tool_definitions(listed) if listed else None)


def _is_tool_listing(item: Any) -> bool:
    if not isinstance(item, Mapping) or item.get("role") != "tool":
        return False
    content = item.get("content")
    if not isinstance(content, Mapping) or "tool_call_id" in item:
        return False
    function = content.get("function")
    spec: Mapping[str, Any] = function if isinstance(function, Mapping) else content
    return isinstance(spec.get("name"), str) and ("parameters" in spec or "function" in content)


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    output = attributes.get(OUTPUT)
    call_id, result, error = langchain_tool_message(output)
    if result is None:
        result, error = tool_result(output)
    # The LangChain handler keeps the parsed arguments in metadata; the input is a repr.
    inputs = load_json(attributes.get(METADATA + "inputs"))
    arguments = inputs if isinstance(inputs, Mapping) else attributes.get(INPUT)
    parsed_output = load_json(output)
    name = parsed_output.get("name") if isinstance(parsed_output, Mapping) else None
    return ToolExecution(
        span_id=span.span_id,
        name=name if isinstance(name, str) and name else span.name,
        call_id=call_id,
        arguments=arguments_text(arguments),
        result=result,
        error=_error(span) or error,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _agent(span: SpanRecord) -> AgentInvocation:
    attributes = span.attributes
    raw_input, raw_output = attributes.get(INPUT), attributes.get(OUTPUT)
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=span.name,
        conversation_id=conversation_id(attributes),
        model=string(attributes, MODEL),
        input_text="" if raw_input is None else request_text(raw_input),
        output_text="" if raw_output is None else reply_text(raw_output),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )
