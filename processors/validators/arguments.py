"""Invented inputs (class 4b): tool-call argument values that nothing in the turn supplied.

An argument is grounded when the conversation (the recent user and assistant messages,
every user message of the session, the system prompt) or an earlier tool result contains
it, as `processors.grounding` decides. Values
the schema fixes (enum members, defaults, booleans) and low-information numbers are not
checked: the model did not invent those.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..grounding import Grounds, value_grounded
from ..kinds import Kind
from ..model import Finding, ToolCall, Turn
from ..outcomes import call_succeeded
from ..text import contains_token
from .base import finding
from .tool_calls import resolve_tool

_SMALL_NUMBER = 1
"""0 and 1 carry no information (flags, first page, one item); larger numbers are checked."""
_SMALL_KNOB = 100
_KNOB = re.compile(
    r"limit|page|size|offset|top|max|min|count$|results|per_|retries|timeout|depth|level|"
    r"^n$|^k$",
    re.I,
)
"""Paging and tuning parameters, where a small number is a choice, not an invented fact."""
_FREE_TEXT_PARAM = re.compile(
    r"^(?:q|query|queries|search|search_query|search_string|keywords?|prompt|question|text|"
    r"message|body|content|command|cmd|code|script|sql|thought|thinking|reasoning|"
    r"description|comment|summary|title|note|notes|reason|subject|instructions?|input)$",
    re.I,
)
_PATH_PARAM = re.compile(r"path|file|dir|folder|directory", re.I)
_PATH_VALUE = re.compile(r"^[\w.\-~/]*/[\w.\-~/]*$")
_FREE_TEXT_CHARS = 100
_FREE_TEXT_WORDS = 6
_MAX_LEAVES = 64


class ArgumentGroundingValidator:
    name = "arguments"
    version = "1.0"
    kinds = frozenset({Kind.UNGROUNDED_TOOL_ARGUMENT})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if not any(c.arguments for c in turn.tool_calls):
            return ()
        # A call's own result often echoes its inputs ({"city": "Paris", ...}); only what
        # the agent knew before the call can ground an argument: the conversation (every
        # user message of it, not only the recent window), earlier turns' results, and the
        # results of this turn's earlier calls.
        known = "\n".join(
            (*turn.user_history, turn.conversation_text, turn.history_results_text)
        ).lower()
        before = Grounds(known)
        definitions = {t.name: t for t in turn.tools or ()}
        out: list[Finding] = []
        earlier_results: list[str] = []
        for call in turn.tool_calls:
            if call.arguments and not call.answer:  # an answer call's input is the reply
                seen = known + "\n" + "\n".join(earlier_results).lower()
                earlier = Grounds(seen[len(known) :])
                definition = resolve_tool(call.name, definitions)
                properties = definition.properties if definition else {}
                for path, value in _leaves(call.arguments):
                    schema = properties.get(path.split(".", 1)[0].split("[", 1)[0])
                    if _not_checked(path, value, schema):
                        continue
                    if isinstance(value, str) and contains_token(seen, value.lower()):
                        continue  # verbatim: the common case, settled without normalising
                    if value_grounded(value, before) or value_grounded(value, earlier):
                        continue
                    if _confirmed_path(path, value, call):
                        continue
                    out.append(_finding(self, call, path, value))
            if call.result is not None:
                earlier_results.append(call.result)
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
        elif isinstance(value, int | float | str):
            emitted += 1
            yield path, value


def _not_checked(path: str, value: str | int | float, schema: Any) -> bool:
    """Values nobody invents: fixed by the schema, paging knobs, or free text."""
    if _fixed_by_schema(value, schema):
        return True
    if isinstance(value, int | float):
        return abs(value) <= _SMALL_NUMBER or (
            abs(value) <= _SMALL_KNOB and _KNOB.search(path.rsplit(".", 1)[-1]) is not None
        )
    # Prose the model composed (a query, an e-mail body, SQL, a thought) is not an input
    # it could have been given verbatim; identifiers and names are short.
    if _FREE_TEXT_PARAM.search(path.rsplit(".", 1)[-1].split("[", 1)[0]):
        return True
    return len(value) > _FREE_TEXT_CHARS or len(value.split()) > _FREE_TEXT_WORDS


def _confirmed_path(path: str, value: str | int | float, call: ToolCall) -> bool:
    """A guessed path that the call found is exploration the system confirmed, not an
    invented input; a guessed path that does not exist stays a finding."""
    if not isinstance(value, str) or not call_succeeded(call):
        return False
    name = path.rsplit(".", 1)[-1]
    return _PATH_PARAM.search(name) is not None or _PATH_VALUE.search(value) is not None


def _fixed_by_schema(value: str | int | float, schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    enum = schema.get("enum")
    if isinstance(enum, list) and (value in enum or str(value) in map(str, enum)):
        return True
    default = schema.get("default")
    return default is not None and str(default).lower() == str(value).lower()
