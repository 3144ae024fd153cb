"""OpenInference (Arize Phoenix) spans, chosen by `openinference.span.kind`.

- LLM: `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*` (`role`,
  `content`, `contents.K.message_content.text`, `tool_calls.M.tool_call.{id,
  function.name, function.arguments}`, `tool_call_id`, `name`; AutoGen AgentChat's tool
  results as `function.K` JSON beside the message); without them, the messages inside
  `input.value` / `output.value`. Tools from `llm.tools.N.tool.json_schema`.
- TOOL: `tool.name`, `input.value` (arguments), `output.value` (result); the call id from
  `tool_call.id`, `tool.id` or, where a framework adds GenAI attributes, `gen_ai.tool.call.id`.
  The LangChain instrumentation dumps the tool's `ToolMessage` into `output.value`
  (`{"type": "tool", "data": {"content", "status", "tool_call_id"}}` or flat): its content
  is the result, `"status": "error"` the failure, `tool_call_id` the call id. The
  smolagents instrumentation writes a tool's bound call as `input.value`
  (`{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}`): the kwargs, with
  positional values named after the tool's inputs (`tool.parameters`), are the arguments.
- AGENT, and a CHAIN that is a trace's root: an agent run named by `agent.name` or the span
  (a smolagents run span, `{Agent class}.run`, by the class). Spans that only wrap a run
  (`AgentInvocation.wrapper`): the OpenAI Agents instrumentation's trace span (AGENT,
  without the `graph.node.id` its agent spans carry; "Agent workflow" unless the trace
  was named), and a root named after a framework's default ("LangGraph").

Other kinds (RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR, inner CHAINs) say
nothing about a turn and normalize to None. `session.id` is the conversation id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import ToolDefinition
from ..spans import SpanRecord
from .base import AgentInvocation, ChatMessage, LlmStep, NormalizedSpan, ToolExecution
from .messages import (
    langchain_tool_message,
    read_messages,
    reply_text,
    request_text,
    tool_result,
)
from .values import (
    arguments_text,
    conversation_id,
    first,
    load_json,
    string,
    tool_definitions,
    unflatten,
)

SPAN_KIND = "openinference.span.kind"


def detects(span: SpanRecord) -> bool:
    """Whether the span declares an OpenInference span kind."""
    return SPAN_KIND in span.attributes


def normalize_openinference(span: SpanRecord) -> NormalizedSpan | None:
    """The span as an LLM step, tool execution or agent run, by its declared kind."""
    kind = string(span.attributes, SPAN_KIND).upper()
    if kind == "LLM":
        return _llm(span)
    if kind == "TOOL":
        return _tool(span)
    if kind == "AGENT" or (kind == "CHAIN" and not span.parent_span_id):
        return _agent(span)
    return None


def _llm(span: SpanRecord) -> LlmStep:
    attributes = span.attributes
    inputs = _messages(attributes, "llm.input_messages", "user")
    if not inputs and "input.value" in attributes:
        inputs = read_messages(attributes["input.value"], "user")
    outputs = _messages(attributes, "llm.output_messages", "assistant")
    if not outputs and "output.value" in attributes:
        outputs = read_messages(attributes["output.value"], "assistant")
    return LlmStep(
        span_id=span.span_id,
        input_messages=inputs,
        output_messages=outputs,
        model=string(attributes, "llm.model_name"),
        provider=string(attributes, "llm.provider", "llm.system"),
        tools=_tools(attributes),
        conversation_id=conversation_id(attributes),
        agent_name=string(attributes, "agent.name"),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _messages(
    attributes: Mapping[str, Any], prefix: str, default_role: str
) -> tuple[ChatMessage, ...]:
    plain = []
    for item in unflatten(attributes, prefix):
        message = item.get("message") if isinstance(item, Mapping) else None
        results = _function_results(item.get("function")) if isinstance(item, Mapping) else []
        if results:
            plain.extend(results)
        elif isinstance(message, Mapping):
            plain.append(_plain_message(message, default_role))
    return read_messages(plain, default_role)


def _function_results(value: Any) -> list[dict[str, Any]]:
    """The AutoGen AgentChat instrumentation's `FunctionExecutionResultMessage`: beside
    `message.role` "function", one JSON `{name, content, call_id, is_error}` per result
    under `N.function.K`. Each is a tool message answering its call."""
    out = []
    for entry in value if isinstance(value, list) else ():
        result = load_json(entry)
        if isinstance(result, Mapping) and "content" in result:
            out.append(
                {
                    "role": "tool",
                    "content": result.get("content"),
                    "tool_call_id": result.get("call_id"),
                    "is_error": result.get("is_error") is True,
                }
            )
    return out


def _plain_message(message: Mapping[str, Any], default_role: str) -> dict[str, Any]:
    """An OpenInference message tree in the OpenAI chat shape `read_messages` knows."""
    calls = []
    raw_calls = message.get("tool_calls")
    for item in raw_calls if isinstance(raw_calls, list) else ():
        call = item.get("tool_call") if isinstance(item, Mapping) else None
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        calls.append(
            {
                "id": call.get("id"),
                "function": {
                    "name": function.get("name"),
                    "arguments": function.get("arguments"),
                },
            }
        )
    contents = message.get("contents")
    return {
        "role": message.get("role") or default_role,
        "content": message.get("content") if contents is None else contents,
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id"),
    }


def _tools(attributes: Mapping[str, Any]) -> tuple[ToolDefinition, ...] | None:
    schemas = [
        item["tool"].get("json_schema")
        for item in unflatten(attributes, "llm.tools")
        if isinstance(item, Mapping) and isinstance(item.get("tool"), Mapping)
    ]
    return tool_definitions(schemas) if schemas else None


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    output = attributes.get("output.value")
    message_call_id, result, result_error = langchain_tool_message(output)
    if result is None:
        result, result_error = tool_result(output)
    arguments = first(
        attributes, "input.value", "tool_call.function.arguments", "gen_ai.tool.call.arguments"
    )
    return ToolExecution(
        span_id=span.span_id,
        name=string(attributes, "tool.name", "tool_call.function.name") or span.name,
        call_id=string(attributes, "tool_call.id", "tool.id", "gen_ai.tool.call.id")
        or message_call_id,
        arguments=arguments_text(
            _bound_call_arguments(arguments, attributes.get("tool.parameters"))
        ),
        result=result,
        error=span.is_error or result_error,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


_BOUND_CALL_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def _bound_call_arguments(value: Any, parameters: Any) -> Any:
    """A smolagents `Tool.__call__(*args, sanitize_inputs_outputs, **kwargs)` binding as
    the call's arguments: a lone mapping argument, else the kwargs with the positional
    values named by the tool's inputs in order. Any other value as given."""
    parsed = load_json(value)
    if not isinstance(parsed, Mapping) or "kwargs" not in parsed or set(parsed) - _BOUND_CALL_KEYS:
        return value
    args, kwargs = parsed.get("args") or [], parsed.get("kwargs") or {}
    if not isinstance(kwargs, Mapping) or not isinstance(args, list):
        return value
    if len(args) == 1 and isinstance(args[0], Mapping) and not kwargs:
        return args[0]
    names = list(inputs) if isinstance(inputs := load_json(parameters), Mapping) else []
    if len(args) > len(names):
        return value
    return {**dict(zip(names, args, strict=False)), **kwargs}


OPENAI_AGENTS_SCOPE = "openinference.instrumentation.openai_agents"
_DEFAULT_RUN_NAMES = frozenset({"Agent workflow", "LangGraph"})
"""Root span names that name a framework's run, not an agent: the OpenAI Agents SDK's
default trace name and LangGraph's default graph name."""


def _agent(span: SpanRecord) -> AgentInvocation:
    attributes = span.attributes
    raw_input = attributes.get("input.value")
    raw_output = attributes.get("output.value")
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=string(attributes, "agent.name") or _agent_span_name(span),
        conversation_id=conversation_id(attributes),
        model=string(attributes, "llm.model_name"),
        input_text="" if raw_input is None else request_text(raw_input),
        output_text="" if raw_output is None else reply_text(raw_output),
        tools=_tools(attributes),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        wrapper=_wraps_run(span),
    )


def _agent_span_name(span: SpanRecord) -> str:
    # openinference-instrumentation-smolagents names the run span `{Agent class}.run`.
    if "smolagents.max_steps" in span.attributes and span.name.endswith(".run"):
        return span.name[: -len(".run")]
    # The AutoGen AgentChat and CrewAI instrumentations name it `{agent}.{method}`
    # (`release_engineer.on_messages_stream`, `release_engineer._execute_core`), with the
    # agent's own name as its graph node.
    node = string(span.attributes, "graph.node.id")
    if node and span.name.startswith(f"{node}."):
        return node
    return span.name


def _wraps_run(span: SpanRecord) -> bool:
    if span.scope_name == OPENAI_AGENTS_SCOPE and "graph.node.id" not in span.attributes:
        return True  # the SDK trace's span; each agent's own span has its graph node
    return not span.parent_span_id and span.name in _DEFAULT_RUN_NAMES
