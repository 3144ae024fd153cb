"""Agent-side helpers that emit OpenTelemetry GenAI semantic-convention spans.

    with invoke_agent("coder", conversation_id=session_id, model="gpt-4o"):
        with chat("gpt-4o", provider="openai", input_messages=messages, tools=tools) as llm:
            response = client.chat.completions.create(...)
            llm.set_output(text=reply_text, tool_calls=reply_tool_calls)
        with execute_tool("gh_put_file", call_id=call["id"], arguments=args) as tool:
            tool.set_result(put_file(**args))

Spans go to the caller's TracerProvider (the global one unless `tracer_provider` or
`tracer` is given) and nest through the current context like any other span. Messages
are written in the current conventions' parts format (`gen_ai.input.messages`,
`gen_ai.output.messages`, `gen_ai.system_instructions`); OpenAI-style chat messages are
converted. Content (messages, tool arguments and results) is captured unless
`capture_content=False`, which keeps every structural attribute and drops the text.

One extension beyond the conventions: a `tool_call_response` part carries
`"is_error": true` when the tool message it came from was marked `is_error`, so a
failed call stays failed when a turn is rebuilt from the messages alone.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from factledger.processors.assembly.transcript import content_text

INSTRUMENTATION_NAME = "factledger.instrument"
INSTRUMENTATION_VERSION = "0.1.0"

OPERATION_NAME = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
PROVIDER_NAME = "gen_ai.provider.name"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"

Message = Mapping[str, Any]
"""An OpenAI-style chat message, or one already in the conventions' parts format."""


def get_tracer(
    tracer_provider: TracerProvider | None = None, *, tracer: Tracer | None = None
) -> Tracer:
    """The tracer the helpers use: `tracer` if given, else one from the provider (or the
    global provider)."""
    if tracer is not None:
        return tracer
    provider = tracer_provider or trace.get_tracer_provider()
    return provider.get_tracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION)


# ---- handles -------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentSpan:
    """The open `invoke_agent` span."""

    span: Span


@dataclass(frozen=True)
class ChatSpan:
    """The open `chat` span; call `set_output` with what the model returned."""

    span: Span
    capture_content: bool = True

    def set_output(
        self,
        text: str | None = None,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        finish_reason: str | None = None,
        name: str | None = None,
    ) -> None:
        """Record the model's answer: its text and/or tool calls (OpenAI-style
        `{"id", "function": {"name", "arguments"}}` or flat `{"id", "name", "arguments"}`).

        `finish_reason` defaults to "tool_call" when there are tool calls, else "stop";
        `name` is the speaker's, in a group chat.
        """
        reason = finish_reason or ("tool_call" if tool_calls else "stop")
        self.span.set_attribute(FINISH_REASONS, [reason])
        if not self.capture_content:
            return
        parts = _text_parts(text or "") + [
            _tool_call_part(c, j) for j, c in enumerate(tool_calls or ())
        ]
        message: dict[str, Any] = {"role": "assistant", "parts": parts, "finish_reason": reason}
        if name:
            message["name"] = name
        self.span.set_attribute(OUTPUT_MESSAGES, _dumps([message]))


@dataclass(frozen=True)
class ToolSpan:
    """The open `execute_tool` span; record the result or the failure."""

    span: Span
    capture_content: bool = True

    def set_result(self, result: Any) -> None:
        """Record what the tool returned (text as is, anything else as JSON)."""
        if self.capture_content:
            self.span.set_attribute(TOOL_CALL_RESULT, _as_text(result))

    def set_error(self, message: str, *, error_type: str = "tool_error") -> None:
        """Mark the execution failed: span status ERROR with `message`, and `error.type`."""
        self.span.set_status(Status(StatusCode.ERROR, message))
        self.span.set_attribute(ERROR_TYPE, error_type)


# ---- context managers ----------------------------------------------------------------


@contextmanager
def invoke_agent(
    agent_name: str,
    *,
    conversation_id: str | None = None,
    model: str | None = None,
    tracer_provider: TracerProvider | None = None,
    tracer: Tracer | None = None,
) -> Iterator[AgentSpan]:
    """An `invoke_agent {agent_name}` span around one agent turn; chat and tool spans
    started inside the block become its children."""
    attributes: dict[str, Any] = {OPERATION_NAME: "invoke_agent", AGENT_NAME: agent_name}
    _put(attributes, CONVERSATION_ID, conversation_id)
    _put(attributes, REQUEST_MODEL, model)
    with _span(
        get_tracer(tracer_provider, tracer=tracer),
        f"invoke_agent {agent_name}",
        SpanKind.INTERNAL,
        attributes,
    ) as span:
        yield AgentSpan(span)


@contextmanager
def chat(
    model: str,
    *,
    provider: str | None = None,
    input_messages: Sequence[Message] = (),
    tools: Sequence[Mapping[str, Any]] | None = None,
    conversation_id: str | None = None,
    capture_content: bool = True,
    tracer_provider: TracerProvider | None = None,
    tracer: Tracer | None = None,
) -> Iterator[ChatSpan]:
    """A `chat {model}` span around one LLM call.

    System (and developer) messages become `gen_ai.system_instructions`, the others
    `gen_ai.input.messages`. `tools` (OpenAI-style or flat definitions) become
    `gen_ai.tool.definitions`; `[]` is recorded as offered-none, None as unknown.
    """
    attributes: dict[str, Any] = {OPERATION_NAME: "chat", REQUEST_MODEL: model}
    _put(attributes, PROVIDER_NAME, provider)
    _put(attributes, CONVERSATION_ID, conversation_id)
    if tools is not None:
        attributes[TOOL_DEFINITIONS] = _dumps([tool_definition(t) for t in tools])
    if capture_content:
        converted, system = semconv_messages(input_messages)
        attributes[INPUT_MESSAGES] = _dumps(converted)
        if system:
            attributes[SYSTEM_INSTRUCTIONS] = _dumps(system)
    with _span(
        get_tracer(tracer_provider, tracer=tracer), f"chat {model}", SpanKind.CLIENT, attributes
    ) as span:
        yield ChatSpan(span, capture_content)


@contextmanager
def execute_tool(
    name: str,
    *,
    call_id: str | None = None,
    arguments: Mapping[str, Any] | str | None = None,
    capture_content: bool = True,
    tracer_provider: TracerProvider | None = None,
    tracer: Tracer | None = None,
) -> Iterator[ToolSpan]:
    """An `execute_tool {name}` span around one tool execution.

    `arguments` is JSON text or a mapping (written as JSON). An exception escaping the
    block marks the span ERROR (with `error.type`) and is re-raised.
    """
    attributes: dict[str, Any] = {
        OPERATION_NAME: "execute_tool",
        TOOL_NAME: name,
        TOOL_TYPE: "function",
    }
    _put(attributes, TOOL_CALL_ID, call_id)
    if capture_content and arguments is not None:
        attributes[TOOL_CALL_ARGUMENTS] = _as_text(arguments)
    with _span(
        get_tracer(tracer_provider, tracer=tracer),
        f"execute_tool {name}",
        SpanKind.INTERNAL,
        attributes,
    ) as span:
        yield ToolSpan(span, capture_content)


@contextmanager
def _span(
    tracer: Tracer, name: str, kind: SpanKind, attributes: Mapping[str, Any]
) -> Iterator[Span]:
    # The SDK's own exception handling sets no `error.type`, so it is done here.
    with tracer.start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            span.set_attribute(ERROR_TYPE, type(exc).__qualname__)
            raise


# ---- message conversion --------------------------------------------------------------


def semconv_messages(
    messages: Sequence[Message],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI-style chat messages as (input messages, system instruction parts) in the
    conventions' parts format. Messages that already have `parts` pass through.

    Tool calls without an id get `call_{index}_{j}` (index in `messages`), the same
    default the transcript loader uses, so their results still pair up.
    """
    converted: list[dict[str, Any]] = []
    system: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = str(message.get("role") or "user")
        if isinstance(message.get("parts"), list):
            if role == "system":
                system.extend(message["parts"])
            else:
                converted.append(dict(message))
            continue
        text = content_text(message.get("content"))
        if role in ("system", "developer"):
            system.extend(_text_parts(text))
        elif role in ("tool", "function"):
            part: dict[str, Any] = {
                "type": "tool_call_response",
                "id": str(message.get("tool_call_id") or message.get("name") or ""),
                "response": text,
            }
            if message.get("is_error"):
                part["is_error"] = True
            converted.append({"role": "tool", "parts": [part]})
        elif role == "assistant":
            calls = tool_call_list(message.get("tool_calls"))
            parts = _text_parts(text)
            parts.extend(_tool_call_part(call, j, index) for j, call in enumerate(calls))
            converted.append(_named({"role": "assistant", "parts": parts}, message))
        else:
            converted.append(_named({"role": role, "parts": _text_parts(text)}, message))
    return converted, system


def _named(converted: dict[str, Any], message: Message) -> dict[str, Any]:
    """The speaker's name, where a group chat's message carries one."""
    if message.get("name"):
        converted["name"] = str(message["name"])
    return converted


def tool_call_list(raw: Any) -> list[Mapping[str, Any]]:
    """An assistant message's `tool_calls` as a list of objects.

    Some exports store the list as JSON or as a Python literal; anything unreadable or
    not a list of objects raises ValueError.
    """
    if raw is None or raw == "" or raw == "None":
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            try:
                raw = ast.literal_eval(raw)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
                raise ValueError(f"tool_calls is unreadable: {exc}") from exc
    if not isinstance(raw, list) or not all(isinstance(c, Mapping) for c in raw):
        raise ValueError("tool_calls is not a list of objects")
    return raw


def tool_definition(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One tool definition in the conventions' flat form `{type, name, description,
    parameters}`, from an OpenAI-style `{"type": "function", "function": {...}}` or a
    flat definition."""
    spec = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
    assert isinstance(spec, Mapping)
    out: dict[str, Any] = {"type": "function", "name": str(spec.get("name") or "")}
    if spec.get("description"):
        out["description"] = str(spec["description"])
    params = spec.get("parameters", spec.get("input_schema"))
    if params is not None:
        out["parameters"] = params
    return out


def _tool_call_part(call: Mapping[str, Any], j: int, index: int | None = None) -> dict[str, Any]:
    function = call.get("function") if isinstance(call.get("function"), Mapping) else call
    assert isinstance(function, Mapping)
    default_id = f"call_{index}_{j}" if index is not None else f"call_{j}"
    return {
        "type": "tool_call",
        "id": str(call.get("id") or default_id),
        "name": str(function.get("name") or ""),
        "arguments": _arguments_value(function.get("arguments")),
    }


def _arguments_value(raw: Any) -> Any:
    # The conventions show arguments as a JSON object; text that is not JSON stays text,
    # so nothing the model wrote is lost.
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _text_parts(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "content": text}] if text else []


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else _dumps(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _put(attributes: dict[str, Any], key: str, value: str | None) -> None:
    if value:
        attributes[key] = value
