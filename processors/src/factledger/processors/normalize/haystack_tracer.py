"""Spans written by Haystack's own tracer (`OpenTelemetryTracer`, the `opentelemetry-haystack`
integration), chosen by their `haystack.` names and attributes.

Haystack names each operation it traces `haystack.<operation>` and tags it with
`haystack.*` attributes only: no OpenInference, GenAI or other convention's keys. With
content tracing on (`HAYSTACK_CONTENT_TRACING_ENABLED`), the inputs and outputs are JSON
of the values serialized (`ChatMessage.to_dict` by way of `_to_trace_dict`, read by
`haystack_messages.message_dicts`); without it, the spans carry no content and say little.

- `haystack.agent.run`: an Agent's run (`haystack.agent.input` `{"messages": [...]}`,
  `haystack.agent.output` `{"messages": [...], "last_message": {...}}`, the tools offered
  `haystack.agent.tools`). A Haystack Agent has no name: the run names no agent. Its
  output's messages are the whole conversation.
- `haystack.agent.step.llm`: an Agent's call of its chat generator
  (`haystack.agent.step.llm.input` `{"messages", "tools"}`, `.output` `{"replies"}`);
  `haystack.component.run` (a pipeline's component) and `haystack.chat_generator.run` (a
  generator run by another component) are LLM calls too where their
  `haystack.component.output` holds replies (an Agent component's span, around its
  `haystack.agent.run`, holds none). The model is the replies' `meta.model`.
- `haystack.agent.step.tool`: one tool call (`haystack.tool.name`,
  `haystack.agent.step.tool.input` the arguments, `.output` the result, or `{"error": ...}`
  with `haystack.tool.error` true when the tool failed). The call's id is not recorded.

Everything else (`haystack.pipeline.run`, `haystack.agent.step`, hooks, an Agent's own
component span around its `haystack.agent.run`) says nothing a turn needs: None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spans import SpanRecord
from .base import AgentInvocation, LlmStep, NormalizedSpan, ToolExecution
from .haystack_messages import message_dicts, tool_dicts
from .messages import last_text
from .values import arguments_text, as_text, load_json, string

PREFIX = "haystack."
AGENT_RUN = "haystack.agent.run"
AGENT_LLM = "haystack.agent.step.llm"
AGENT_TOOL = "haystack.agent.step.tool"
_GENERATOR_SPANS = frozenset({"haystack.component.run", "haystack.chat_generator.run"})


def detects(span: SpanRecord) -> bool:
    """Whether Haystack's tracer wrote the span: its name is a Haystack operation
    (`haystack.…`), or it carries `haystack.*` attributes."""
    return span.name.startswith(PREFIX) or any(k.startswith(PREFIX) for k in span.attributes)


def normalize_haystack_tracer(span: SpanRecord) -> NormalizedSpan | None:
    """Agent runs, LLM calls and tool calls; None for Haystack's other spans."""
    if span.name == AGENT_RUN:
        return _agent(span)
    if span.name == AGENT_LLM:
        return _llm(span, AGENT_LLM + ".input", AGENT_LLM + ".output")
    if span.name == AGENT_TOOL:
        return _tool(span)
    if span.name in _GENERATOR_SPANS:
        step = _llm(span, "haystack.component.input", "haystack.component.output")
        # Only a generator replies: an Agent component's span (messages in, messages out)
        # wraps the `haystack.agent.run` inside it, and other components are no calls.
        return step if step is not None and step.output_messages else None
    return None


def _field(span: SpanRecord, key: str, name: str) -> Any:
    parsed = load_json(span.attributes.get(key))
    return parsed.get(name) if isinstance(parsed, Mapping) else None


def _agent(span: SpanRecord) -> AgentInvocation:
    key = AGENT_RUN.removesuffix(".run")
    request = message_dicts(_field(span, key + ".input", "messages"))
    last = message_dicts(_field(span, key + ".output", "last_message"))
    return AgentInvocation(
        span_id=span.span_id,
        agent_name="",
        model=_model(_field(span, key + ".output", "last_message")),
        input_text=last_text(request, "user"),
        output_text=last_text(last, "assistant"),
        tools=tool_dicts(load_json(span.attributes.get(key + ".tools"))),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        messages=message_dicts(_field(span, key + ".output", "messages")),
    )


def _llm(span: SpanRecord, input_key: str, output_key: str) -> LlmStep | None:
    inputs = message_dicts(_field(span, input_key, "messages"))
    raw_replies = _field(span, output_key, "replies")
    replies = message_dicts(raw_replies)
    if not inputs and not replies:
        return None  # a component that is no chat generator (or content tracing is off)
    return LlmStep(
        span_id=span.span_id,
        input_messages=inputs,
        output_messages=replies,
        model=_model(raw_replies),
        tools=tool_dicts(_field(span, input_key, "tools")),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _model(messages: Any) -> str:
    """The model a reply's `meta.model` names (the last reply naming one)."""
    items = messages if isinstance(messages, list) else [messages]
    for item in reversed(items):
        meta = item.get("meta") if isinstance(item, Mapping) else None
        model = meta.get("model") if isinstance(meta, Mapping) else None
        if isinstance(model, str) and model:
            return model
    return ""


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    raw_output = attributes.get(AGENT_TOOL + ".output")
    failed = attributes.get("haystack.tool.error") is True or span.is_error
    result: str | None = None
    if raw_output is not None:
        parsed = load_json(raw_output)
        error = parsed.get("error") if failed and isinstance(parsed, Mapping) else None
        result = error if isinstance(error, str) else as_text(raw_output)
    return ToolExecution(
        span_id=span.span_id,
        name=string(attributes, "haystack.tool.name"),
        arguments=arguments_text(load_json(attributes.get(AGENT_TOOL + ".input"))),
        result=result,
        error=failed,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )
