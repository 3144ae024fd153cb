"""Read one turn from an OpenAI-style chat transcript.

Input: `{"model", "tools", "messages"}`. `tools` are OpenAI tool definitions
(`{"type": "function", "function": {...}}` or plain `{"name", "parameters"}`); `messages`
hold system, user, assistant (with `tool_calls`) and tool messages (`tool_call_id`,
`content`, optional `"is_error": true`). The last assistant message is the reply under
test; the turn starts at the last user message before it (framework nudges skipped);
everything earlier is conversation context.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from factledger.processors.errors import TranscriptError
from factledger.processors.evidence.prose_calls import find_prose_calls, parse_arguments
from factledger.processors.model import Message, ToolCall, ToolDefinition, Turn
from factledger.processors.normalize.values import is_mapping
from factledger.processors.nudges import is_framework_nudge, without_guard_calls

CONTEXT_WINDOW = 10
"""Conversation messages before the turn that count as known for identifiers (the usual
window of ten). Argument grounding reads every user message (`Turn.user_history`)."""


def turn_from_transcript(
    transcript: Mapping[str, Any], *, turn_id: str = "", conversation_id: str = ""
) -> Turn:
    """Build the `Turn` of a transcript's last assistant message.

    Raises `TranscriptError` naming the offending message when the shape is wrong.
    """
    read = read_transcript(transcript, turn_id=turn_id, conversation_id=conversation_id)
    return Turn(
        reply=read.reply,
        user_message=read.user_message,
        tool_calls=without_guard_calls(read.tool_calls),
        tools=read.tools,
        context=read.context,
        history_tool_calls=without_guard_calls(read.history_tool_calls),
        user_history=read.user_history,
        steps=read.steps,
        system_prompt=read.system_prompt,
        model=read.model,
        turn_id=read.turn_id,
        conversation_id=read.conversation_id,
        agent=read.agent,
        participants=read.participants,
        speakers=read.speakers,
    )


class TranscriptTurn:
    """What a transcript says of its turn: the fields of the `Turn` it gives.

    For a caller that completes the turn with more (the turn builder adds tools, the
    executions' results and where the spans came from): it makes its `Turn` once, where
    building one here and replacing fields would make two (a `Turn`'s generated
    `__init__` runs as interpreted Python, even when called from compiled code)."""

    __slots__ = (
        "agent",
        "context",
        "conversation_id",
        "history_tool_calls",
        "model",
        "participants",
        "reply",
        "speakers",
        "steps",
        "system_prompt",
        "tool_calls",
        "tools",
        "turn_id",
        "user_history",
        "user_message",
    )

    def __init__(
        self,
        reply: str,
        user_message: str,
        tool_calls: tuple[ToolCall, ...],
        tools: tuple[ToolDefinition, ...] | None,
        context: tuple[Message, ...],
        history_tool_calls: tuple[ToolCall, ...],
        user_history: tuple[str, ...],
        steps: tuple[str, ...],
        system_prompt: str,
        model: str,
        turn_id: str,
        conversation_id: str,
        agent: str,
        participants: tuple[str, ...],
        speakers: tuple[str, ...],
    ) -> None:
        self.reply = reply
        self.user_message = user_message
        self.tool_calls = tool_calls
        self.tools = tools
        self.context = context
        self.history_tool_calls = history_tool_calls
        self.user_history = user_history
        self.steps = steps
        self.system_prompt = system_prompt
        self.model = model
        self.turn_id = turn_id
        self.conversation_id = conversation_id
        self.agent = agent
        self.participants = participants
        self.speakers = speakers


def read_transcript(
    transcript: Mapping[str, Any], *, turn_id: str = "", conversation_id: str = ""
) -> TranscriptTurn:
    """`turn_from_transcript`'s reading, before it makes the `Turn` (same errors)."""
    if not is_mapping(transcript):
        raise TranscriptError("a transcript must be a JSON object with 'messages'")
    raw_messages = transcript.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise TranscriptError("transcript has no 'messages' list")
    messages = [_parse_message(i, m) for i, m in enumerate(raw_messages)]
    reply_index = _last_index(messages, lambda m: m.role == "assistant")
    if reply_index is None:
        raise TranscriptError("transcript has no assistant message to check")
    start = _last_index(
        messages[:reply_index], lambda m: m.role == "user" and not is_framework_nudge(m.text)
    )
    start = -1 if start is None else start
    results = _results_by_call_id(messages)

    history = messages[: start + 1] if start >= 0 else []
    in_turn = messages[start + 1 : reply_index + 1]
    reply = messages[reply_index]

    tool_calls: list[ToolCall] = []
    steps: list[str] = []
    for step, message in enumerate(m for m in in_turn if m.role == "assistant"):
        tool_calls.extend(_with_results(message.calls, results, step))
        tool_calls.extend(find_prose_calls(message.text, step=step))
        if message is not reply:
            steps.append(message.text)

    context = tuple(
        Message(m.role, m.text, is_framework_nudge=is_framework_nudge(m.text))  # type: ignore[arg-type]
        for m in history[:-1][-CONTEXT_WINDOW:]
        if m.role in ("user", "assistant") and m.text
    )
    # The window bounds what counts as an echo of the user's identifiers; what the user
    # gave anywhere in the conversation still grounds a call's arguments.
    user_history = tuple(
        m.text
        for m in history[:-1]
        if m.role == "user" and m.text and not is_framework_nudge(m.text)
    )
    history_calls = tuple(
        call
        for m in history
        if m.role == "assistant"
        for call in _with_results(m.calls, results, 0)
    ) + _unanswered_results(history)
    return TranscriptTurn(
        reply=reply.text,
        user_message=history[-1].text if history else "",
        tool_calls=tuple(tool_calls),
        tools=_parse_tools(transcript.get("tools")),
        context=context,
        history_tool_calls=history_calls,
        user_history=user_history,
        steps=tuple(steps),
        system_prompt="\n".join(m.text for m in messages if m.role == "system"),
        model=str(transcript.get("model") or ""),
        turn_id=turn_id or transcript_digest(transcript),
        conversation_id=conversation_id,
        agent=reply.name,
        participants=_participants(messages),
        speakers=tuple(
            dict.fromkeys(m.name for m in messages if m.name and m.role in ("user", "assistant"))
        ),
    )


def _participants(messages: list[_RawMessage]) -> tuple[str, ...]:
    """The named speakers of a chat (the `name` of its user and assistant messages, as a
    group chat sends them), when there are at least two; else none."""
    names = dict.fromkeys(m.name for m in messages if m.name and m.role in ("user", "assistant"))
    return tuple(names) if len(names) >= 2 else ()


def transcript_digest(transcript: Mapping[str, Any]) -> str:
    """A stable id for a transcript: the same content always gives the same turn id."""
    try:
        canonical = json.dumps(transcript, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):  # keys JSON cannot sort or hold
        canonical = repr(transcript)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class _RawMessage:
    """One message of the transcript, as read. A plain class, not a dataclass: compiled,
    its `__init__` is native, where a dataclass's is generated Python (a frozen one
    calling `object.__setattr__` per field), and one is made for every message."""

    __slots__ = ("calls", "is_error", "name", "role", "text", "tool_call_id")

    def __init__(
        self,
        role: str,
        text: str,
        calls: tuple[ToolCall, ...],
        tool_call_id: str,
        is_error: bool,
        name: str,
    ) -> None:
        self.role = role
        self.text = text
        self.calls = calls
        self.tool_call_id = tool_call_id
        self.is_error = is_error
        self.name = name
        """The speaker's name on a user or assistant message (OpenAI's `name`)."""


def _parse_message(index: int, raw: Any) -> _RawMessage:
    if not is_mapping(raw):
        raise TranscriptError(f"messages[{index}] is not an object")
    raw_role = raw.get("role")
    if raw_role not in ("system", "user", "assistant", "tool", "developer", "function"):
        raise TranscriptError(f"messages[{index}] has unknown role {raw_role!r}")
    role = {"developer": "system", "function": "tool"}.get(raw_role, str(raw_role))
    calls = _parse_tool_calls(index, raw.get("tool_calls")) if role == "assistant" else ()
    return _RawMessage(
        role=role,
        text=content_text(raw.get("content")),
        calls=calls,
        tool_call_id=str(raw.get("tool_call_id") or raw.get("name") or ""),
        is_error=bool(raw.get("is_error")),
        name=str(raw.get("name") or "") if role in ("user", "assistant") else "",
    )


def content_text(content: Any) -> str:
    """Message content as text: strings as they are, content-part lists joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif is_mapping(part):
                text = part.get("text", part.get("content"))
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(content)


def _parse_tool_calls(index: int, raw: Any) -> tuple[ToolCall, ...]:
    if raw is None or raw == "None" or raw == "":
        return ()
    if isinstance(raw, str):
        # Some exports store the list as a Python literal.
        try:
            raw = ast.literal_eval(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            raise TranscriptError(f"messages[{index}].tool_calls is unreadable: {exc}") from exc
    if not isinstance(raw, list):
        raise TranscriptError(f"messages[{index}].tool_calls is not a list")
    calls = []
    for j, item in enumerate(raw):
        if not is_mapping(item):
            raise TranscriptError(f"messages[{index}].tool_calls[{j}] is not an object")
        function = item.get("function") if is_mapping(item.get("function")) else item
        assert is_mapping(function)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise TranscriptError(f"messages[{index}].tool_calls[{j}] has no function name")
        arguments, arguments_text = parse_arguments(function.get("arguments"))
        calls.append(
            ToolCall(
                name=name,
                call_id=str(item.get("id") or f"call_{index}_{j}"),
                arguments=arguments,
                arguments_text=arguments_text,
            )
        )
    return tuple(calls)


UNNAMED_RESULT = "tool_result"
"""The name of a call known only by its result: a tool message that answers no call."""


def _unanswered_results(history: Sequence[_RawMessage]) -> tuple[ToolCall, ...]:
    """Tool results of earlier turns that answer no call the history holds (a code
    agent's interpreter output, whose calls were code): the system's record all the same,
    so they stay evidence for later turns, as calls the framework wrote down."""
    called = {c.call_id for m in history if m.role == "assistant" for c in m.calls}
    return tuple(
        ToolCall(
            name=UNNAMED_RESULT,
            call_id=m.tool_call_id,
            result=m.text,
            error=m.is_error,
            origin="framework",
        )
        for m in history
        if m.role == "tool" and m.text and (not m.tool_call_id or m.tool_call_id not in called)
    )


def _results_by_call_id(messages: Sequence[_RawMessage]) -> dict[str, _RawMessage]:
    return {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}


def _with_results(
    calls: Sequence[ToolCall], results: Mapping[str, _RawMessage], step: int
) -> list[ToolCall]:
    out = []
    for call in calls:
        result = results.get(call.call_id)
        out.append(
            ToolCall(
                name=call.name,
                call_id=call.call_id,
                arguments=call.arguments,
                arguments_text=call.arguments_text,
                result=None if result is None else result.text,
                error=False if result is None else result.is_error,
                step=step,
            )
        )
    return out


def _parse_tools(raw: Any) -> tuple[ToolDefinition, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise TranscriptError("'tools' must be a list of tool definitions")
    tools = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            try:
                item = json.loads(item)
            except (ValueError, RecursionError) as exc:
                raise TranscriptError(f"tools[{i}] is not valid JSON") from exc
        if not is_mapping(item):
            raise TranscriptError(f"tools[{i}] is not an object")
        spec = item.get("function") if is_mapping(item.get("function")) else item
        assert is_mapping(spec)
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise TranscriptError(f"tools[{i}] has no name")
        params = spec.get("parameters") or spec.get("input_schema") or {}
        tools.append(
            ToolDefinition(
                name=name,
                parameters=params if is_mapping(params) else {},
                description=str(spec.get("description") or ""),
            )
        )
    return tuple(tools)


def _last_index(items: Sequence[_RawMessage], predicate: Any) -> int | None:
    for i in range(len(items) - 1, -1, -1):
        if predicate(items[i]):
            return i
    return None
