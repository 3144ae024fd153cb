"""Tool calls that a model wrote out as JSON text instead of emitting a structured call.

Under `tool_choice=auto` some models degrade the call to prose, the loop sees "no tool
call" and ends with exit code 0. Such a call never ran; recognising it lets validators
report the phantom call instead of trusting the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from factledger.processors.model import ToolCall

# A JSON object whose first key names a tool. Anchoring on the key keeps the scan linear:
# only these positions are handed to the JSON decoder, and at most _MAX_CALLS of them.
_CALL_START = re.compile(r'\{\s*"(?:name|tool|tool_name|function|recipient_name)"\s*:')
_NAME_KEYS = ("name", "tool", "tool_name", "recipient_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_MAX_CALLS = 20
_MAX_ATTEMPTS = 50
_MAX_CALL_CHARS = 64 * 1024
"""A written-out call longer than this is not decoded: the bound keeps nested or
unterminated objects from costing a scan of the whole reply per attempt."""
_DECODER = json.JSONDecoder()


def find_prose_calls(text: str, *, step: int = 0) -> tuple[ToolCall, ...]:
    """Every tool call written as a JSON object inside `text`, in order of appearance."""
    calls: list[ToolCall] = []
    position = 0
    for _ in range(_MAX_ATTEMPTS):
        if len(calls) >= _MAX_CALLS:
            break
        match = _CALL_START.search(text, position)
        if match is None:
            break
        window = text[match.start() : match.start() + _MAX_CALL_CHARS]
        try:
            obj, length = _DECODER.raw_decode(window)
        except (ValueError, RecursionError):
            position = match.end()
            continue
        end = match.start() + length
        call = _call_from_object(obj, text[match.start() : end], step)
        if call is not None:
            calls.append(call)
        position = end
    return tuple(calls)


def _call_from_object(obj: Any, raw: str, step: int) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict):
        obj = {**obj, **function}
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None and isinstance(function, str):
        name = function
    arg_key = next((k for k in _ARG_KEYS if k in obj), None)
    if not name or arg_key is None:
        return None
    arguments, arguments_text = parse_arguments(obj[arg_key])
    return ToolCall(
        name=name,
        arguments=arguments,
        arguments_text=arguments_text or raw,
        origin="prose",
        step=step,
    )


def parse_arguments(value: Any) -> tuple[Mapping[str, Any], str]:
    """Arguments as a mapping plus their raw text; unparseable text gives an empty mapping."""
    if isinstance(value, Mapping):
        try:
            return dict(value), json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):  # a Python literal JSON cannot hold
            return dict(value), repr(value)
    if isinstance(value, str):
        try:
            decoded = json.loads(value) if value.strip() else {}
        except (ValueError, RecursionError):
            return {}, value
        return (dict(decoded) if isinstance(decoded, dict) else {}), value
    if value is None:
        return {}, ""
    try:
        return {}, json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return {}, repr(value)
