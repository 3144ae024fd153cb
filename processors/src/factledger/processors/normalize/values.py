"""Tolerant readers for attribute values, shared by the convention modules.

Attribute values arrive as JSON text, as already-structured lists and mappings (OTLP
kvlists, SDKs that keep objects), or as plain strings. Every reader here accepts any of
them, returns what it can read and never raises on odd input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeGuard

from ..model import ToolDefinition
from ..spans import SpanRecord
from .json_text import loads

MAX_ITEMS = 2_000
"""Items salvaged from one truncated JSON array."""
MAX_TOOLS = 500
"""Tool definitions read from one value."""
MAX_INDEX_DIGITS = 6
"""Flattened indices longer than this (`prefix.1234567.role`) are ignored."""
MAX_PATH_SEGMENTS = 12
"""Flattened keys with more dot-separated segments below their prefix are ignored."""

CONVERSATION_KEYS: tuple[str, ...] = (
    "gen_ai.conversation.id",
    "session.id",
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
    "traceloop.association.properties.thread_id",
    "ai.telemetry.metadata.sessionId",
    "ai.telemetry.metadata.conversationId",
    "langfuse.session.id",
)
"""Attributes that carry the conversation (session, thread) id, first found wins."""


# --- scalars ------------------------------------------------------------------------------


_NEVER_MAPPINGS = frozenset({str, list, tuple, int, float, bool, bytes, type(None)})


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """`isinstance(value, Mapping)`, without the ABC's `__instancecheck__` for the types parsed
    JSON and OTLP attribute values are made of: a dict is a mapping, a str or list (exactly
    those types) never is. The ABC check was a tenth of reading messages; other types still
    get it, so any other Mapping is read as before."""
    return isinstance(value, dict) or (
        type(value) not in _NEVER_MAPPINGS and isinstance(value, Mapping)
    )


def load_json(value: Any, *, partial: bool = False) -> Any:
    """`value` parsed when it is JSON text (an object, array or string literal), else as given.

    With `partial`, a JSON array of objects cut short (SDKs truncate long attributes)
    yields its complete leading items instead of staying text.
    """
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"'):
            parsed = _parse(stripped, partial)
            return value if parsed is _UNPARSED else parsed
    return value


_UNPARSED = object()


@lru_cache(maxsize=2048)
def _parse(text: str, partial: bool) -> Any:
    """Memoised: the same attribute text recurs across the spans of a conversation (each
    chat span repeats the history, tool definitions and system instructions). Callers
    treat the parsed value as read-only."""
    try:
        return loads(text)
    except (ValueError, RecursionError):
        if partial and _ARRAY_OF_VALUES.match(text):
            return _leading_items(text)
        return _UNPARSED


_ARRAY_OF_VALUES = re.compile(r"\[\s*[{\[\"]")


def _leading_items(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    items: list[Any] = []
    position = 1
    while len(items) < MAX_ITEMS:
        position = _skip_space(text, position)
        try:
            item, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            break
        items.append(item)
        position = _skip_space(text, position)
        if not text.startswith(",", position):
            break
        position += 1
    return items


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
"""What `json.dumps(value, ensure_ascii=False, default=str)` builds for every call."""


def as_text(value: Any) -> str:
    """A value as text: strings as they are, None as "", anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return repr(value)
    except RecursionError:  # nested deeper than the interpreter can print
        return ""


def arguments_text(value: Any) -> str:
    """Tool-call arguments as JSON text: text as given, objects serialized, absent as ""."""
    return as_text(value)


def string(attributes: Mapping[str, Any], *keys: str) -> str:
    """The first of `keys` holding a non-empty scalar, as text ("" when none does)."""
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str | int | float) and str(value):
            return str(value)
    return ""


def first(attributes: Mapping[str, Any], *keys: str) -> Any:
    """The first of `keys` present with a value other than None or ""."""
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "":
            return value
    return None


def conversation_id(attributes: Mapping[str, Any]) -> str:
    """The conversation (session, thread) id, whichever convention carries it."""
    return string(attributes, *CONVERSATION_KEYS)


RESPONSE_ID_PREFIX = "resp_"
"""How OpenAI's Responses API ids begin (its conversations' ids begin `conv_`)."""


def named_response(conversation: str) -> str:
    """The response a conversation id names, or "". A client of the Responses API that
    chains calls by `previous_response_id` records that id as the conversation id (the
    Microsoft Agent Framework sends a `resp_` id as `previous_response_id` and a `conv_`
    id as the conversation): a different one on every call, naming the call before."""
    return conversation if is_response_id(conversation) else ""


def is_response_id(text: str) -> bool:
    """Whether `text` is the id of a Responses API response (what `previous_response_id`
    continues)."""
    return text.startswith(RESPONSE_ID_PREFIX)


def unwrap_single(value: Any, keys: Iterable[str]) -> Any:
    """`{"input": {...}}` → `{...}` for a one-key wrapper naming the payload; else `value`.

    Only a mapping payload is unwrapped, so a tool whose one parameter is called `input`
    keeps its arguments.
    """
    parsed = load_json(value)
    if is_mapping(parsed) and len(parsed) == 1:
        ((key, inner),) = parsed.items()
        if key in keys and is_mapping(inner):
            return inner
    return value


# --- flattened attributes -----------------------------------------------------------------


def unflatten(attributes: Mapping[str, Any], prefix: str) -> list[Any]:
    """The items of flattened attributes `prefix.N.rest`, as nested values in index order.

    `llm.input_messages.0.message.role` under `llm.input_messages` gives
    `[{"message": {"role": ...}}]`; numeric segments deeper down become lists too. A key
    that is both a value and a prefix keeps whichever came first.
    """
    start = prefix + "."
    root: dict[str, Any] = {}
    for key, value in attributes.items():
        if not isinstance(key, str) or not key.startswith(start):
            continue
        path = key[len(start) :].split(".", MAX_PATH_SEGMENTS)
        if len(path) > MAX_PATH_SEGMENTS or not _is_index(path[0]) or not all(path):
            continue
        _insert(root, path, value)
    items = _listify(root)
    return items if isinstance(items, list) else []


def _is_index(segment: str) -> bool:
    return segment.isascii() and segment.isdigit() and len(segment) <= MAX_INDEX_DIGITS


def _insert(node: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for segment in path[:-1]:
        child = node.setdefault(segment, {})
        if not isinstance(child, dict):
            return
        node = child
    node.setdefault(path[-1], value)


def _listify(node: Any) -> Any:
    if not isinstance(node, dict) or not node:
        return node
    if all(_is_index(k) for k in node):
        return [_listify(node[k]) for k in sorted(node, key=int)]
    return {k: _listify(v) for k, v in node.items()}


# --- tool definitions ---------------------------------------------------------------------


_TOOL_NAME = re.compile(r"[A-Za-z_][\w.:-]{0,127}")
"""What a tool's bare name looks like (no spaces: a sentence is not a name)."""


def tool_definitions(value: Any) -> tuple[ToolDefinition, ...] | None:
    """Tool definitions in `value`: OpenAI (`{"type": "function", "function": {...}}` or flat),
    Anthropic (`input_schema`), Vercel (`inputSchema`), Gemini (`function_declarations`),
    Pydantic AI (`parameters_json_schema`), or bare names (Mastra), without a schema; items
    may be JSON text. None when unreadable.
    """
    if isinstance(value, str):
        return _text_tool_definitions(value)
    return _tool_definitions(value)


@lru_cache(maxsize=256)
def _text_tool_definitions(text: str) -> tuple[ToolDefinition, ...] | None:
    """Memoised like `_parse`: every LLM span of an agent offers the same tools, and
    reading them again was about 3% of judging a turn. The definitions are read-only."""
    return _tool_definitions(text)


def _tool_definitions(value: Any) -> tuple[ToolDefinition, ...] | None:
    parsed = load_json(value, partial=True)
    if is_mapping(parsed):
        parsed = [parsed]
    if not isinstance(parsed, list | tuple):
        return None
    tools: list[ToolDefinition] = []
    _definitions(parsed, tools, 0)
    return tuple(tools)


def _definitions(items: Sequence[Any], tools: list[ToolDefinition], depth: int) -> None:
    for item in items[:MAX_TOOLS]:
        if len(tools) >= MAX_TOOLS or depth > 2:
            return
        item = load_json(item)
        if isinstance(item, str) and _TOOL_NAME.fullmatch(item):
            # A bare name (Mastra's `gen_ai.tool.definitions` lists only the names of the
            # agent's tools): the tool was offered, its schema is unknown.
            tools.append(ToolDefinition(name=item))
            continue
        if not is_mapping(item):
            continue
        declarations = item.get("function_declarations") or item.get("functionDeclarations")
        if isinstance(declarations, list):
            _definitions(declarations, tools, depth + 1)
            continue
        spec = item.get("function") if is_mapping(item.get("function")) else item
        assert is_mapping(spec)
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            continue
        schema = load_json(
            first(spec, "parameters", "input_schema", "inputSchema", "parameters_json_schema")
        )
        description = spec.get("description")
        tools.append(
            ToolDefinition(
                name=name,
                parameters=schema if is_mapping(schema) else {},
                description=description if isinstance(description, str) else "",
            )
        )


def exception_message(span: SpanRecord) -> str | None:
    """What a span that raised says went wrong: its last exception event's message, else
    its status message; None when it says nothing."""
    for event in reversed(span.events):
        if event.name == "exception":
            message = event.attributes.get("exception.message")
            if isinstance(message, str) and message:
                return message
    return span.status_message or None
