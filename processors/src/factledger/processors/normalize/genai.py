"""OpenTelemetry GenAI semantic conventions, current and deprecated.

Read, in order of preference:

- messages: `gen_ai.input.messages` / `gen_ai.output.messages` (JSON or structured, with
  `parts`); the `gen_ai.client.inference.operation.details` event; the deprecated
  flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` (OpenLLMetry); whole-value
  `gen_ai.prompt` / `gen_ai.completion` (LangSmith); the deprecated per-message events
  `gen_ai.{system,user,assistant,tool}.message` and `gen_ai.choice`. An output whose
  current messages hold no tool call takes the calls of the deprecated flattened
  `gen_ai.completion.N.function_call.*` (LiteLLM's OTel callback writes them only there);
  an input assistant message with no parts, answered by the tool results after it, holds
  the calls they answer, known by id alone (LiteLLM writes such messages without them).
  Such an event may come from an OTLP log record (joined to its span by the assembler): a
  record whose body is the message as JSON text (Semantic Kernel) has it in the event's
  `body` attribute.
- tools offered: `gen_ai.tool.definitions` (objects, or Mastra's bare names),
  OpenLLMetry's `llm.request.functions.N.*`, Pydantic AI's `model_request_parameters`.
- `execute_tool`: `gen_ai.tool.call.arguments` / `.result`, else Pydantic AI's
  `tool_arguments` / `tool_response`, else `input` / `output`, else LangSmith's
  `gen_ai.prompt` / `gen_ai.completion`, else the deprecated events (Strands' legacy
  mode: the input as a `gen_ai.tool.message` event, the result as `gen_ai.choice`);
  `gen_ai.tool.status` "error" (Strands) fails the call; a tool that raised and recorded
  no result has its exception's message as the result.
- `invoke_agent`: its messages as above, attributes or events, else Pydantic AI's
  `pydantic_ai.all_messages` / `final_result`, else Mastra's `mastra.agent_run.input`
  (the request with its history; Mastra's `chat` spans record no input) /
  `mastra.agent_run.output` (`{"text": ...}`), kept as the run's `messages`; the tools it
  names (`gen_ai.tool.definitions`, else Strands' `gen_ai.agent.tools`, names only).
- Responses API chains: `gen_ai.response.id`, and a `gen_ai.conversation.id` that names
  a response (`resp_…`), which is the `previous_response_id` the call continues (the
  Microsoft Agent Framework records it so, a new one on every call; on an agent span it is
  the response the run's first call continues).

Spans without `gen_ai.operation.name` are classified by what they carry: a tool name
makes a tool execution, an agent name an agent run, prompt or completion attributes
(or `llm.request.type`) an LLM call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..model import ToolDefinition
from ..spans import SpanRecord
from .base import AgentInvocation, ChatMessage, LlmStep, NormalizedSpan, ToolExecution
from .messages import content_text, last_text, read_messages, tool_result
from .values import (
    arguments_text,
    as_text,
    conversation_id,
    exception_message,
    first,
    is_mapping,
    load_json,
    named_response,
    string,
    tool_definitions,
    unflatten,
    unwrap_single,
)

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
MASTRA_RUN_INPUT = "mastra.agent_run.input"
MASTRA_RUN_OUTPUT = "mastra.agent_run.output"
TOOL_OPERATION = "execute_tool"
AGENT_OPERATION = "invoke_agent"

_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_CHOICE_EVENT = "gen_ai.choice"
_LLM_EVIDENCE = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.completion.0.role",
    "gen_ai.completion.0.content",
)
_ARGUMENT_WRAPPERS = ("input", "inputs", "args", "kwargs", "arguments")


def detects(span: SpanRecord) -> bool:
    """Whether the span carries GenAI attributes or GenAI message events."""
    attributes = span.attributes
    if any(key in attributes for key in ("gen_ai.operation.name", "gen_ai.tool.name")):
        return True
    if "gen_ai.agent.name" in attributes or "llm.request.type" in attributes:
        return True
    if any(key in attributes for key in _LLM_EVIDENCE):
        return True
    return any(e.name in _MESSAGE_EVENTS or e.name == _CHOICE_EVENT for e in span.events)


def normalize_genai(span: SpanRecord) -> NormalizedSpan | None:
    """The GenAI span as an LLM step, tool execution or agent run; None for other operations
    (embeddings, create_agent, framework chains)."""
    attributes = span.attributes
    operation = string(attributes, "gen_ai.operation.name").lower()
    if operation == TOOL_OPERATION or (not operation and "gen_ai.tool.name" in attributes):
        return _tool(span)
    if operation == AGENT_OPERATION:
        return _agent(span)
    if operation in LLM_OPERATIONS or (not operation and _looks_like_llm(span)):
        return _llm(span)
    if not operation and "gen_ai.agent.name" in attributes:
        return _agent(span)
    return None


def _looks_like_llm(span: SpanRecord) -> bool:
    attributes = span.attributes
    if string(attributes, "llm.request.type").lower() in ("chat", "completion"):
        return True
    if any(key in attributes for key in _LLM_EVIDENCE):
        return True
    return any(e.name in _MESSAGE_EVENTS or e.name == _CHOICE_EVENT for e in span.events)


# --- LLM calls ----------------------------------------------------------------------------


def _llm(span: SpanRecord) -> LlmStep:
    attributes = span.attributes
    conversation = conversation_id(attributes)
    return LlmStep(
        span_id=span.span_id,
        input_messages=_input_messages(span),
        output_messages=_output_messages(span),
        model=string(
            attributes,
            "gen_ai.response.model",
            "gen_ai.request.model",
            "llm.response.model",
            "llm.request.model",
        ),
        provider=string(attributes, "gen_ai.provider.name", "gen_ai.system"),
        system_instructions=content_text(attributes.get("gen_ai.system_instructions")),
        tools=_tools(attributes),
        conversation_id=conversation,
        agent_name=string(attributes, "gen_ai.agent.name"),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        response_id=string(attributes, "gen_ai.response.id"),
        previous_response_id=named_response(conversation),
    )


def _input_messages(span: SpanRecord) -> tuple[ChatMessage, ...]:
    found = _messages(span, "gen_ai.input.messages", "gen_ai.prompt", "user")
    return _event_messages(span) if found is None else found


def _output_messages(span: SpanRecord) -> tuple[ChatMessage, ...]:
    found = _messages(span, "gen_ai.output.messages", "gen_ai.completion", "assistant")
    if found is None:
        return _choice_messages(span)
    if any(m.tool_calls for m in found):
        return found
    return _with_deprecated_calls(span.attributes, found)


def _with_deprecated_calls(
    attributes: Mapping[str, Any], found: tuple[ChatMessage, ...]
) -> tuple[ChatMessage, ...]:
    """The output with the tool calls that only the deprecated flattened completions hold.

    LiteLLM's OTel callback writes a tool-calling answer's `gen_ai.output.messages` as
    `[{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]` and each call
    as `gen_ai.completion.{k}.function_call.{name,arguments}` (`k` counts the calls, not
    the choices), without its id. Without them the call would look like an answer."""
    legacy = _flattened(attributes, "gen_ai.completion", "assistant")
    calls = tuple(part for message in legacy for part in message.tool_calls)
    if not calls:
        return found
    last = max((i for i, m in enumerate(found) if m.role == "assistant"), default=-1)
    if last < 0:
        return (*found, ChatMessage(role="assistant", tool_calls=calls))
    merged = replace(found[last], tool_calls=calls)
    return (*found[:last], merged, *found[last + 1 :])


def _messages(
    span: SpanRecord, current: str, deprecated: str, role: str
) -> tuple[ChatMessage, ...] | None:
    """Messages from the current attribute, its details form, the deprecated flattened
    `prefix.N.*` keys or the deprecated whole value, in that order; None when absent
    (the caller then reads the span's events)."""
    attributes = span.attributes
    if current in attributes:
        return read_messages(_calls_named_by_results(attributes[current]), role)
    details = _details(span, current)
    if details is not None:
        return read_messages(details, role)
    flattened = _flattened(attributes, deprecated, role)
    if flattened:
        return flattened
    if deprecated in attributes:
        return read_messages(attributes[deprecated], role)
    return None


def _calls_named_by_results(value: Any) -> Any:
    """GenAI messages where an assistant message with no parts at all, answered by the tool
    results right after it, holds the calls those results answer (known by id alone).

    LiteLLM's OTel callback writes an assistant message of the history that made tool
    calls as `{"role": "assistant", "parts": []}`, without them; the results after it
    keep their `tool_call_id`. Read as written, the message would be dropped (it has no
    text) and its results would answer no call. Anything else is returned as given."""
    if isinstance(value, str) and "[]" not in value:
        return value  # no empty parts list: skip parsing the text twice
    messages = load_json(value)
    if not isinstance(messages, list) or not any(_emptied(m) for m in messages):
        return value
    out: list[Any] = []
    for i, message in enumerate(messages):
        ids = _answered_ids(messages, i + 1) if _emptied(message) else []
        if ids:
            parts = [{"type": "tool_call", "id": call_id, "name": ""} for call_id in ids]
            message = {**message, "parts": parts}
        out.append(message)
    return out


def _emptied(message: Any) -> bool:
    return (
        is_mapping(message)
        and message.get("role") == "assistant"
        and message.get("parts") == []
        and not message.get("tool_calls")
        and not message.get("content")
    )


def _answered_ids(messages: list[Any], start: int) -> list[str]:
    """The call ids the tool messages from `start` on answer, up to the next other message."""
    ids = []
    for message in messages[start:]:
        if not is_mapping(message) or message.get("role") != "tool":
            break
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            ids.append(call_id)
    return ids


def _details(span: SpanRecord, key: str) -> Any:
    for event in span.events:
        if event.name == _DETAILS_EVENT and key in event.attributes:
            return event.attributes[key]
    return None


def _flattened(
    attributes: Mapping[str, Any], prefix: str, default_role: str
) -> tuple[ChatMessage, ...]:
    items = []
    for item in unflatten(attributes, prefix):
        if not is_mapping(item):
            continue
        message = dict(item)
        message.setdefault("role", default_role)
        # OpenLLMetry writes multimodal content as a JSON list of typed parts.
        content = load_json(message.get("content"))
        if isinstance(content, list) and all(is_mapping(p) and "type" in p for p in content):
            message["content"] = content
        items.append(message)
    return read_messages(items, default_role)


def _event_messages(span: SpanRecord) -> tuple[ChatMessage, ...]:
    messages: list[ChatMessage] = []
    for event in span.events:
        role = _MESSAGE_EVENTS.get(event.name)
        if role is None:
            continue
        body = _event_body(event.attributes, "content")
        message = {
            "role": role,
            "content": body.get("content"),
            "tool_calls": body.get("tool_calls"),
            "tool_call_id": (body.get("id") or body.get("tool_call_id"))
            if role == "tool"
            else None,
        }
        messages.extend(read_messages([message], role))
    return tuple(messages)


def _choice_messages(span: SpanRecord) -> tuple[ChatMessage, ...]:
    """The `gen_ai.choice` events' messages. An event's `message` is the message itself
    (a mapping), or its content alone: Strands writes the content blocks as JSON (an LLM
    call's, a tool's) or the agent's answer as plain text."""
    messages: list[ChatMessage] = []
    for event in span.events:
        if event.name != _CHOICE_EVENT:
            continue
        attributes = _event_body(event.attributes, "message")
        raw = attributes.get("message")
        body = load_json(raw)
        if is_mapping(body):
            message = {"role": "assistant", **body}
        elif isinstance(raw, str) or isinstance(body, list):
            message = {"role": "assistant", "content": raw}  # text or content blocks
        else:
            message = {
                "role": "assistant",
                "content": attributes.get("content"),
                "tool_calls": attributes.get("tool_calls"),
            }
        messages.extend(read_messages([message], "assistant"))
    return tuple(messages)


def _event_body(attributes: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """An event's attributes, or when they lack `key` and a log record's `body` holds a
    JSON object, that object (Semantic Kernel logs `{"role": ..., "content": ...}`)."""
    if key in attributes or "body" not in attributes:
        return attributes
    body = load_json(attributes["body"])
    if is_mapping(body):
        return body
    if key == "content" and isinstance(body, str):
        return {"content": body}
    return attributes


def _tools(attributes: Mapping[str, Any]) -> tuple[ToolDefinition, ...] | None:
    if "gen_ai.tool.definitions" in attributes:
        tools = tool_definitions(attributes["gen_ai.tool.definitions"])
        if tools is not None:
            return tools
    functions = unflatten(attributes, "llm.request.functions")
    if functions:
        return tool_definitions(functions)
    parameters = load_json(attributes.get("model_request_parameters"))
    if is_mapping(parameters):  # Pydantic AI: function tools plus output tools
        offered = [
            tool
            for key in ("function_tools", "output_tools")
            if isinstance(parameters.get(key), list)
            for tool in parameters[key]
        ]
        return tool_definitions(offered)
    return None


# --- tool executions ----------------------------------------------------------------------


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    arguments = first(attributes, "gen_ai.tool.call.arguments", "tool_arguments")
    if arguments is None:
        fallback = first(attributes, "input", "gen_ai.prompt")
        arguments = None if fallback is None else unwrap_single(fallback, _ARGUMENT_WRAPPERS)
    if arguments is None:
        arguments = _event_value(span, _TOOL_MESSAGE_EVENT, "content")
    raw_result = first(
        attributes, "gen_ai.tool.call.result", "tool_response", "output", "gen_ai.completion"
    )
    result, result_error = tool_result(raw_result)
    if raw_result is None:
        result = _choice_result(span)
    if result is None and span.is_error:
        # A tool that raised records no result (the AI SDK's, Mastra's `execute_tool`): the
        # error it raised is what the model was handed.
        result = exception_message(span)
    return ToolExecution(
        span_id=span.span_id,
        name=string(attributes, "gen_ai.tool.name") or _tool_name_from(span.name),
        call_id=string(attributes, "gen_ai.tool.call.id"),
        arguments=arguments_text(arguments),
        result=result,
        error=span.is_error
        or "error.type" in attributes
        or result_error
        or string(attributes, "gen_ai.tool.status").lower() == "error",
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


_TOOL_MESSAGE_EVENT = "gen_ai.tool.message"


def _event_value(span: SpanRecord, name: str, key: str) -> Any:
    """`key` of the span's first `name` event that has it; None when none has."""
    for event in span.events:
        if event.name == name and key in event.attributes:
            return event.attributes[key]
    return None


def _choice_result(span: SpanRecord) -> str | None:
    """A tool's result written as deprecated GenAI events (Strands' legacy mode: the call's
    input as a `gen_ai.tool.message` event, its result as `gen_ai.choice`, content blocks
    as JSON): the text of the choice's content; None without such an event."""
    raw = _event_value(span, _CHOICE_EVENT, "message")
    if raw is None:
        return None
    text = content_text(raw)
    return text if text or not isinstance(raw, str) else raw


def _tool_name_from(span_name: str) -> str:
    # The convention names the span "execute_tool {gen_ai.tool.name}".
    prefix = TOOL_OPERATION + " "
    return span_name[len(prefix) :] if span_name.startswith(prefix) else span_name


# --- agent runs ---------------------------------------------------------------------------


def _agent(span: SpanRecord) -> AgentInvocation:
    attributes = span.attributes
    inputs = read_messages(attributes.get("gen_ai.input.messages"), "user")
    outputs = read_messages(attributes.get("gen_ai.output.messages"), "assistant")
    # The deprecated GenAI events (Strands' legacy mode): the request as message events,
    # the answer as a `gen_ai.choice` event.
    inputs = inputs or _event_messages(span)
    outputs = outputs or _choice_messages(span)
    # Pydantic AI records the whole run in one attribute and the answer in another.
    history = read_messages(attributes.get("pydantic_ai.all_messages"), "user")
    final = attributes.get("final_result")
    # Mastra records the run's request (the messages `generate` was given, in the AI SDK's
    # shape) and its answer (`{"text": ...}`) in attributes of its own.
    request = read_messages(attributes.get(MASTRA_RUN_INPUT), "user")
    answer = load_json(attributes.get(MASTRA_RUN_OUTPUT))
    run: tuple[ChatMessage, ...] = request
    if is_mapping(answer) and isinstance(answer.get("text"), str):
        final = final if final is not None else answer["text"]
        run = (*request, ChatMessage(role="assistant", text=answer["text"]))
    inputs = inputs or request
    output_text = last_text(outputs, "assistant") or as_text(final)
    extra = {"agent_id": string(attributes, "gen_ai.agent.id")}
    name = string(attributes, "gen_ai.agent.name", "agent_name") or _agent_name_from(span.name)
    conversation = conversation_id(attributes)
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=name,
        conversation_id=conversation,
        model=string(attributes, "gen_ai.response.model", "gen_ai.request.model", "model_name"),
        input_text=last_text(inputs, "user") or last_text(history, "user"),
        output_text=output_text or last_text(history, "assistant"),
        tools=_tools(attributes) or _agent_tools(attributes),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        extra={k: v for k, v in extra.items() if v},
        # An agent run that names no agent (OpenLLMetry's `crewai.workflow`, a crew's
        # kickoff) only wraps the run: an agent span inside it names the turn.
        wrapper=not name,
        # The Microsoft Agent Framework names the session's last response here, and not
        # on the span of the run's first call, which continues it.
        previous_response_id=named_response(conversation),
        messages=run if request else (),
    )


def _agent_tools(attributes: Mapping[str, Any]) -> tuple[ToolDefinition, ...] | None:
    """The tools an agent span names (Strands' `gen_ai.agent.tools`: a JSON list of their
    names), by name; None when it names none."""
    names = load_json(attributes.get("gen_ai.agent.tools"))
    listed = [n for n in names if isinstance(n, str) and n] if isinstance(names, list) else []
    return tuple(ToolDefinition(name=n) for n in dict.fromkeys(listed)) or None


def _agent_name_from(span_name: str) -> str:
    prefix = AGENT_OPERATION + " "
    return span_name[len(prefix) :] if span_name.startswith(prefix) else ""
