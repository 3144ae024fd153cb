"""Did a tool call succeed? The system's record decides, not the model's account.

A call failed when the source marked it (span status ERROR, `is_error`) or when its
payload says so: an error object, `"ok": false`, `"is_error": true`, `"status": "failed"`,
an error described by its type and details (`error_type` with `error_details`: what Google
ADK's `ReflectAndRetryToolPlugin` hands the model in place of a raised exception), an HTTP
4xx/5xx status or an error banner. A call without a recorded result did not
succeed either.

Frameworks wrap what a tool returned (`{"content": ...}`, LlamaIndex's `raw_output`, an
HTTP client's `data`, `{"output": ...}`, `{"result": ...}`), sometimes as text inside the
wrapper and sometimes as Python-literal text (`{'ok': False, ...}`, a dict's `str()`).
So the payload is read through up to `MAX_WRAPPER_DEPTH` wrappers.

Whose fields are they? The call's own outcome is stated by the top level of its result:
its `status`, `ok`/`success`, `error` and HTTP status fields. A wrapper that is the whole
result (an envelope: every key of the object is a wrapper key or envelope metadata such as
`is_error`, `tool_name`, `type`, as in `{"result": {"status": "failed", ...}}`) hands on
that role: its value's fields are read as the top level's. Everything else the call
returned is data: a record under a key of its own (`{"order": {"payment": {"status":
"failed"}}}`), records in a list (a listing of failed builds), a wrapper beside other
fields. In data only explicit signals count (an error object, `ok`/`success` false,
`is_error`, status "error", an HTTP status code under an HTTP name), and only along the
wrappers: a record the tool looked up may well say `"status": "failed"` (a CI run, a
payment) without the lookup having failed.
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from typing import Any

from .model import ToolCall

_ERROR_KEYS = ("error", "error_code", "errors", "error_message", "exception", "fault")
_ERROR_DESCRIPTOR = ("error_type", "error_details")
"""Keys that together describe an error that happened (each alone may name a kind of
error a looked-up record is about)."""
_FAILED_STATUS = frozenset(
    {"failed", "failure", "error", "errored", "rejected", "denied", "unauthorized", "forbidden"}
)
# Only the start of a text result is read: an error banner leads, a long result that
# mentions "error" somewhere in its body (a log file, a README) is not a failure.
_ERROR_BANNER = re.compile(
    r"\A\s*(?:error\b|err:|fatal\b|traceback \(most recent call last\)|exception\b|"
    r"permission denied|access denied|unauthori[sz]ed|forbidden|command not found|"
    r"no such file or directory|fehler\b|错误|失败|"
    # The OpenAI Agents SDK's default tool-error function hands the model this fixed text.
    r"an error occurred while running the tool\b|"
    r"(?:http(?:/\d(?:\.\d)?)?\s+)?[45]\d\d\s+(?:bad request|unauthorized|forbidden|not found|"
    r"method not allowed|conflict|gone|too many requests|internal server error|"
    r"bad gateway|service unavailable|gateway timeout|unprocessable))",
    re.IGNORECASE,
)
_HTTP_STATUS_KEYS = ("status_code", "statuscode", "http_status", "code", "status")


def call_failed(call: ToolCall) -> bool:
    """True when the call did not run successfully (explicit mark, error payload, no result).
    An answer call (it delivered the reply) failed only when the source marked it."""
    if call.answer:
        return call.error
    if call.error or call.result is None or call.origin == "prose":
        return True
    return result_is_error(call.result)


def call_succeeded(call: ToolCall) -> bool:
    return not call_failed(call)


@lru_cache(maxsize=4096)
def result_is_error(text: str) -> bool:
    """Recognise an error payload in a tool's result text (memoised: several validators
    ask about the same results of a turn)."""
    stripped = text.strip()
    if not stripped:
        return False
    payload = _structured(stripped)
    if payload is not _TEXT:
        return _payload_is_error(payload, 0, top=True)
    return _ERROR_BANNER.match(stripped[:300]) is not None


def structured_payload(text: str) -> Any | None:
    """The value of a result that is JSON or Python-literal text opening like an object or
    array, else None (plain text). Memoised: several validators read the same results;
    the value is shared, so callers must not change it."""
    stripped = text.strip()
    if not stripped:
        return None
    payload = _structured_cached(stripped)
    return None if payload is _TEXT else payload


@lru_cache(maxsize=1024)
def _structured_cached(text: str) -> Any:
    return _structured(text)


MAX_WRAPPER_DEPTH = 4
"""Wrappers (`{"content": {"result": ...}}`) followed into a payload."""
MAX_LITERAL_CHARS = 65_536
"""Longer Python-literal text is not parsed (a literal that long is data, not an error)."""
MAX_BLOCKS = 64
"""Content blocks of one wrapper that are read."""

_TEXT = object()
_WRAPPER_KEYS = ("content", "raw_output", "data", "output", "result", "response", "body")
_FAILED_FLAGS = ("is_error", "iserror")
_NESTED_HTTP_STATUS_KEYS = ("status_code", "statuscode", "http_status")


def _structured(text: str) -> Any:
    """The value of JSON or Python-literal text that opens like an object or array, else
    `_TEXT`. Text that is neither (or deeply nested JSON) stays text."""
    if text[0] not in "{[":
        return _TEXT
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > MAX_LITERAL_CHARS:
        return _TEXT
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _TEXT


def _payload_is_error(payload: Any, depth: int, *, top: bool) -> bool:
    """`top`: the object is the call's whole result (the top level, or the value of an
    envelope that is), so its status fields are the call's outcome."""
    if not isinstance(payload, dict):
        return False
    lowered = {str(k).lower(): v for k, v in payload.items()}
    if _marks_error(lowered, top=top):
        return True
    if depth >= MAX_WRAPPER_DEPTH:
        return False
    whole = top and _is_envelope(lowered)
    return any(
        _wrapped_is_error(lowered[k], depth + 1, top=whole) for k in _WRAPPER_KEYS if k in lowered
    )


_ENVELOPE_METADATA = frozenset(
    {
        "is_error",
        "iserror",
        "tool_name",
        "tool_call_id",
        "call_id",
        "name",
        "type",
        "role",
        "meta",
        "metadata",
        "_meta",
        "headers",
        "mimetype",
        "mime_type",
        "content_type",
    }
)
"""Keys an envelope carries beside its wrapper keys: they say how the result is wrapped,
not what it holds."""


def _is_envelope(lowered: dict[str, Any]) -> bool:
    """An object that only wraps the result: at least one wrapper key, and every other key
    envelope metadata. Its wrapped value is the whole result."""
    wrappers = 0
    for key in lowered:
        if key in _WRAPPER_KEYS:
            wrappers += 1
        elif key not in _ENVELOPE_METADATA:
            return False
    return wrappers > 0


def _marks_error(lowered: dict[str, Any], *, top: bool) -> bool:
    for key in _ERROR_KEYS:
        value = lowered.get(key)
        if value not in (None, "", False, [], {}, 0):
            return True
    if all(lowered.get(key) not in (None, "", False, [], {}, 0) for key in _ERROR_DESCRIPTOR):
        return True
    for key in ("ok", "success", "succeeded"):
        if lowered.get(key) is False or str(lowered.get(key)).lower() == "false":
            return True
    if any(lowered.get(key) is True for key in _FAILED_FLAGS):
        return True
    status = lowered.get("status")
    if isinstance(status, str):
        word = status.strip().lower()
        if word in _FAILED_STATUS if top else word in ("error", "errored"):
            return True
    for key in _HTTP_STATUS_KEYS if top else _NESTED_HTTP_STATUS_KEYS:
        value = lowered.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
            return True
    return False


def _wrapped_is_error(value: Any, depth: int, *, top: bool) -> bool:
    """Whether a wrapper's value reports an error: an error object, text that is one
    (JSON or a Python literal) or opens with an error banner, or content blocks
    (`[{"type": "text", "text": ...}]`) whose text does. Other lists are data. `top`: the
    wrapper is an envelope of the whole result."""
    if isinstance(value, dict):
        return _payload_is_error(value, depth, top=top)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return False
        inner = _structured(text)
        if inner is not _TEXT:
            return _payload_is_error(inner, depth, top=top)
        return _ERROR_BANNER.match(text[:300]) is not None
    if isinstance(value, list) and value and all(_is_block(b) for b in value[:MAX_BLOCKS]):
        # One content block is the whole result; several share it.
        whole = top and len(value) == 1
        return any(_wrapped_is_error(b.get("text"), depth, top=whole) for b in value[:MAX_BLOCKS])
    return False


def _is_block(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("type"), str)
