"""Invented inputs (class 4b): tool-call argument values that nothing in the turn supplied.

An argument is grounded when the conversation (user and assistant messages, system
prompt) or an earlier tool result contains it, as `processors.grounding` decides. Values
the schema fixes (enum members, defaults, booleans) and low-information numbers are not
checked: the model did not invent those.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..grounding import Grounds, value_grounded
from ..kinds import Kind
from ..model import Finding, ToolCall, Turn
from .base import finding
from .tool_calls import resolve_tool

_SMALL_NUMBER = 1
"""0 and 1 carry no information (flags, first page, one item); larger numbers are checked."""
_MAX_LEAVES = 64


class ArgumentGroundingValidator:
    name = "arguments"
    version = "1.0"
    kinds = frozenset({Kind.UNGROUNDED_TOOL_ARGUMENT})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        calls = [c for c in turn.tool_calls if c.arguments]
        if not calls:
            return ()
        grounds = Grounds(turn.conversation_lower + "\n" + turn.evidence_lower)
        definitions = {t.name: t for t in turn.tools or ()}
        out: list[Finding] = []
        for call in calls:
            definition = resolve_tool(call.name, definitions)
            properties = definition.properties if definition else {}
            for path, value in _leaves(call.arguments):
                schema = properties.get(path.split(".", 1)[0].split("[", 1)[0])
                if _fixed_by_schema(value, schema) or value_grounded(value, grounds):
                    continue
                out.append(_finding(self, call, path, value))
        return out


def _finding(
    validator: ArgumentGroundingValidator, call: ToolCall, path: str, value: str | int | float
) -> Finding:
    shown = str(value)[:120]
    return finding(
        validator,
        Kind.UNGROUNDED_TOOL_ARGUMENT,
        f"`{call.name}` argument {path}={shown!r} appears nowhere in the conversation or "
        "in earlier tool results",
        token=f"{path}={shown}",
        checked_against=("conversation", "tool results"),
        call_id=call.call_id or None,
    )


def _leaves(arguments: Mapping[str, Any]) -> Iterator[tuple[str, str | int | float]]:
    """(path, value) for every string and number in the arguments, bounded in count."""
    stack: list[tuple[str, Any]] = [(k, v) for k, v in reversed(list(arguments.items()))]
    emitted = 0
    while stack and emitted < _MAX_LEAVES:
        path, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((f"{path}.{k}", v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float):
            if abs(value) > _SMALL_NUMBER:
                emitted += 1
                yield path, value
        elif isinstance(value, str):
            emitted += 1
            yield path, value


def _fixed_by_schema(value: str | int | float, schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    enum = schema.get("enum")
    if isinstance(enum, list) and (value in enum or str(value) in map(str, enum)):
        return True
    default = schema.get("default")
    return default is not None and str(default).lower() == str(value).lower()
