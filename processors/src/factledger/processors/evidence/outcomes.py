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

A code run (an executor, `call_reach.call_kind`) states its outcome by its exit status:
a non-zero one on the first or last line of its output, in a form executors print
(`exitcode: 1 (execution failed)`, `Exit code: 1`, `Process exited with code 1`,
`returncode=1` in a `CompletedProcess`), or under an exit key at the top of a structured
result, fails the call; a status of 0 is success, whatever the output says. With no
status, a Python traceback that is the whole output fails it. A status in the middle of
the output is something the code printed, and a tool that is no executor (a CI lookup)
does not fail by the exit code of the record it returned.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any

from factledger.processors.claim_rules import reads_only
from factledger.processors.evidence.call_reach import call_kind
from factledger.processors.evidence.failure_text import opens_with_error, text_reports_failure
from factledger.processors.model import ToolCall
from factledger.processors.normalize import json_text

_ERROR_KEYS = ("error", "error_code", "errors", "error_message", "exception", "fault")
_ERROR_DESCRIPTOR = ("error_type", "error_details")
"""Keys that together describe an error that happened (each alone may name a kind of
error a looked-up record is about)."""
_FAILED_STATUS = frozenset(
    {"failed", "failure", "error", "errored", "rejected", "denied", "unauthorized", "forbidden"}
)
_HTTP_ERROR_TEXT = re.compile(r"[45]\d\d")
_HTTP_STATUS_KEYS = ("status_code", "statuscode", "http_status", "code", "status")


def call_failed(call: ToolCall) -> bool:
    """True when the call did not run successfully (explicit mark, error payload, no result).
    An answer call (it delivered the reply) failed only when the source marked it. Found
    once per call: every validator asks."""
    return call.derived(_call_failed)


def _call_failed(call: ToolCall) -> bool:
    if call.answer:
        return call.error
    if call.error or call.result is None or call.origin == "prose":
        return True
    if call_kind(call, None) == "executor":
        status = exit_status(call.result)
        if status is not None:
            return status != 0
        if _traceback_is_output(call.result):
            return True
        return result_is_error(call.result, acting=False)  # what the code printed is data
    return result_is_error(call.result, acting=not reads_only(call.name))


def call_succeeded(call: ToolCall) -> bool:
    return not call_failed(call)


@lru_cache(maxsize=4096)
def result_is_error(text: str, *, acting: bool = True) -> bool:
    """Recognise an error payload in a tool's result text (memoised: several validators
    ask about the same results of a turn). `acting`: the call acts, so its text's words
    about the action count (`processors.evidence.failure_text`); a reading call's text only fails
    it by an error mark or status."""
    stripped = text.strip()
    if not stripped:
        return False
    payload = _structured(stripped)
    if payload is not _TEXT:
        return _payload_is_error(payload, 0, top=True, acting=acting)
    labelled = _LABELLED_PAYLOAD.match(stripped)
    if labelled is not None:
        # "HTTP 200: {...}", "Response: {...}": the body a tool printed behind a label
        # speaks for the call as a whole result would.
        inner = _structured(labelled.group(1))
        if inner is not _TEXT and _payload_is_error(inner, 0, top=True, acting=acting):
            return True
    return text_reports_failure(stripped, acting=acting)


_LABELLED_PAYLOAD = re.compile(r"[^{\[\n]{1,40}?:[ \t]*([{\[].*)\Z", re.DOTALL)


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
        return json_text.loads(text)  # json.loads's answers, about three times faster
    except (ValueError, RecursionError):
        pass
    if len(text) > MAX_LITERAL_CHARS:
        return _TEXT
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _TEXT


def _payload_is_error(payload: Any, depth: int, *, top: bool, acting: bool) -> bool:
    """`top`: the object is the call's whole result (the top level, or the value of an
    envelope that is), so its status fields are the call's outcome."""
    if not isinstance(payload, dict):
        return False
    lowered = {(k if type(k) is str else str(k)).lower(): v for k, v in payload.items()}
    if _marks_error(lowered, top=top):
        return True
    if top and _says_success(lowered):
        return False  # the structure spoke: its words are no second opinion
    if top and _is_error_body(lowered):
        return _error_body_fails(lowered, acting)
    if depth >= MAX_WRAPPER_DEPTH:
        return False
    whole = top and _is_envelope(lowered)
    return any(
        _wrapped_is_error(lowered[k], depth + 1, top=whole, acting=acting)
        for k in _WRAPPER_KEYS
        if k in lowered
    )


def _says_success(lowered: dict[str, Any]) -> bool:
    """An explicit success mark: `ok`/`success`/`succeeded` true. (`is_error: false` is
    no such mark: LlamaIndex and MCP clients write it beside an error they wrap.)"""
    return any(lowered.get(key) is True for key in ("ok", "success", "succeeded"))


_ERROR_BODY_KEYS = frozenset(
    {
        "message",
        "msg",
        "detail",
        "details",
        "title",
        "reason",
        "description",
        "documentation_url",
        "type",
        "instance",
        "code",
        "status",
        "request_id",
        "requestid",
        "hint",
    }
)
_ERROR_BODY_TEXT = ("message", "msg", "detail", "title", "reason", "description")


def _is_error_body(lowered: dict[str, Any]) -> bool:
    """An object shaped like an API's error answer, whose status fields said nothing:
    only message-like keys (GitHub's `{"message": ..., "documentation_url": ...}`, RFC
    7807's `title`/`detail`). A record the call returned has keys of its own."""
    return any(isinstance(lowered.get(k), str) for k in _ERROR_BODY_TEXT) and all(
        key in _ERROR_BODY_KEYS for key in lowered
    )


def _error_body_fails(lowered: dict[str, Any], acting: bool) -> bool:
    text = "\n".join(str(lowered[k]) for k in _ERROR_BODY_TEXT if isinstance(lowered.get(k), str))
    return text_reports_failure(text, acting=acting)


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


_SIGNAL_KEYS = frozenset(
    (
        *_ERROR_KEYS,
        *_ERROR_DESCRIPTOR,
        "ok",
        "success",
        "succeeded",
        *_FAILED_FLAGS,
        "status",
        *_HTTP_STATUS_KEYS,
        *_NESTED_HTTP_STATUS_KEYS,
    )
)
"""Every key `_marks_error` reads: an object with none of them marks no error."""
_EMPTY: tuple[Any, ...] = (None, "", False, [], {}, 0)
"""Values that mark nothing (built once: a literal holding `[]` and `{}` is built anew at
every test). Never changed."""


def _marks_error(lowered: dict[str, Any], *, top: bool) -> bool:
    if _SIGNAL_KEYS.isdisjoint(lowered):
        return False  # most records: one set test instead of a dozen lookups
    for key in _ERROR_KEYS:
        if lowered.get(key) not in _EMPTY:
            return True
    if all(lowered.get(key) not in _EMPTY for key in _ERROR_DESCRIPTOR):
        return True
    for key in ("ok", "success", "succeeded"):
        flag = lowered.get(key)
        if flag is not None and (flag is False or str(flag).lower() == "false"):
            return True
    if any(lowered.get(key) is True for key in _FAILED_FLAGS):
        return True
    status = lowered.get("status")
    if isinstance(status, str):
        word = status.strip().lower()
        if word in _FAILED_STATUS if top else word in ("error", "errored"):
            return True
        if top and _HTTP_ERROR_TEXT.fullmatch(word):
            return True  # GitHub writes its answers' status as text: "status": "404"
    for key in _HTTP_STATUS_KEYS if top else _NESTED_HTTP_STATUS_KEYS:
        value = lowered.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
            return True
    return False


def _wrapped_is_error(value: Any, depth: int, *, top: bool, acting: bool) -> bool:
    """Whether a wrapper's value reports an error: an error object, text that is one
    (JSON or a Python literal) or says so (the whole result's text is read as a plain
    result is; a part of it only by the error mark it opens with), or content blocks
    (`[{"type": "text", "text": ...}]`) whose text does. Other lists are data. `top`: the
    wrapper is an envelope of the whole result."""
    if isinstance(value, dict):
        return _payload_is_error(value, depth, top=top, acting=acting)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return False
        inner = _structured(text)
        if inner is not _TEXT:
            return _payload_is_error(inner, depth, top=top, acting=acting)
        return text_reports_failure(text, acting=acting) if top else opens_with_error(text)
    if isinstance(value, list) and value and all(_is_block(b) for b in value[:MAX_BLOCKS]):
        # One content block is the whole result; several share it.
        whole = top and len(value) == 1
        return any(
            _wrapped_is_error(b.get("text"), depth, top=whole, acting=acting)
            for b in value[:MAX_BLOCKS]
        )
    return False


def _is_block(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("type"), str)


# --- code runs ------------------------------------------------------------------------------

_STATUS_LINE_CHARS = 300
"""Characters of the first and of the last line of an output read for an exit status."""
_EXIT_LINE = re.compile(
    r"\A[ \t\[(]*(?:exit[ _]?code|exit[ _]status|return[ _]?code|"
    r"process (?:exited|finished|completed|terminated) with (?:exit )?(?:code|status)|"
    r"command (?:exited|failed) with (?:exit )?(?:code|status))[ \t]*[:=]?[ \t]*(-?\d+)\b",
    re.IGNORECASE,
)
"""A status line as executors print it: AG2's `exitcode: 1 (execution failed)`, `Exit
code: 1`, `[Process exited with code 1]`, `exit status 2`."""
_COMPLETED_PROCESS = re.compile(r"\A[ \t]*CompletedProcess\([^\n]*?\breturncode=(-?\d+)\b")
_EXIT_KEYS = ("exit_code", "exitcode", "returncode", "return_code", "exit_status")
_OUTPUT_LABEL = re.compile(
    r"\A[ \t]*(?:code output|output|stdout|stderr|result)[ \t]*:[ \t]*\n?", re.IGNORECASE
)
_TRACEBACK = re.compile(r"\A\s*Traceback \(most recent call last\):")


@lru_cache(maxsize=4096)
def exit_status(text: str) -> int | None:
    """The exit status a code run's result reports (see the module docstring), or None
    when it reports none."""
    payload = structured_payload(text)
    if isinstance(payload, dict):
        return _exit_key(payload)
    stripped = text.strip()
    if not stripped:
        return None
    first = stripped[:_STATUS_LINE_CHARS].split("\n", 1)[0]
    last = stripped[-_STATUS_LINE_CHARS:].rsplit("\n", 1)[-1]
    for line in (first, last):
        m = _EXIT_LINE.match(line) or _COMPLETED_PROCESS.match(line)
        if m is not None:
            return int(m.group(1))
    return None


def _exit_key(payload: dict[Any, Any], *, top: bool = True) -> int | None:
    """An exit key at the top of a structured result, or of the object an envelope wraps."""
    lowered = {(k if type(k) is str else str(k)).lower(): v for k, v in payload.items()}
    for key in _EXIT_KEYS:
        value = lowered.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
    if not top or not _is_envelope(lowered):
        return None
    for key in _WRAPPER_KEYS:
        inner = lowered.get(key)
        if isinstance(inner, str):
            inner = structured_payload(inner)
        if isinstance(inner, dict):
            return _exit_key(inner, top=False)
    return None


def _traceback_is_output(text: str) -> bool:
    """A code run whose whole output is a Python traceback: after an output label (`Code
    output:`), or a structured result whose `stderr` holds one and whose `stdout` is
    empty."""
    payload = structured_payload(text)
    if isinstance(payload, dict):
        lowered = {(k if type(k) is str else str(k)).lower(): v for k, v in payload.items()}
        stderr, stdout = lowered.get("stderr"), lowered.get("stdout")
        return (
            isinstance(stderr, str)
            and _TRACEBACK.match(stderr[:_STATUS_LINE_CHARS]) is not None
            and not (isinstance(stdout, str) and stdout.strip())
        )
    head = text[:_STATUS_LINE_CHARS].lstrip()
    label = _OUTPUT_LABEL.match(head)
    return _TRACEBACK.match(head[label.end() :] if label else head) is not None
