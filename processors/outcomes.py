"""Did a tool call succeed? The system's record decides, not the model's account.

A call failed when the source marked it (span status ERROR, `is_error`) or when its
payload says so: an error object, `"ok": false`, `"status": "failed"`, an HTTP 4xx/5xx
status or an error banner. A call without a recorded result did not succeed either.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from .model import ToolCall

_ERROR_KEYS = ("error", "error_code", "errors", "error_message", "exception", "fault")
_FAILED_STATUS = frozenset(
    {"failed", "failure", "error", "errored", "rejected", "denied", "unauthorized", "forbidden"}
)
# Only the start of a text result is read: an error banner leads, a long result that
# mentions "error" somewhere in its body (a log file, a README) is not a failure.
_ERROR_BANNER = re.compile(
    r"\A\s*(?:error\b|err:|fatal\b|traceback \(most recent call last\)|exception\b|"
    r"permission denied|access denied|unauthori[sz]ed|forbidden|command not found|"
    r"no such file or directory|fehler\b|错误|失败|"
    r"(?:http(?:/\d(?:\.\d)?)?\s+)?[45]\d\d\s+(?:bad request|unauthorized|forbidden|not found|"
    r"method not allowed|conflict|gone|too many requests|internal server error|"
    r"bad gateway|service unavailable|gateway timeout|unprocessable))",
    re.IGNORECASE,
)
_HTTP_STATUS_KEYS = ("status_code", "statuscode", "http_status", "code", "status")


def call_failed(call: ToolCall) -> bool:
    """True when the call did not run successfully (explicit mark, error payload, no result)."""
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
    if stripped[0] in "{[":
        try:
            payload = json.loads(stripped)
        except (ValueError, RecursionError):  # deeply nested JSON is not an error object
            payload = None
        if payload is not None:
            return _payload_is_error(payload)
    return _ERROR_BANNER.match(stripped[:300]) is not None


def _payload_is_error(payload: Any) -> bool:
    if not isinstance(payload, dict):
        return False
    lowered = {str(k).lower(): v for k, v in payload.items()}
    for key in _ERROR_KEYS:
        value = lowered.get(key)
        if value not in (None, "", False, [], {}, 0):
            return True
    for key in ("ok", "success", "succeeded"):
        if lowered.get(key) is False or str(lowered.get(key)).lower() == "false":
            return True
    status = lowered.get("status")
    if isinstance(status, str) and status.strip().lower() in _FAILED_STATUS:
        return True
    for key in _HTTP_STATUS_KEYS:
        value = lowered.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
            return True
    return False
