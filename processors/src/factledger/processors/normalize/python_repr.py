"""Python reprs read as data, never evaluated.

Some instrumentations record a framework's objects as their `repr()` (OpenInference's
JSON encoder falls back to `str()`, and a dataclass's `str` is its repr). `parse_repr`
reads the shapes reprs are made of:

- literals: strings (`'...'`, `"..."`, with a `b`/`r`/`u` prefix), numbers, `True`,
  `False`, `None`, `inf`, `nan`; lists, tuples, dicts and sets of values;
- constructor calls, as dataclasses, namedtuples and attrs classes write themselves:
  `Name(value, key=value, ...)` (a dotted name too) -> `Construct`;
- angle-bracket reprs: an enum member `<ChatRole.USER: 'user'>` -> `Opaque` with its
  value, any other object (`<function f at 0x7f...>`) -> `Opaque` without one.

Nothing is imported, looked up or called: a name is only text, and a string or number
token is decoded by `ast.literal_eval`, which reads literals alone. The text is bounded
(`MAX_REPR_CHARS`) and so is the nesting (`MAX_DEPTH`); past either, or on any text that
is not such a repr, `ReprError` is raised.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_REPR_CHARS = 200_000
"""Longer text is not parsed (it stays text for the caller)."""
MAX_DEPTH = 48
"""Nesting of brackets and calls followed; deeper text is not parsed."""


class ReprError(ValueError):
    """The text is not a repr `parse_repr` reads, or exceeds its bounds."""


@dataclass(frozen=True)
class Construct:
    """A constructor-call repr: `name(*args, **kwargs)`, as written (not called)."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Opaque:
    """An angle-bracket repr. `value` is an enum member's value (`<Color.RED: 1>` -> 1),
    None for an object without one (`<function f at 0x7f...>`)."""

    text: str
    value: Any = None


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>[bBrRuU]{0,2}(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))
    | (?P<num>[-+]?(?:0[xXoObB][0-9a-fA-F_]+
                   |(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d+)?j?))
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    | (?P<op>[()\[\]{},:=<>])
    )""",
    re.VERBOSE | re.DOTALL,
)
_END = re.compile(r"\s*\Z")
_NAMED_CONSTANTS: Mapping[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "inf": float("inf"),
    "nan": float("nan"),
}


def parse_repr(text: str) -> Any:
    """The value `text` (one repr, as the module docstring describes) writes.

    Raises `ReprError` for anything else, for text past `MAX_REPR_CHARS` and for
    nesting past `MAX_DEPTH`."""
    if len(text) > MAX_REPR_CHARS:
        raise ReprError("repr too long to parse")
    parser = _Parser(text)
    value = parser.value(0)
    if parser.peek() is not None:
        raise ReprError(f"unexpected text at {parser.position}")
    return value


class _Parser:
    """Recursive descent over `_TOKEN`s, one token of lookahead."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self._next: tuple[str, str, int, int] | None = None

    def peek(self) -> tuple[str, str, int, int] | None:
        """(kind, text, start, end) of the next token, None at the end of the text."""
        if self._next is None:
            if _END.match(self.text, self.position):
                return None
            match = _TOKEN.match(self.text, self.position)
            if match is None or match.lastgroup is None:
                raise ReprError(f"unreadable text at {self.position}")
            kind = match.lastgroup
            self._next = (kind, match.group(kind), match.start(kind), match.end())
        return self._next

    def take(self) -> tuple[str, str, int, int]:
        token = self.peek()
        if token is None:
            raise ReprError("the repr ends early")
        self._next = None
        self.position = token[3]
        return token

    def expect(self, op: str) -> None:
        kind, text, start, _ = self.take()
        if kind != "op" or text != op:
            raise ReprError(f"expected {op!r} at {start}")

    def at(self, op: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "op" and token[1] == op

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ReprError("repr nested too deeply")
        kind, text, start, _ = self.take()
        if kind in ("str", "num"):
            return _literal(text)
        if kind == "name":
            if self.at("("):
                self.take()
                args, kwargs = self.arguments(depth + 1)
                return Construct(text, tuple(args), kwargs)
            if text in _NAMED_CONSTANTS:
                return _NAMED_CONSTANTS[text]
            return Opaque(text)
        if text == "[":
            return self.items("]", depth + 1)
        if text == "(":
            return tuple(self.items(")", depth + 1))
        if text == "{":
            return self.braces(depth + 1)
        if text == "<":
            return self.angle(start)
        raise ReprError(f"unexpected {text!r} at {start}")

    def items(self, closing: str, depth: int) -> list[Any]:
        out: list[Any] = []
        while not self.at(closing):
            out.append(self.value(depth))
            if self.at(","):
                self.take()
            elif not self.at(closing):
                raise ReprError(f"expected ',' or {closing!r} at {self.position}")
        self.take()
        return out

    def arguments(self, depth: int) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        while not self.at(")"):
            token = self.peek()
            if token is not None and token[0] == "name" and "." not in token[1]:
                self.take()
                if self.at("="):
                    self.take()
                    kwargs[token[1]] = self.value(depth)
                else:
                    args.append(self._after_name(token, depth))
            else:
                args.append(self.value(depth))
            if self.at(","):
                self.take()
            elif not self.at(")"):
                raise ReprError(f"expected ',' or ')' at {self.position}")
        self.take()
        return args, kwargs

    def _after_name(self, token: tuple[str, str, int, int], depth: int) -> Any:
        """A positional argument that starts with a bare name already taken."""
        if self.at("("):
            self.take()
            args, kwargs = self.arguments(depth + 1)
            return Construct(token[1], tuple(args), kwargs)
        return _NAMED_CONSTANTS.get(token[1], Opaque(token[1]))

    def braces(self, depth: int) -> Any:
        if self.at("}"):
            self.take()
            return {}
        first = self.value(depth)
        if not self.at(":"):
            rest = [first]
            if self.at(","):
                self.take()
                rest.extend(self.items("}", depth))
            else:
                self.expect("}")
            return frozenset(_hashable(v) for v in rest)
        out: dict[Any, Any] = {}
        key = first
        while True:
            self.expect(":")
            out[_hashable(key)] = self.value(depth)
            if not self.at(","):
                self.expect("}")
                return out
            self.take()
            if self.at("}"):
                self.take()
                return out
            key = self.value(depth)

    def angle(self, start: int) -> Opaque:
        """`<...>` up to its matching `>` (anything goes inside: `<function
        C.__init__.<locals>.f at 0x7f...>`); an enum member (`<Name.MEMBER: value>`)
        keeps its value."""
        text = self.text
        i, nested = self.position, 0
        while i < len(text):
            char = text[i]
            if char in "'\"":
                quoted = _STRING.match(text, i)
                if quoted is None:
                    break
                i = quoted.end()
                continue
            if char == "<":
                nested += 1
            elif char == ">":
                if nested == 0:
                    self.position = i + 1
                    inner = text[start + 1 : i]
                    member = _MEMBER.fullmatch(inner)
                    value = _literal(member.group(1)) if member else None
                    return Opaque(text[start : i + 1], value)
                nested -= 1
            i += 1
        raise ReprError(f"unclosed '<' at {start}")


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"', re.DOTALL)
_MEMBER = re.compile(
    r"""[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+: ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)""",
    re.DOTALL,
)
"""An enum member's repr inside its angle brackets: `ChatRole.USER: 'user'`."""


def _literal(token: str) -> Any:
    try:
        return ast.literal_eval(token)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
        raise ReprError(f"unreadable literal {token[:40]!r}") from error


def _hashable(value: Any) -> Any:
    """Dict keys and set items as they can be kept (a list key cannot be one)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
