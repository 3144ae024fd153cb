"""What a turn's findings were checked against: for each token a finding names, which
tool calls' arguments or results contain it, and whether the user's request does.

Pure functions over the API's turn JSON; the turn page and the verification queue show
these so a reader sees at a glance that an identifier in the reply is in no tool result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_PRETTY_CHARS = 20_000
"""Tool payloads longer than this are shown as sent, not re-indented."""
_ARGUMENT_KINDS = frozenset({"ungrounded_tool_argument"})


@dataclass(frozen=True)
class TokenEvidence:
    """Where one finding's token occurs outside the reply."""

    token: str
    kind: str
    severity: str
    in_results: tuple[str, ...]
    """Names of the tool calls whose result contains the token."""
    in_arguments: tuple[str, ...]
    """Names of the tool calls whose arguments contain the token."""
    in_request: bool
    earlier_only: bool = False
    """True when only the results of calls before the finding's own call were searched."""

    @property
    def grounded(self) -> bool:
        """True when some tool result holds the token."""
        return bool(self.in_results)


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


def search_text(finding: Mapping[str, Any]) -> str:
    """What to look for in the trace: the finding's token, or for an argument finding
    (token `path=value`) the value."""
    token = str(finding.get("token") or "")
    if finding.get("kind") in _ARGUMENT_KINDS and "=" in token:
        return token.split("=", 1)[1]
    return token


def token_evidence(
    findings: Iterable[Mapping[str, Any]],
    tool_calls: Sequence[Mapping[str, Any]],
    user_message: str = "",
) -> list[TokenEvidence]:
    """One entry per distinct (token, kind) of the findings that name a token, in the
    findings' order. A finding about one call's arguments (it names the call) is checked
    against the results of the calls before it, as its validator did."""
    results = [pretty(call.get("result")) for call in tool_calls]
    raw_results = [str(call.get("result") or "") for call in tool_calls]
    arguments = [pretty(call.get("arguments")) for call in tool_calls]
    raw_arguments = [json.dumps(call.get("arguments"), ensure_ascii=False) for call in tool_calls]
    labels = [call_label(call, i) for i, call in enumerate(tool_calls)]
    seen: set[tuple[str, str]] = set()
    evidence: list[TokenEvidence] = []
    for finding in findings:
        token = str(finding.get("token") or "")
        kind = str(finding.get("kind", ""))
        if not token or (token, kind) in seen:
            continue
        seen.add((token, kind))
        needle = search_text(finding)
        before = _calls_before(finding, tool_calls)
        evidence.append(
            TokenEvidence(
                token=token,
                kind=kind,
                severity=str(finding.get("severity", "")),
                in_results=tuple(
                    label
                    for label, text, raw in zip(
                        labels[:before], results[:before], raw_results[:before], strict=True
                    )
                    if needle in text or needle in raw
                ),
                in_arguments=tuple(
                    label
                    for label, text, raw in zip(labels, arguments, raw_arguments, strict=True)
                    if needle in text or needle in raw
                ),
                in_request=needle in user_message,
                earlier_only=before < len(tool_calls),
            )
        )
    return evidence


def _calls_before(finding: Mapping[str, Any], tool_calls: Sequence[Mapping[str, Any]]) -> int:
    """How many calls' results may ground the finding: those before the call it names
    (by call id, for argument kinds), else all of them."""
    call_id = finding.get("call_id")
    if call_id and finding.get("kind") in _ARGUMENT_KINDS:
        for index, call in enumerate(tool_calls):
            if call.get("call_id") == call_id:
                return index
    return len(tool_calls)


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
