"""Chat messages and tool results, read from whatever shape an instrumentation wrote.

Like `values`, every reader accepts JSON text or structured values and never raises.
Message shapes understood by `read_messages` (one list may mix them):

- OTel GenAI: `{"role", "parts": [{"type": "text" | "tool_call" | "tool_call_response"}]}`
- OpenAI chat: `{"role", "content", "tool_calls": [{"id", "function": {...}}], "tool_call_id"}`
- OpenAI Responses items: `{"type": "message" | "function_call" | "function_call_output"}`
- Anthropic blocks: `text`, `tool_use`, `tool_result`; Vercel AI SDK: `tool-call`, `tool-result`
- Gemini: `{"role": "model", "parts": [{"text"}, {"function_call"}, {"function_response"}]}`
- Bedrock Converse blocks (Strands' content): `{"text"}`, `{"json"}`, `{"toolUse": {"toolUseId",
  "name", "input"}}`, `{"toolResult": {"toolUseId", "status", "content": [blocks]}}` (its
  `"status": "error"` marks the result failed), also as a JSON list in a content string
- LangChain: `{"type": "human" | "ai" | "tool", "content", "tool_calls"}` (a message's
  `model_dump`), `{"type", "data": {...}}` (`message_to_dict`) and `lc` objects (`dumpd`);
  a tool message's `"status": "error"` marks its result failed
- wrappers around those: `{"messages"}`, `{"contents"}`, `{"output"}`, `{"choices"}`,
  `{"candidates"}`, `{"content": {...}}`, `{"message"}`, `{"new_message"}`, `{"text"}`,
  `{"prompt"}`.

A user or assistant message's `name` (Chat Completions, GenAI, OpenInference
`message.name`) is its speaker: in a group chat, the agent or person who said it.
A user message in CrewAI's task prompt (`\nCurrent Task: {description}` and its criteria)
is the description alone. A tool result inside any message becomes its own
`ChatMessage(role="tool")`. A Responses
API call named only by its item id (`fc_…`) takes the call id (`call_…`) of the result
that answers it, and keeps the item id (`ToolCallPart.item_id`) by which an earlier
call's output may name it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from .base import ChatMessage, ToolCallPart
from .values import arguments_text, as_text, is_mapping, load_json

MAX_MESSAGES = 2_000
"""Messages read from one value; the rest is ignored."""
MAX_PARTS = 500
"""Parts, content blocks or tool calls read from one message."""
MAX_DEPTH = 6
"""How deep wrappers (`{"messages": ...}`, `{"content": {...}}`) are followed."""

_ROLE_ALIASES = {
    "human": "user",
    "ai": "assistant",
    "model": "assistant",
    "developer": "system",
    "function": "tool",
    "ipython": "tool",
    "humanmessage": "user",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "systemmessage": "system",
    "toolmessage": "tool",
    "functionmessage": "tool",
}
_LANGCHAIN_TYPES = frozenset({"human", "ai", "system", "tool", "function", "developer"})
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_CALL_PARTS = frozenset({"tool_call", "tool-call", "tool_use", "function_call"})
_RESULT_PARTS = frozenset(
    {"tool_call_response", "tool-result", "tool_result", "function_call_output"}
)
_IGNORED_PARTS = frozenset({"reasoning", "thinking", "redacted_thinking"})
_KNOWN_PARTS = _TEXT_PARTS | _CALL_PARTS | _RESULT_PARTS | _IGNORED_PARTS | {"image", "file"}
_PART_KEYS = (
    "type",
    "text",
    "function_call",
    "function_response",
    "message_content",
    "toolUse",
    "toolResult",
)
_PART_KEY_SET = frozenset(_PART_KEYS)
CONVERSE_BLOCKS = frozenset(
    {
        "text",
        "json",
        "toolUse",
        "toolResult",
        "image",
        "document",
        "video",
        "reasoningContent",
        "cachePoint",
        "citationsContent",
        "guardContent",
    }
)
"""The members of a Bedrock Converse `ContentBlock` (one per block), as Strands writes them."""

# --- messages -----------------------------------------------------------------------------


def read_messages(value: Any, default_role: str = "user") -> tuple[ChatMessage, ...]:
    """The chat messages in `value` (any shape listed in the module docstring), in order.

    `default_role` applies where a shape names none (plain text, `{"text": ...}`). Messages
    with neither text nor tool calls are dropped; tool results always stay.
    """
    if isinstance(value, str):
        return _text_messages(value, default_role)
    return _read_messages(value, default_role)


@lru_cache(maxsize=1024)
def _text_messages(text: str, default_role: str) -> tuple[ChatMessage, ...]:
    """Memoised: an agent span repeats its first LLM call's input and its last one's output,
    and every agent of a conversation sends the same history again. The messages are
    frozen, so one tuple can serve every span that carries the same text."""
    return _read_messages(text, default_role)


def _read_messages(value: Any, default_role: str) -> tuple[ChatMessage, ...]:
    out: list[ChatMessage] = []
    _collect(load_json(value, partial=True), default_role, out, 0)
    return tuple(_with_item_ids_resolved([_task_request(m) for m in out[:MAX_MESSAGES]]))


CREWAI_TASK = "\nCurrent Task: "
"""How CrewAI's prompt of a task (`native_task`, `task`, `task_no_tools`) opens."""
_CREWAI_AFTER_TASK = (
    "\nThis is the expected criteria for your final answer: ",
    "\n\nThis is the context you're working with:\n",
    "\n\nTrigger Payload: ",
    "\n\nBegin! This is VERY important to you, ",
    "\n\nProvide your complete response:",
)
"""What CrewAI writes after the task's description: the expected output's criteria, the
context from earlier tasks, a trigger's payload, the closing of its ReAct prompt."""


def _task_request(message: ChatMessage) -> ChatMessage:
    """CrewAI sends the user's request as the description of a task, inside its own
    prompt (`\nCurrent Task: {description}` and the criteria, context and instructions
    after it): the request is the description. A delegated task's description is the
    delegating agent's prompt, so the opening is taken off as often as it comes."""
    text = message.text
    if message.role != "user" or not text.startswith(CREWAI_TASK):
        return message
    while text.startswith(CREWAI_TASK):
        text = text[len(CREWAI_TASK) :]
        ends = [i for marker in _CREWAI_AFTER_TASK if (i := text.find(marker)) >= 0]
        text = text[: min(ends)].rstrip("\n") if ends else text
    return replace(message, text=text)


RESPONSES_ITEM_PREFIX = "fc_"
"""How an OpenAI Responses API `function_call` item id starts (its call id: `call_`)."""


def _with_item_ids_resolved(messages: list[ChatMessage]) -> list[ChatMessage]:
    """A Responses API `function_call` item has two ids: `id` (`fc_…`) names the item,
    `call_id` (`call_…`) the call, and the call's output answers the `call_id`. A writer
    that keeps only the item id (OpenLLMetry's OpenAI Agents instrumentation, for the
    calls in `gen_ai.input.messages`; its OpenAI instrumentation on the Responses API,
    for the calls of both input and output) would make one call look like two: a call
    nothing answers and an answer to no call. Each such call takes the id of the first
    later tool result that answers no call of the list, and keeps its item id."""
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    if not any(
        p.call_id.startswith(RESPONSES_ITEM_PREFIX) and p.call_id not in answered
        for m in messages
        for p in m.tool_calls
    ):
        return messages
    requested = {p.call_id for m in messages for p in m.tool_calls}
    waiting: list[tuple[int, int]] = []  # (message, part) of calls named by item id only
    renamed: dict[tuple[int, int], str] = {}
    for i, m in enumerate(messages):
        for j, p in enumerate(m.tool_calls):
            if p.call_id.startswith(RESPONSES_ITEM_PREFIX) and p.call_id not in answered:
                waiting.append((i, j))
        if m.role == "tool" and m.tool_call_id and m.tool_call_id not in requested and waiting:
            renamed[waiting.pop(0)] = m.tool_call_id
    if not renamed:
        return messages
    out = []
    for i, m in enumerate(messages):
        parts = tuple(
            replace(p, call_id=renamed[(i, j)], item_id=p.call_id) if (i, j) in renamed else p
            for j, p in enumerate(m.tool_calls)
        )
        out.append(replace(m, tool_calls=parts) if parts != m.tool_calls else m)
    return out


def last_text(messages: Sequence[ChatMessage], role: str) -> str:
    """The text of the last message of `role` that has any ("" when none has)."""
    for message in reversed(messages):
        if message.role == role and message.text:
            return message.text
    return ""


def reply_text(value: Any) -> str:
    """The final assistant text in an output value, else a known text field, else the text."""
    text = last_text(read_messages(value, "assistant"), "assistant")
    if text:
        return text
    return _known_field(value, ("raw", "final_output", "output", "result", "answer")) or (
        as_text(value)
    )


def request_text(value: Any) -> str:
    """The last user text in an input value, else a known text field, else the text."""
    text = last_text(read_messages(value, "user"), "user")
    if text:
        return text
    return _known_field(value, ("input", "query", "question", "prompt", "task")) or as_text(value)


def content_text(content: Any) -> str:
    """The text parts of a content value (string, parts, blocks) joined by newlines."""
    if isinstance(content, str):
        return _text_content(content)
    return _content_text(content)


@lru_cache(maxsize=256)
def _text_content(text: str) -> str:
    """Memoised: every LLM call of an agent sends the same system instructions."""
    return _content_text(text)


def _content_text(content: Any) -> str:
    texts: list[str] = []
    _content(_structured(content), texts, [], [])
    return "\n".join(texts)


def _known_field(value: Any, keys: Sequence[str]) -> str:
    parsed = load_json(value)
    if is_mapping(parsed):
        for key in keys:
            field = parsed.get(key)
            if isinstance(field, str) and field:
                return field
    return ""


_WRAPPERS = (
    "messages",
    "contents",
    "input",
    "output",
    "choices",
    "candidates",
    "message",
    "new_message",
    "content",
)


def _collect(value: Any, role: str, out: list[ChatMessage], depth: int) -> None:
    if depth > MAX_DEPTH or len(out) >= MAX_MESSAGES:
        return
    if isinstance(value, str):
        if value.strip():
            out.append(ChatMessage(role=role, text=value))
        return
    if isinstance(value, list | tuple):
        for item in value[:MAX_MESSAGES]:
            _collect(load_json(item) if isinstance(item, str) else item, role, out, depth + 1)
        return
    if not is_mapping(value):
        return
    if _is_message(value):
        out.extend(_message(value, role))
        return
    for key in _WRAPPERS:
        inner = value.get(key)
        if isinstance(inner, list | tuple) or is_mapping(inner):
            _collect(inner, role, out, depth + 1)
            return
    for key in ("text", "prompt", "completion"):
        inner = value.get(key)
        if isinstance(inner, str) and inner.strip():
            out.append(ChatMessage(role="user" if key == "prompt" else role, text=inner))
            return


def _is_message(m: Mapping[str, Any]) -> bool:
    if isinstance(m.get("role"), str) or "parts" in m or "tool_calls" in m:
        return True
    kind = _type(m)
    if kind in ("message", "function_call", "function_call_output"):
        return True
    if kind in _LANGCHAIN_TYPES and ("content" in m or is_mapping(m.get("data"))):
        return True
    return m.get("lc") == 1 and is_mapping(m.get("kwargs"))


def _langchain_flat(m: Mapping[str, Any], default_role: str) -> Mapping[str, Any]:
    """A LangChain message in its flat form: an `lc` object (`dumpd`) becomes its kwargs
    with the role of its class, a `message_to_dict` value (`{"type", "data"}`) its data
    with the type; any other mapping is returned as given."""
    if m.get("lc") == 1 and is_mapping(m.get("kwargs")):
        ids = m.get("id")
        cls = ids[-1] if isinstance(ids, list) and ids and isinstance(ids[-1], str) else ""
        return {"role": _ROLE_ALIASES.get(cls.lower(), default_role), **m["kwargs"]}
    kind = _type(m)
    data = m.get("data")
    if kind in _LANGCHAIN_TYPES and is_mapping(data) and "content" not in m:
        return {**data, "type": kind}
    return m


def _type(m: Mapping[str, Any]) -> str | None:
    """The `type` field when it is text (anything else cannot name a shape)."""
    kind = m.get("type")
    return kind if isinstance(kind, str) else None


def _role(m: Mapping[str, Any], default: str) -> str:
    raw = m.get("role")
    if not isinstance(raw, str) or not raw:
        raw = _type(m) if _type(m) in _LANGCHAIN_TYPES else None
    if not isinstance(raw, str) or not raw:
        return default
    lowered = raw.strip().lower()
    return _ROLE_ALIASES.get(lowered, lowered)


def _message(m: Mapping[str, Any], default_role: str) -> list[ChatMessage]:
    m = _langchain_flat(m, default_role)
    kind = _type(m)
    if kind == "function_call":
        call = _call(m.get("call_id") or m.get("id"), m.get("name"), m.get("arguments"))
        return [ChatMessage(role="assistant", tool_calls=(call,))] if call else []
    if kind == "function_call_output":
        return [_tool_message(m.get("call_id"), m.get("output"), False)]

    role = _role(m, default_role)
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    results: list[ChatMessage] = []
    for key in ("parts", "content", "contents"):
        _content(_structured(m.get(key)), texts, calls, results)
    own_calls = m.get("tool_calls")
    if not own_calls and is_mapping(m.get("additional_kwargs")):
        own_calls = m["additional_kwargs"].get("tool_calls")
    _tool_calls(own_calls, calls)
    if is_mapping(m.get("function_call")):
        _tool_calls([m["function_call"]], calls)

    if role == "tool" and not results:
        call_id = m.get("tool_call_id") or m.get("tool_use_id") or m.get("id")
        error = m.get("is_error") is True or m.get("status") == "error"
        return [_tool_message(call_id, "\n".join(texts), error)]
    out = list(results)
    if texts or calls:
        speaker = m.get("name") if role in ("user", "assistant") else None
        out.append(
            ChatMessage(
                role=role,
                text="\n".join(texts),
                tool_calls=_unique(calls),
                name=speaker.strip() if isinstance(speaker, str) else "",
            )
        )
    return out


def _structured(value: Any) -> Any:
    """Content kept as text unless the text is a JSON list of typed parts or of Bedrock
    Converse blocks (Strands serializes a message's content blocks so)."""
    if not isinstance(value, str) or not value.lstrip().startswith("["):
        return value  # only a JSON list can hold typed parts: skip parsing anything else
    parsed = load_json(value)
    if isinstance(parsed, list) and parsed and all(_is_typed_part(p) for p in parsed):
        return parsed
    if isinstance(parsed, list) and parsed and all(is_converse_block(p) for p in parsed):
        return parsed
    return value


def _is_typed_part(part: Any) -> bool:
    return is_mapping(part) and _type(part) in _KNOWN_PARTS


def is_converse_block(part: Any) -> bool:
    """Whether `part` is a Bedrock Converse content block: one mapping with a single
    member that names the block's kind (`{"text": ...}`, `{"toolUse": {...}}`, ...)."""
    return is_mapping(part) and len(part) == 1 and next(iter(part)) in CONVERSE_BLOCKS


def _is_json_block(part: Any) -> bool:
    """A Bedrock Converse `{"json": value}` block (a tool result's structured content)."""
    return is_converse_block(part) and "json" in part


def _is_part(part: Any) -> bool:
    return is_mapping(part) and not _PART_KEY_SET.isdisjoint(part)


def _content(
    content: Any, texts: list[str], calls: list[ToolCallPart], results: list[ChatMessage]
) -> None:
    if content is None:
        return
    if isinstance(content, str):
        if content:
            texts.append(content)
        return
    if is_mapping(content):
        if _is_part(content):
            _part(content, texts, calls, results)
        else:
            texts.append(as_text(content))
        return
    if not isinstance(content, list | tuple):
        texts.append(as_text(content))
        return
    if content and not any(isinstance(p, str) or _is_part(p) or _is_json_block(p) for p in content):
        texts.append(as_text(content))  # structured data (a tool's JSON), not parts
        return
    for part in content[:MAX_PARTS]:
        if isinstance(part, str):
            if part:
                texts.append(part)
        elif _is_json_block(part):
            texts.append(as_text(part["json"]))
        elif _is_part(part):
            _part(part, texts, calls, results)
        elif part is not None:
            texts.append(as_text(part))


def _part(
    p: Mapping[str, Any], texts: list[str], calls: list[ToolCallPart], results: list[ChatMessage]
) -> None:
    inner = p.get("message_content")
    if is_mapping(inner):  # OpenInference `contents.K.message_content`
        p = inner
    kind = _type(p)
    if kind in _IGNORED_PARTS:
        return
    if kind is None and (is_mapping(p.get("toolUse")) or is_mapping(p.get("toolResult"))):
        _converse_tool_block(p, calls, results)
    elif kind in _CALL_PARTS:
        call = _call(
            p.get("id") or p.get("toolCallId") or p.get("call_id"),
            p.get("name") or p.get("toolName"),
            _first_present(p, "arguments", "input", "args"),
        )
        if call:
            calls.append(call)
    elif kind in _RESULT_PARTS:
        call_id = p.get("id") or p.get("toolCallId") or p.get("tool_use_id") or p.get("call_id")
        payload = _first_present(p, "response", "result", "output", "content")
        error = p.get("is_error") is True
        if is_mapping(payload) and isinstance(payload.get("type"), str):
            # Vercel AI SDK 5: {"type": "text" | "json" | "error-text" | ..., "value": ...}
            error = error or payload["type"].startswith("error")
            payload = payload.get("value", payload)
        results.append(_tool_message(call_id, _payload_text(payload), error))
    elif is_mapping(p.get("function_call")):  # Gemini
        fc = p["function_call"]
        call = _call(fc.get("id"), fc.get("name"), fc.get("args"))
        if call:
            calls.append(call)
    elif is_mapping(p.get("function_response")):  # Gemini
        fr = p["function_response"]
        results.append(_tool_message(fr.get("id"), as_text(fr.get("response")), False))
    elif kind is None or kind in _TEXT_PARTS:
        text = p.get("text") if isinstance(p.get("text"), str) else p.get("content")
        if isinstance(text, str) and text:
            texts.append(text)


def _converse_tool_block(
    p: Mapping[str, Any], calls: list[ToolCallPart], results: list[ChatMessage]
) -> None:
    """A Bedrock Converse `toolUse` block as a call, a `toolResult` block as a result (its
    content blocks' text; `"status": "error"` is the failure)."""
    use = p.get("toolUse")
    if is_mapping(use):
        call = _call(use.get("toolUseId"), use.get("name"), use.get("input"))
        if call:
            calls.append(call)
        return
    result = p["toolResult"]
    payload = result.get("content")
    error = result.get("status") == "error"
    results.append(_tool_message(result.get("toolUseId"), _payload_text(payload), error))


def _first_present(m: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in m and m[key] is not None:
            return m[key]
    return None


def _payload_text(payload: Any) -> str:
    if isinstance(payload, list) and payload and all(is_mapping(b) for b in payload):
        text = content_text(payload)
        if text:
            return text
    return as_text(payload)


def _tool_message(call_id: Any, text: Any, error: bool) -> ChatMessage:
    return ChatMessage(
        role="tool",
        text=as_text(text),
        tool_call_id=_id_text(call_id),
        is_error=error,
    )


def _tool_calls(raw: Any, calls: list[ToolCallPart]) -> None:
    raw = load_json(raw)
    if is_mapping(raw):
        raw = [raw]
    if not isinstance(raw, list | tuple):
        return
    for item in raw[:MAX_PARTS]:
        item = load_json(item)
        if not is_mapping(item):
            continue
        fn = item.get("function") if is_mapping(item.get("function")) else item
        assert is_mapping(fn)
        arguments = _first_present(fn, "arguments", "args", "input")
        call = _call(
            item.get("id") or item.get("call_id") or item.get("toolCallId"),
            fn.get("name") or item.get("toolName"),
            arguments,
        )
        if call:
            calls.append(call)


def _call(call_id: Any, name: Any, arguments: Any) -> ToolCallPart | None:
    name_text = name if isinstance(name, str) else ""
    id_text = _id_text(call_id)
    if not name_text and not id_text:
        return None
    return ToolCallPart(call_id=id_text, name=name_text, arguments=arguments_text(arguments))


def _id_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _unique(calls: list[ToolCallPart]) -> tuple[ToolCallPart, ...]:
    seen: set[str] = set()
    out = []
    for call in calls:
        if call.call_id and call.call_id in seen:
            continue
        seen.add(call.call_id)
        out.append(call)
    return tuple(out)


# --- tool results ------------------------------------------------------------------------


def tool_result(value: Any) -> tuple[str | None, bool]:
    """A tool's recorded result as text, and whether the result itself reports an error.

    A JSON string literal is unquoted; an MCP `CallToolResult` (`{"content": [blocks],
    "isError"}`) becomes the text of its blocks, and so does a list of Bedrock Converse
    blocks (a Strands `ToolResult`'s content), and so do text blocks alone (`{"type":
    "text", "text"}`, or a list of them: the OpenAI Agents SDK's output of an MCP tool, its
    `ToolOutputTextDict`), so that a result the text holds (an error object) is read as
    one. Anything else is kept as recorded.
    """
    if value is None:
        return None, False
    parsed = load_json(value)
    if isinstance(parsed, str):
        return parsed, False
    if is_mapping(parsed) and set(parsed) <= {"content", "isError", "structuredContent"}:
        blocks = parsed.get("content")
        if isinstance(blocks, list):
            return content_text(blocks), parsed.get("isError") is True
    if isinstance(parsed, list) and parsed and all(is_converse_block(b) for b in parsed):
        return content_text(parsed), False
    blocks = [parsed] if is_mapping(parsed) else parsed
    if isinstance(blocks, list) and blocks and all(_is_text_block(b) for b in blocks):
        return "\n".join(b["text"] for b in blocks), False
    return as_text(value), False


_TEXT_BLOCK_KEYS = frozenset({"type", "text", "annotations"})


def _is_text_block(value: Any) -> bool:
    return (
        is_mapping(value)
        and value.get("type") == "text"
        and isinstance(value.get("text"), str)
        and set(value) <= _TEXT_BLOCK_KEYS
    )


def langchain_tool_message(output: Any) -> tuple[str, str | None, bool]:
    """(call id, content, error) of a LangChain `ToolMessage` in any of its dumped forms
    (`lc` object, `message_to_dict`, `model_dump`); ("", None, False) for anything else.
    The content is the result; `"status": "error"` is the failure."""
    parsed = load_json(output)
    if not is_mapping(parsed):
        return "", None, False
    flat = _langchain_flat(parsed, "")
    # Only LangChain's forms: an OpenAI-style `{"role": "tool"}` message is not one.
    langchain = _type(flat) == "tool" or (flat is not parsed and flat.get("role") == "tool")
    if not langchain or "content" not in flat:
        return "", None, False
    call_id = flat.get("tool_call_id")
    return (
        call_id if isinstance(call_id, str) else "",
        _payload_text(flat.get("content")),
        flat.get("status") == "error",
    )
