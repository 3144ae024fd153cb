"""The calls themselves: phantom tools (class 4) and plan/call drift (class 4b).

- `unregistered_tool_call`: the model requested a tool it was not offered, as a structured
  call or written out as JSON text. Needs the offered tools; silent when they are unknown,
  and for a call the framework wrote into the history itself (`origin="framework"`).
- `missing_tool_arguments`: a call lacks arguments its schema requires (absent or null),
  or the turn's own plan text named a value for a parameter the call then dropped or sent
  empty (the model "knows" the file content in the plan and forgets it in `arguments`).
  An empty value the call sends ("", [], {}) is a value, not a missing argument: clearing
  a field, an empty filter or an empty file is something a call may ask for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..kinds import Kind
from ..model import Finding, ToolCall, ToolDefinition, Turn
from .base import NO_TOOLS_OFFERED, finding


class ToolCallValidator:
    name = "tool_calls"
    version = "1.0"
    kinds = frozenset({Kind.UNREGISTERED_TOOL_CALL, Kind.MISSING_TOOL_ARGUMENTS})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        out: list[Finding] = []
        definitions = {t.name: t for t in turn.tools or ()}
        for call in turn.tool_calls:
            if call.origin == "framework":  # no model asked for it
                continue
            definition = resolve_tool(call.name, definitions)
            if definition is None:
                if turn.tools is not None:
                    out.append(self._unregistered(turn, call, definitions))
                continue
            out.extend(self._missing(turn, call, definition))
        return out

    def _unregistered(
        self, turn: Turn, call: ToolCall, definitions: Mapping[str, ToolDefinition]
    ) -> Finding:
        how = "wrote out a call to" if call.origin == "prose" else "called"
        return finding(
            self,
            Kind.UNREGISTERED_TOOL_CALL,
            f"the model {how} `{call.name}`, which was not offered to it",
            token=call.name,
            span=_name_span(turn.reply, call.name) if call.origin == "prose" else None,
            checked_against=sorted(definitions),
            nothing_checked=NO_TOOLS_OFFERED,
            call_id=call.call_id or None,
        )

    def _missing(self, turn: Turn, call: ToolCall, definition: ToolDefinition) -> list[Finding]:
        out = []
        properties = definition.properties
        absent = [
            p
            for p in definition.required
            if call.arguments.get(p) is None and not _has_default(properties.get(p))
        ]
        if absent:
            unreadable = not call.arguments and call.arguments_text.strip() not in ("", "{}")
            detail = " (the arguments are not valid JSON)" if unreadable else ""
            out.append(
                finding(
                    self,
                    Kind.MISSING_TOOL_ARGUMENTS,
                    f"`{call.name}` was called without required argument(s) "
                    f"{', '.join(absent)}{detail}",
                    token=f"{call.name}({', '.join(absent)})",
                    checked_against=(definition.name,),
                    call_id=call.call_id or None,
                )
            )
        plan = _plan_text(turn, call)
        if plan:
            dropped = [
                p
                for p in properties
                if _is_empty(call.arguments.get(p))
                and p not in absent
                and _plan_names_value(plan, p, properties.get(p))
            ]
            if dropped:
                out.append(
                    finding(
                        self,
                        Kind.MISSING_TOOL_ARGUMENTS,
                        f"the plan gave a value for {', '.join(dropped)} but the `{call.name}` "
                        "call dropped it",
                        token=f"{call.name}({', '.join(dropped)})",
                        checked_note="the turn's plan text",
                        call_id=call.call_id or None,
                    )
                )
        return out


def resolve_tool(name: str, definitions: Mapping[str, ToolDefinition]) -> ToolDefinition | None:
    """The offered tool a call refers to, tolerating a `functions.` style namespace prefix."""
    if name in definitions:
        return definitions[name]
    tail = re.split(r"[.:/]", name)[-1]
    return definitions.get(tail)


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def _has_default(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("default") is not None


def _plan_text(turn: Turn, call: ToolCall) -> str:
    """The assistant text written alongside the call (its step), or the reply's text."""
    if call.step < len(turn.steps):
        return turn.steps[call.step]
    return turn.reply if call.origin == "structured" else ""


def _plan_names_value(plan: str, parameter: str, schema: Any) -> bool:
    """The plan gives `parameter` a value: `branch: x`, `branch=x`, or in prose "the
    release/2.4 branch" / "branch release/2.4" with a value other than the default."""
    name = re.escape(parameter)
    value = r"(?:\"[^\"\n]|'[^'\n]|[^\s,;\"'])"
    if re.search(rf"(?<![\w-])[\"'`]?{name}[\"'`]?\s*[:=]\s*{value}", plan):
        return True
    default = str(schema.get("default", "")).lower() if isinstance(schema, Mapping) else ""
    token = r"[`'\"]?([\w][\w./\-]*[\w/])[`'\"]?"
    for m in re.finditer(rf"\b{name}\s+{token}|{token}\s+{name}\b", plan, re.IGNORECASE):
        candidate = m.group(1) or m.group(2) or ""
        if candidate.lower() not in _PLAN_FILLER and candidate.lower() != default:
            return True
    return False


_PLAN_FILLER = frozenset(
    {
        "the",
        "a",
        "an",
        "this",
        "that",
        "same",
        "new",
        "its",
        "your",
        "my",
        "our",
        "to",
        "on",
        "in",
        "of",
        "for",
        "with",
        "default",
        "current",
        "correct",
        "right",
        "given",
    }
)


def _name_span(reply: str, name: str) -> tuple[int, int] | None:
    at = reply.find(f'"{name}"')
    return None if at == -1 else (at + 1, at + 1 + len(name))
