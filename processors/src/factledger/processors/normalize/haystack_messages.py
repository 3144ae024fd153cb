"""Haystack's `ChatMessage`s, read from the reprs OpenInference records of them, or from
the serialized messages Haystack's own tracer records (`message_dicts`, `tool_dicts`).

The OpenInference Haystack instrumentation writes a component's inputs and outputs as
JSON (`input.value`, `output.value`) whose encoder falls back to `str()`: every Haystack
`ChatMessage` in them is its dataclass repr, such as

    ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='{"ok":
    true}', origin=ToolCall(tool_name='git_push', arguments={'repo': 'acme/x'},
    id='call_1', extra=None), error=False)], _name=None, _meta={})

Its flattened `llm.input_messages` keep a message's text and role only: an assistant
message's tool calls and a tool message's result are in the reprs alone. The content
parts read are `TextContent(text)`, `ToolCall(tool_name, arguments, id)` and
`ToolCallResult(result, origin, error)` (a result of content parts gives their text);
reasoning, images and files carry nothing a turn is judged on. A message with tool
results becomes one tool message per result, answering its origin's call id. The tools
a generator was offered are in the reprs alone too: `Tool(name=..., description=...,
parameters={...})` and its subclasses, and a `Toolset(tools=[...])`.

The reprs are read by `python_repr.parse_repr` (never evaluated), each at most
`python_repr.MAX_REPR_CHARS` long.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..model import ToolDefinition
from .base import ChatMessage, ToolCallPart
from .python_repr import Construct, Opaque, ReprError, parse_repr
from .values import arguments_text, as_text, load_json

MESSAGE_CLASS = "ChatMessage"
_REPR_OPENING = MESSAGE_CLASS + "("
MAX_MESSAGES = 2_000
"""Message reprs read from one value; the rest is ignored."""
MAX_PARTS = 500
"""Content parts read from one message."""
MAX_TOOLS = 256
"""Tools read from one value."""
_ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})


def is_message_repr(value: Any) -> bool:
    """Whether `value` is the text of a Haystack `ChatMessage` repr."""
    return isinstance(value, str) and value.startswith(_REPR_OPENING)


def haystack_messages(value: Any, key: str) -> tuple[ChatMessage, ...]:
    """The messages whose reprs the JSON object `value` holds under `key` (a list of
    them, or one), in order; () when it holds none. Where `value` lacks `key`, the
    mappings inside it are looked in (a pipeline's run holds its components' inputs as
    `{"data": {name: {...}}}` and their outputs as `{name: {...}}`), the last first.
    A repr that cannot be read is skipped: the messages around it still count."""
    if not isinstance(value, str) or _REPR_OPENING not in value:
        return ()  # cheap: most spans hold no repr at all
    items = _under(load_json(value), key, 0)
    if not isinstance(items, list):
        items = [items]
    out: list[ChatMessage] = []
    for item in items[:MAX_MESSAGES]:
        if is_message_repr(item):
            out.extend(read_message_repr(item))
    return tuple(out)


_MAX_NESTING = 2
"""How deep inside `value` a key is looked for."""


def _under(parsed: Any, key: str, depth: int) -> Any:
    """What `parsed` holds under `key`, at its top or in a mapping inside it (the last
    one that holds the key); None when nothing does."""
    if not isinstance(parsed, Mapping):
        return None
    if key in parsed:
        return parsed[key]
    if depth >= _MAX_NESTING:
        return None
    for inner in reversed(list(parsed.values())[:MAX_MESSAGES]):
        found = _under(inner, key, depth + 1)
        if found is not None:
            return found
    return None


@lru_cache(maxsize=1024)
def read_message_repr(text: str) -> tuple[ChatMessage, ...]:
    """The messages one `ChatMessage` repr stands for: itself, or one tool message per
    tool result it holds; () when the text cannot be read as one.

    Memoised: each LLM call of an agent records the whole history again, so the same
    reprs come back with every span. The messages are frozen and safe to share."""
    try:
        parsed = parse_repr(text)
    except ReprError:
        return ()
    if not isinstance(parsed, Construct) or parsed.name != MESSAGE_CLASS:
        return ()
    return _message(parsed.kwargs)


def _message(fields: Mapping[str, Any]) -> tuple[ChatMessage, ...]:
    role = _role(fields.get("_role"))
    if not role:
        return ()
    content = fields.get("_content")
    parts = content[:MAX_PARTS] if isinstance(content, list | tuple) else []
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    results: list[ChatMessage] = []
    for part in parts:
        if not isinstance(part, Construct):
            continue
        if part.name == "TextContent":
            text = part.kwargs.get("text")
            if isinstance(text, str) and text:
                texts.append(text)
        elif part.name == "ToolCall":
            call = _call(part)
            if call is not None:
                calls.append(call)
        elif part.name == "ToolCallResult":
            results.append(_result(part))
    if results:
        return tuple(results)
    if role == "tool":  # a tool message without a result part: its text, answering no call
        return (ChatMessage(role="tool", text="\n".join(texts)),)
    name = fields.get("_name")
    speaker = name.strip() if isinstance(name, str) and role in ("user", "assistant") else ""
    return (ChatMessage(role=role, text="\n".join(texts), tool_calls=tuple(calls), name=speaker),)


def _role(value: Any) -> str:
    """`<ChatRole.USER: 'user'>` (or the plain value) as the role it names."""
    raw = value.value if isinstance(value, Opaque) else value
    if not isinstance(raw, str):
        return ""
    role = raw.strip().lower()
    if role == "developer":
        return "system"
    return role if role in _ROLES else ""


def _call(part: Construct) -> ToolCallPart | None:
    name = part.kwargs.get("tool_name")
    if not isinstance(name, str) or not name:
        return None
    call_id = part.kwargs.get("id")
    return ToolCallPart(
        call_id=call_id if isinstance(call_id, str) else "",
        name=name,
        arguments=arguments_text(_plain(part.kwargs.get("arguments"))),
    )


def _result(part: Construct) -> ChatMessage:
    origin = part.kwargs.get("origin")
    call = _call(origin) if isinstance(origin, Construct) else None
    return ChatMessage(
        role="tool",
        text=_result_text(part.kwargs.get("result")),
        tool_call_id=call.call_id if call is not None else "",
        is_error=part.kwargs.get("error") is True,
    )


def _result_text(result: Any) -> str:
    """A result's text: as given, or the text of its content parts (an image or a file
    part has none)."""
    if isinstance(result, str):
        return result
    if isinstance(result, Sequence):
        texts = [
            p.kwargs["text"]
            for p in result
            if isinstance(p, Construct)
            and p.name == "TextContent"
            and isinstance(p.kwargs.get("text"), str)
        ]
        return "\n".join(texts)
    return as_text(_plain(result))


def _plain(value: Any, depth: int = 0) -> Any:
    """A parsed value as JSON-ready data: constructs and opaque objects as text (their
    repr stands for them), containers with their items made plain."""
    if depth > 32:
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, Opaque):
        return value.value if value.value is not None else value.text
    if isinstance(value, Construct):
        return value.name
    return value


def haystack_tools(value: Any, key: str) -> tuple[ToolDefinition, ...] | None:
    """The tools whose reprs the JSON object `value` holds under `key` (a generator's
    `tools`): each `Tool`, `ComponentTool`, `AgentTool`, ... (`name`, `description`,
    `parameters`), and the tools of a `Toolset`. None when it holds no tool repr."""
    parsed = load_json(value) if isinstance(value, str) and "(name=" in value else None
    items = parsed.get(key) if isinstance(parsed, Mapping) else None
    if not isinstance(items, list) or not items:
        return None
    tools: list[ToolDefinition] = []
    for item in items[:MAX_TOOLS]:
        if isinstance(item, str):
            tools.extend(_tool_reprs(item))
    return tuple(tools) or None


@lru_cache(maxsize=256)
def _tool_reprs(text: str) -> tuple[ToolDefinition, ...]:
    """Memoised: every LLM call of an agent offers the same tools."""
    try:
        parsed = parse_repr(text)
    except ReprError:
        return ()
    if not isinstance(parsed, Construct):
        return ()
    nested = parsed.kwargs.get("tools")
    members = nested if isinstance(nested, list) else [parsed]  # a Toolset, or one tool
    out = []
    for member in members[:MAX_TOOLS]:
        if not isinstance(member, Construct):
            continue
        name = member.kwargs.get("name")
        parameters = _plain(member.kwargs.get("parameters"))
        description = member.kwargs.get("description")
        if isinstance(name, str) and name:
            out.append(
                ToolDefinition(
                    name=name,
                    parameters=parameters if isinstance(parameters, dict) else {},
                    description=description if isinstance(description, str) else "",
                )
            )
    return tuple(out)


# Haystack's own tracer records the same messages, not as reprs but serialized
# (`ChatMessage.to_dict` by way of `_to_trace_dict`): `{"role": "assistant", "name": ...,
# "meta": {...}, "content": [{"text": ...} | {"tool_call": {"tool_name", "arguments",
# "id"}} | {"tool_call_result": {"result", "origin", "error"}} | {"reasoning": ...} | ...]}`.


def message_dicts(items: Any) -> tuple[ChatMessage, ...]:
    """The messages of a list of serialized Haystack `ChatMessage`s (or of one), in order;
    () when it holds none. An item that is no message is skipped."""
    if not isinstance(items, list):
        items = [items]
    out: list[ChatMessage] = []
    for item in items[:MAX_MESSAGES]:
        if isinstance(item, Mapping) and isinstance(item.get("content"), list):
            out.extend(_dict_message(item))
    return tuple(out)


def _dict_message(fields: Mapping[str, Any]) -> tuple[ChatMessage, ...]:
    role = _role(fields.get("role"))
    if not role:
        return ()
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    results: list[ChatMessage] = []
    for part in fields["content"][:MAX_PARTS]:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            if part["text"]:
                texts.append(part["text"])
        elif isinstance(part.get("tool_call"), Mapping):
            call = _dict_call(part["tool_call"])
            if call is not None:
                calls.append(call)
        elif isinstance(part.get("tool_call_result"), Mapping):
            results.append(_dict_result(part["tool_call_result"]))
    if results:
        return tuple(results)
    if role == "tool":
        return (ChatMessage(role="tool", text="\n".join(texts)),)
    name = fields.get("name")
    speaker = name.strip() if isinstance(name, str) and role in ("user", "assistant") else ""
    return (ChatMessage(role=role, text="\n".join(texts), tool_calls=tuple(calls), name=speaker),)


def _dict_call(call: Mapping[str, Any]) -> ToolCallPart | None:
    name = call.get("tool_name")
    if not isinstance(name, str) or not name:
        return None
    call_id = call.get("id")
    return ToolCallPart(
        call_id=call_id if isinstance(call_id, str) else "",
        name=name,
        arguments=arguments_text(call.get("arguments")),
    )


def _dict_result(result: Mapping[str, Any]) -> ChatMessage:
    origin = result.get("origin")
    call = _dict_call(origin) if isinstance(origin, Mapping) else None
    value = result.get("result")
    if isinstance(value, list):  # content parts: their text (an image or a file has none)
        value = "\n".join(
            p["text"] for p in value if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    return ChatMessage(
        role="tool",
        text=value if isinstance(value, str) else as_text(value),
        tool_call_id=call.call_id if call is not None else "",
        is_error=result.get("error") is True,
    )


AGENT_TOOL_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "messages": {
            "type": "array",
            "description": "Exactly one user message.",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "role": {"type": "string", "enum": ["user"]},
                    "content": {
                        "type": "string",
                        "description": "The task to delegate to this tool.",
                    },
                },
                "required": ["role", "content"],
            },
        },
    },
    "required": ["messages"],
}
"""The schema Haystack gives an `AgentTool` made without `parameters` (its
`_create_tool_parameters_schema`; the wrapped Agent's other mandatory inputs, strings,
cannot be known from the trace). A serialized tool keeps the parameters it was given,
`null` for these: the model was offered this schema all the same."""


def _is_agent_tool(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, Mapping) else None
    return isinstance(kind, str) and kind.rsplit(".", 1)[-1] == "AgentTool"


def tool_dicts(items: Any) -> tuple[ToolDefinition, ...] | None:
    """The tools of a list of serialized Haystack tools (`{"type": "haystack.tools....Tool",
    "data": {"name", "description", "parameters", ...}}`, a `Toolset`'s
    `{"data": {"tools": [...]}}`); None when it holds none. An `AgentTool` serialized
    without parameters has Haystack's generated schema (`AGENT_TOOL_PARAMETERS`)."""
    if not isinstance(items, list):
        return None
    tools: list[ToolDefinition] = []
    for item in items[:MAX_TOOLS]:
        data = item.get("data") if isinstance(item, Mapping) else None
        if not isinstance(data, Mapping):
            continue
        nested = data.get("tools")
        members = nested if isinstance(nested, list) else [item]
        for member in members[:MAX_TOOLS]:
            spec = member.get("data", member) if isinstance(member, Mapping) else None
            if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
                continue
            parameters, description = spec.get("parameters"), spec.get("description")
            if parameters is None and _is_agent_tool(member):
                parameters = AGENT_TOOL_PARAMETERS
            tools.append(
                ToolDefinition(
                    name=spec["name"],
                    parameters=dict(parameters) if isinstance(parameters, Mapping) else {},
                    description=description if isinstance(description, str) else "",
                )
            )
    return tuple(tools) or None
