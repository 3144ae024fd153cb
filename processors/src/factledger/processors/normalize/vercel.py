"""Vercel AI SDK spans (`ai.*` attributes), chosen by `ai.operationId`.

- `ai.generateText.doGenerate`, `ai.streamText.doStream` (and the `Object` variants): one
  provider call. Input from `ai.prompt.messages`; output from `ai.response.text` (or
  `ai.response.object`) and `ai.response.toolCalls` (`[{toolCallId, toolName, args |
  input}]`); tools from `ai.prompt.tools`; model `ai.response.model`, else `ai.model.id`.
- `ai.generateText`, `ai.streamText`, `ai.generateObject`, `ai.streamObject`: the whole
  call with its steps, an agent run named by `ai.telemetry.functionId`.
- `ai.toolCall`: `ai.toolCall.{name, id, args | input, result | output}`; a tool that threw
  has its exception's message as the result.

Embedding spans and anything else normalize to None.
"""

from __future__ import annotations

from ..spans import SpanRecord
from .base import AgentInvocation, ChatMessage, LlmStep, NormalizedSpan, ToolExecution
from .messages import read_messages, request_text, tool_result
from .values import (
    arguments_text,
    as_text,
    conversation_id,
    exception_message,
    first,
    load_json,
    string,
    tool_definitions,
)

LLM_OPERATIONS = frozenset(
    {
        "ai.generateText.doGenerate",
        "ai.streamText.doStream",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    }
)
CALL_OPERATIONS = frozenset(
    {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
)
TOOL_OPERATION = "ai.toolCall"


def operation(span: SpanRecord) -> str:
    """`ai.operationId`, else the first word of `operation.name`, else an `ai.` span name."""
    op = string(span.attributes, "ai.operationId")
    if op:
        return op
    words = string(span.attributes, "operation.name").split()
    if words and words[0].startswith("ai."):
        return words[0]
    return span.name if span.name.startswith("ai.") else ""


def detects(span: SpanRecord) -> bool:
    """Whether the span is an AI SDK span: an `ai.` operation with `ai.*` attributes."""
    return "ai.operationId" in span.attributes or (
        operation(span) != "" and any(str(k).startswith("ai.") for k in span.attributes)
    )


def normalize_vercel(span: SpanRecord) -> NormalizedSpan | None:
    """Provider calls as LLM steps, tool calls as tool executions, top-level calls as agent
    runs; None for embeddings and other operations."""
    op = operation(span)
    if op in LLM_OPERATIONS:
        return _llm(span)
    if op == TOOL_OPERATION:
        return _tool(span)
    if op in CALL_OPERATIONS:
        return _call(span, op)
    return None


def _response_text(span: SpanRecord) -> str:
    text = string(span.attributes, "ai.response.text")
    return text or as_text(span.attributes.get("ai.response.object"))


def _llm(span: SpanRecord) -> LlmStep:
    attributes = span.attributes
    text = _response_text(span)
    calls = read_messages(
        {"role": "assistant", "tool_calls": load_json(attributes.get("ai.response.toolCalls"))},
        "assistant",
    )
    tool_calls = tuple(call for message in calls for call in message.tool_calls)
    outputs = (
        (ChatMessage(role="assistant", text=text, tool_calls=tool_calls),)
        if text or tool_calls
        else ()
    )
    tools = attributes.get("ai.prompt.tools")
    return LlmStep(
        span_id=span.span_id,
        input_messages=read_messages(attributes.get("ai.prompt.messages"), "user"),
        output_messages=outputs,
        model=string(attributes, "ai.response.model", "ai.model.id", "gen_ai.response.model"),
        provider=string(attributes, "ai.model.provider", "gen_ai.system"),
        tools=None if tools is None else tool_definitions(tools),
        conversation_id=conversation_id(attributes),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    result, result_error = tool_result(
        first(attributes, "ai.toolCall.result", "ai.toolCall.output")
    )
    if result is None and span.is_error:
        # A tool that threw records no result, only the error (an exception event).
        result = exception_message(span)
    return ToolExecution(
        span_id=span.span_id,
        name=string(attributes, "ai.toolCall.name"),
        call_id=string(attributes, "ai.toolCall.id"),
        arguments=arguments_text(first(attributes, "ai.toolCall.args", "ai.toolCall.input")),
        result=result,
        error=span.is_error or result_error,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _call(span: SpanRecord, op: str) -> AgentInvocation:
    attributes = span.attributes
    prompt = attributes.get("ai.prompt")
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=string(attributes, "ai.telemetry.functionId") or op,
        conversation_id=conversation_id(attributes),
        model=string(attributes, "ai.response.model", "ai.model.id"),
        input_text="" if prompt is None else request_text(prompt),
        output_text=_response_text(span),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )
