"""A turn's tool trace as the page shows it (arguments and results pretty-printed), and
the lookups in it the evidence sentences, the turn page and the verification queue need:
where a token stands in a call's arguments or result, which call a finding names, what a
failed call answered. Pure functions over the API's turn JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

MAX_PRETTY_CHARS = 20_000
"""Tool payloads longer than this are shown as sent, not re-indented."""
MAX_ERROR_CHARS = 160
"""A failed call's answer is cut here in a sentence (the payload shows all of it)."""
MAX_ERROR_LINES = 5
"""Lines of a failed call's result marked as its error."""
_ARGUMENT_KINDS = frozenset({"ungrounded_tool_argument"})

Tone = Literal["backed", "real", "against", "seen"]
"""How a piece of the trace bears on a finding. `backed`: it supports what the reply says.
`real`: what the tools did return where the reply gives an invented token (the real key
beside a fabricated one); it backs nothing the reply says. Only these two are shown green.
`against`: it is what the finding rests on (the error a call returned, an invented value,
a tool nobody offered). `seen`: the token shows up there without backing anything (a
search snippet, a call echoing its own input)."""
Where = Literal["arguments", "result"]


def pretty(value: Any) -> str:
    """A tool payload as readable text: JSON objects and arrays (also inside a string)
    indented, anything else as is."""
    if value is None:
        return ""
    if isinstance(value, str):
        if len(value) > MAX_PRETTY_CHARS or value[:1] not in ("{", "["):
            return value
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
        if not isinstance(value, dict | list):
            return str(value)
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def call_label(call: Mapping[str, Any], index: int) -> str:
    """A tool call's name, with its call id when it has one: `create_ticket (call_1)`."""
    name = str(call.get("name") or f"call {index + 1}")
    call_id = call.get("call_id")
    return f"{name} ({call_id})" if call_id else name


def source_label(tool: str, call_id: str | None) -> str:
    """Where a token came from: `git_push (call_7)`, or the tool alone without a call id."""
    return f"{tool} ({call_id})" if call_id else tool


def search_text(finding: Mapping[str, Any]) -> str:
    """What to look for in the trace: the finding's token, or for an argument finding
    (token `path=value`) the value."""
    token = str(finding.get("token") or "")
    if finding.get("kind") in _ARGUMENT_KINDS and "=" in token:
        return token.split("=", 1)[1]
    return token


@dataclass(frozen=True)
class Trace:
    """A turn's tool calls as the page shows them (arguments and results pretty-printed),
    with the lookups the evidence sentences need."""

    calls: Sequence[Mapping[str, Any]]
    user_message: str = ""
    span_errors: Mapping[str, str] = field(default_factory=dict)
    """Span id -> status message, for failed calls that recorded no result."""

    @classmethod
    def of(
        cls,
        tool_calls: Sequence[Mapping[str, Any]],
        user_message: str = "",
        spans: Iterable[Mapping[str, Any]] = (),
    ) -> Trace:
        errors = {
            str(s.get("span_id")): str(s.get("status_message") or "")
            for s in spans
            if s.get("status_message")
        }
        return cls(tuple(tool_calls), user_message, errors)

    def label(self, index: int) -> str:
        return call_label(self.calls[index], index)

    def text(self, index: int, where: Where) -> str:
        """What the page shows of a call's arguments or result."""
        call = self.calls[index]
        return pretty(call.get("arguments") if where == "arguments" else call.get("result"))

    def form(self, index: int, where: Where, needle: str, *, fold: bool = False) -> str | None:
        """`needle` as it stands in a call's shown arguments or result (as is, or JSON-
        escaped inside a string; `fold` ignores case), None when it is not there."""
        return shown_form(self.text(index, where), needle, fold=fold)

    def holding(
        self, needle: str, where: Where, calls: Iterable[int] | None = None, *, fold: bool = False
    ) -> list[tuple[int, str]]:
        """(index, form) of the calls whose arguments or result hold `needle`."""
        found = []
        for index in range(len(self.calls)) if calls is None else calls:
            form = self.form(index, where, needle, fold=fold)
            if form is not None:
                found.append((index, form))
        return found

    def index_of(self, finding: Mapping[str, Any]) -> int | None:
        """The call a finding names by call id."""
        call_id = finding.get("call_id")
        if call_id:
            for index, call in enumerate(self.calls):
                if call.get("call_id") == call_id:
                    return index
        return None

    def named(self, names: Iterable[str]) -> list[int]:
        wanted = set(names)
        return [i for i, call in enumerate(self.calls) if call.get("name") in wanted]

    def failed(self, index: int) -> bool:
        return not self.calls[index].get("ok", True)

    def error(self, index: int) -> tuple[str, list[str]]:
        """What a failed call answered, as a sentence shows it (cut at MAX_ERROR_CHARS; a
        JSON payload on one line), and the lines of its shown result that say what went
        wrong, to mark. A call that recorded no result has its span's status message."""
        shown = self.text(index, "result")
        if not shown.strip():
            span_id = str(self.calls[index].get("span_id") or "")
            return self.span_errors.get(span_id, "")[:MAX_ERROR_CHARS], []
        lines = [line.strip() for line in shown.splitlines() if line.strip()]
        telling = [line for line in lines if _ERROR_LINE.search(line)][:MAX_ERROR_LINES]
        if len(lines) > 1 and shown != str(self.calls[index].get("result")):
            said = json.dumps(json.loads(shown), ensure_ascii=False)  # re-indented JSON
        else:
            said = (telling or lines)[0]
        return said[:MAX_ERROR_CHARS], telling or lines[:1]


_ERROR_LINE = re.compile(
    r"error|fail|exception|denied|reject|refused|invalid|not found|no such|unknown|"
    r"forbidden|unauthori[sz]ed|timed? ?out|exceeded|\"ok\": false|\b[45]\d\d\b",
    re.I,
)


def shown_form(text: str, needle: str, *, fold: bool = False) -> str | None:
    """`needle` as it stands in `text`: as is, or JSON-escaped (a value with quotes or
    backslashes inside a pretty-printed payload); `fold` ignores case."""
    if not needle:
        return None
    escaped = json.dumps(needle, ensure_ascii=False)[1:-1]
    for form in dict.fromkeys((needle, escaped)):
        if fold:
            m = re.search(re.escape(form), text, re.IGNORECASE)
            if m is not None:
                return m.group()
        elif form in text:
            return form
    return None


# ---- the verification queue ---------------------------------------------------------


def suspicious_tokens(findings: Iterable[Mapping[str, Any]]) -> list[str]:
    """Tokens of the findings a human is asked to judge (severity `flag`; every finding
    when none flags), distinct, in order."""
    listed = list(findings)
    flagged = [f for f in listed if f.get("severity") == "flag"] or listed
    return list(dict.fromkeys(str(f["token"]) for f in flagged if f.get("token")))


def search_texts(findings: Iterable[Mapping[str, Any]]) -> list[str]:
    """`search_text` of every finding that names a token, distinct, in order."""
    return list(dict.fromkeys(t for t in map(search_text, findings) if t))


def checked_calls(
    findings: Iterable[Mapping[str, Any]], tool_calls: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The tool calls the findings say they were checked against (by tool name); every
    call when the findings name none."""
    names = {name for f in findings for name in f.get("checked_against") or ()}
    chosen = [call for call in tool_calls if call.get("name") in names]
    return chosen or list(tool_calls)
