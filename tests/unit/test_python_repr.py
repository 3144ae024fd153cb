"""`python_repr.parse_repr`: reprs read as data, anything else refused, nothing run."""

from __future__ import annotations

import math
from typing import Any

import pytest

from factledger.processors.normalize.python_repr import (
    MAX_DEPTH,
    MAX_REPR_CHARS,
    Construct,
    Opaque,
    ReprError,
    parse_repr,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("'it\\'s'", "it's", id="single-quoted-with-escape"),
        pytest.param("\"say 'hi'\"", "say 'hi'", id="double-quoted"),
        pytest.param("'a\\nb'", "a\nb", id="escaped-newline"),
        pytest.param("b'\\x00'", b"\x00", id="bytes"),
        pytest.param(
            "[1, -2.5, 0x1f, 1e3, True, None]", [1, -2.5, 31, 1000.0, True, None], id="atoms"
        ),
        pytest.param("(1,)", (1,), id="one-tuple"),
        pytest.param("()", (), id="empty-tuple"),
        pytest.param("{'a': [1, {'b': ()}], 2: 'x',}", {"a": [1, {"b": ()}], 2: "x"}, id="dict"),
        pytest.param("{}", {}, id="empty-dict"),
        pytest.param("{1, 2}", frozenset({1, 2}), id="set"),
        pytest.param(
            "ToolCall(tool_name='f', arguments={'q': 1}, id=None)",
            Construct("ToolCall", (), {"tool_name": "f", "arguments": {"q": 1}, "id": None}),
            id="dataclass",
        ),
        pytest.param(
            "datetime.date(2026, 12, 1)",
            Construct("datetime.date", (2026, 12, 1), {}),
            id="dotted-positional",
        ),
        pytest.param(
            "<ChatRole.USER: 'user'>",
            Opaque("<ChatRole.USER: 'user'>", "user"),
            id="enum-member",
        ),
        pytest.param("<Level.HIGH: 3>", Opaque("<Level.HIGH: 3>", 3), id="int-enum-member"),
        pytest.param(
            "F(f=<function C.__init__.<locals>.g at 0x7f>)",
            Construct("F", (), {"f": Opaque("<function C.__init__.<locals>.g at 0x7f>")}),
            id="nested-angle-object",
        ),
        pytest.param("<x 'a > b'>", Opaque("<x 'a > b'>"), id="angle-bracket-inside-quotes"),
        pytest.param("sentinel", Opaque("sentinel"), id="bare-name"),
    ],
)
def test_reprs_read_as_data(text: str, value: Any):
    assert parse_repr(text) == value


def test_inf_and_nan_are_floats():
    inf, nan = parse_repr("[inf, nan]")
    assert inf == math.inf and math.isnan(nan)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("__import__('os').system('true')", id="attribute-of-a-call"),
        pytest.param("1 + 2", id="expression"),
        pytest.param("lambda: 1", id="lambda"),
        pytest.param("F(**kwargs)", id="star-arguments"),
        pytest.param("f'{x}'", id="f-string"),
        pytest.param("'unterminated", id="unterminated-string"),
        pytest.param("[1, 2", id="unclosed-list"),
        pytest.param("[1 2]", id="missing-comma"),
        pytest.param("{'a': 1 'b': 2}", id="missing-comma-in-dict"),
        pytest.param("<unclosed", id="unclosed-angle"),
        pytest.param("x > y", id="comparison"),
        pytest.param("[1] [2]", id="two-values"),
        pytest.param("", id="empty"),
    ],
)
def test_anything_else_is_refused(text: str):
    with pytest.raises(ReprError):
        parse_repr(text)


def test_nesting_past_the_bound_is_refused():
    parse_repr("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(ReprError):
        parse_repr("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2))


def test_text_past_the_bound_is_refused_unread():
    with pytest.raises(ReprError):
        parse_repr("'" + "x" * MAX_REPR_CHARS + "'")
