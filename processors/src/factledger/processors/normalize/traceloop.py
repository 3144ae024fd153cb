"""OpenLLMetry / Traceloop entity spans, chosen by `traceloop.span.kind`.

`traceloop.entity.input` / `.output` hold JSON: the SDK's decorators write
`{"args": [...], "kwargs": {...}}` and the result, the LangChain instrumentation
`{"inputs": ..., "tags", "metadata", "kwargs"}` and `{"outputs": ..., "kwargs"}`, for a
tool `{"output": <lc-serialized ToolMessage>, "kwargs"}` (the message's content is the
result, `"status": "error"` the failure, `tool_call_id` the call id).

- `workflow`, `agent`: an agent run named by `traceloop.entity.name` (an agent: else
  `gen_ai.agent.name`; a workflow: else `traceloop.workflow.name`), else the span name
  without its `.workflow` / `.agent` suffix. A workflow wraps a run
  (`AgentInvocation.wrapper`): an agent span inside it names the turn's agent (the OpenAI
  Agents SDK instrumentation's root is a workflow called "Agent Workflow").
- `tool`: a tool execution.
- `task` and anything else: None.

Some instrumentations write GenAI attributes on these spans instead of the entity ones.
The OpenAI Agents SDK instrumentation (`opentelemetry-instrumentation-openai-agents`)
names a tool span `{tool}.tool` with `gen_ai.tool.name`, `gen_ai.tool.call.arguments` and
`gen_ai.tool.call.result`, and an agent span `{agent}.agent` with `gen_ai.agent.name`;
they are read when the `traceloop.entity.*` ones are absent.

OpenLLMetry's LLM spans carry no span kind; they use the deprecated `gen_ai.prompt.N.*`
attributes and are read by `genai`. The conversation id comes from
`traceloop.association.properties.{session_id,conversation_id,thread_id}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spans import SpanRecord
from .base import AgentInvocation, NormalizedSpan, ToolExecution
from .messages import langchain_tool_message, reply_text, request_text, tool_result
from .values import arguments_text, conversation_id, load_json, string

SPAN_KIND = "traceloop.span.kind"
_AGENT_KINDS = frozenset({"workflow", "agent"})


def detects(span: SpanRecord) -> bool:
    """Whether the span declares a Traceloop span kind."""
    return SPAN_KIND in span.attributes


def normalize_traceloop(span: SpanRecord) -> NormalizedSpan | None:
    """Workflows and agents as agent runs, tools as tool executions, everything else None."""
    kind = string(span.attributes, SPAN_KIND).lower()
    if kind in _AGENT_KINDS:
        return _agent(span, kind)
    if kind == "tool":
        return _tool(span)
    return None


def _entity_name(span: SpanRecord, kind: str) -> str:
    name = string(span.attributes, "traceloop.entity.name")
    if name:
        return name
    if kind == "workflow":
        name = string(span.attributes, "traceloop.workflow.name")
    elif kind == "agent":
        name = string(span.attributes, "gen_ai.agent.name")
    elif kind == "tool":
        name = string(span.attributes, "gen_ai.tool.name")
    suffix = "." + kind
    fallback = span.name[: -len(suffix)] if span.name.endswith(suffix) else span.name
    return name or fallback


def _agent(span: SpanRecord, kind: str) -> AgentInvocation:
    attributes = span.attributes
    raw_input = _unwrap(attributes.get("traceloop.entity.input"), "inputs")
    raw_output = _unwrap(attributes.get("traceloop.entity.output"), "outputs")
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=_entity_name(span, kind),
        conversation_id=conversation_id(attributes),
        input_text="" if raw_input is None else request_text(raw_input),
        output_text="" if raw_output is None else reply_text(raw_output),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        extra={"workflow": string(attributes, "traceloop.workflow.name")}
        if kind == "agent" and string(attributes, "traceloop.workflow.name")
        else {},
        wrapper=kind == "workflow",
    )


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    entity_input = attributes.get("traceloop.entity.input")
    entity_output = attributes.get("traceloop.entity.output")
    if entity_input is None:
        arguments = attributes.get("gen_ai.tool.call.arguments")
    else:
        arguments = _arguments(entity_input)
    if entity_output is None:
        output = attributes.get("gen_ai.tool.call.result")
    else:
        output = _tool_output(entity_output)
    call_id, result, error = langchain_tool_message(output)
    if result is None:
        result, error = tool_result(output)
    return ToolExecution(
        span_id=span.span_id,
        name=_entity_name(span, "tool"),
        call_id=call_id
        or _input_call_id(entity_input)
        or string(attributes, "gen_ai.tool.call.id"),
        arguments=arguments_text(arguments),
        result=result,
        error=span.is_error or error,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _unwrap(value: Any, key: str) -> Any:
    parsed = load_json(value)
    if isinstance(parsed, Mapping) and key in parsed:
        return parsed[key]
    return value


def _tool_output(value: Any) -> Any:
    """A tool's output without the LangChain callback's `{"output", "kwargs"}` wrapper
    (a decorated tool's own result, whatever its keys, is kept as it is)."""
    parsed = load_json(value)
    if isinstance(parsed, Mapping) and "output" in parsed and set(parsed) <= {"output", "kwargs"}:
        return parsed["output"]
    return _unwrap(value, "outputs")


def _arguments(value: Any) -> Any:
    """The call's arguments from an entity input, whichever wrapper it came in."""
    parsed = load_json(value)
    if not isinstance(parsed, Mapping):
        return value
    if "inputs" in parsed:
        inner = load_json(parsed["inputs"])
        return inner if isinstance(inner, Mapping) else parsed["inputs"]
    kwargs, args = parsed.get("kwargs"), parsed.get("args")
    if set(parsed) <= {"args", "kwargs"} and isinstance(kwargs, Mapping):
        if not args:
            return kwargs
        if isinstance(args, list) and len(args) == 1 and not kwargs:
            return args[0]
    return value


def _input_call_id(value: Any) -> str:
    parsed = load_json(value)
    if not isinstance(parsed, Mapping):
        return ""
    for holder in (parsed, parsed.get("kwargs"), parsed.get("metadata")):
        if isinstance(holder, Mapping) and isinstance(holder.get("tool_call_id"), str):
            return str(holder["tool_call_id"])
    return ""
