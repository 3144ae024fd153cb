"""`json_text.loads` answers as `json.loads` does: same values, same refusals, same errors;
but a lone surrogate, which `json.loads` returns and UTF-8 cannot encode, reads as U+FFFD."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factledger.processors.normalize.json_text import loads


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1 is not 1.0, -0.0 is not 0.0, NaN is
    NaN, key order counts)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _replaced(value: Any) -> Any:
    """`json.loads`'s value with each lone surrogate as U+FFFD: what `loads` returns."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, list):
        return [_replaced(v) for v in value]
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    return value


def _outcome(text: str | bytes) -> tuple[str, Any]:
    try:
        return "value", _replaced(json.loads(text))
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))


def _assert_as_json_loads(text: str | bytes) -> None:
    kind, expected = _outcome(text)
    if kind == "error":
        with pytest.raises(expected[0]) as raised:
            loads(text)
        assert str(raised.value) == expected[1]
    else:
        assert _same(loads(text), expected)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"n": 123456789012345678901234567890}', id="past 64 bits is an int"),
        pytest.param("[18446744073709551616, -9223372036854775809]", id="past uint64 and int64"),
        pytest.param("[1e400, -1e400, 1.7976931348623157e309]", id="past the float range is inf"),
        pytest.param("[NaN, Infinity, -Infinity]", id="NaN and Infinity are read"),
        pytest.param('"\\ud800"', id="a lone surrogate escape reads as U+FFFD"),
        pytest.param('"\\udc00\\ud800"', id="surrogates in the wrong order"),
        pytest.param('"\\ud83d\\ude00"', id="a surrogate pair is one character"),
        pytest.param('"\ud800"', id="a lone surrogate in the text itself"),
        pytest.param(b'"\xed\xa0\x80"', id="a surrogate encoded in the bytes"),
        pytest.param(b"\xef\xbb\xbf[1]", id="bytes with a UTF-8 byte order mark"),
        pytest.param("[1]".encode("utf-16"), id="UTF-16 bytes"),
        pytest.param("[1]".encode("utf-32-le"), id="UTF-32 bytes"),
        pytest.param(b'"\xff"', id="bytes that are no UTF-8"),
        pytest.param('{"b": 1, "a": 2, "b": 3}', id="a repeated key keeps its last value"),
        pytest.param('{"é": "日本語", "x": [-0.0, -0, 0.1, 5e-324, 1E5]}', id="non-ASCII text"),
        pytest.param("\ufeff{}", id="a BOM in text is refused"),
        pytest.param("[1,]", id="a trailing comma is refused"),
        pytest.param('{"a": 1,}', id="a trailing comma in an object"),
        pytest.param("[01]", id="a leading zero is refused"),
        pytest.param('"a\x00b"', id="a control character in a string is refused"),
        pytest.param("[1]\x0c", id="a form feed is no JSON whitespace"),
        pytest.param('"\\x41"', id="an unknown escape is refused"),
        pytest.param("", id="empty text"),
        pytest.param("[1] [2]", id="extra data"),
        pytest.param("[" * 5_000 + "]" * 5_000, id="nested too deeply"),
    ],
)
def test_reads_or_refuses_as_json_loads(text: str | bytes) -> None:
    _assert_as_json_loads(text)


_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_VALUES, ensure_ascii=st.booleans(), as_bytes=st.booleans())
def test_any_document_reads_as_json_loads(value: Any, ensure_ascii: bool, as_bytes: bool) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    if as_bytes:
        _assert_as_json_loads(text.encode("utf-8", "surrogatepass"))
    else:
        _assert_as_json_loads(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=_VALUES,
    position=st.integers(min_value=0),
    insert=st.sampled_from(["", ",", "]", "}", '"', "\\", "-", "0", "e", ".", "\x00", " ", "\\u"]),
    cut=st.integers(min_value=0, max_value=3),
)
def test_damaged_documents_read_or_fail_as_json_loads(
    value: Any, position: int, insert: str, cut: int
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    at = position % (len(text) + 1)
    _assert_as_json_loads(text[:at] + insert + text[at + cut :])


@given(digits=st.text(alphabet="0123456789", min_size=1, max_size=400), sign=st.booleans())
def test_numbers_of_any_length_read_as_json_loads(digits: str, sign: bool) -> None:
    number = ("-" if sign else "") + digits.lstrip("0") or "0"
    for text in (number, f"{number}.5", f"{number}e-3", f"0.{digits}", f"{number}E+20"):
        _assert_as_json_loads(f"[{text}]")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('"a\\ud800b"', "a\ufffdb", id="in a string"),
        pytest.param('{"\\udc00": ["\\ud800"]}', {"\ufffd": ["\ufffd"]}, id="in a key and array"),
        pytest.param('"\\ud83d\\ude00"', "\U0001f600", id="a pair stays one character"),
    ],
)
def test_a_lone_surrogate_reads_as_the_replacement_character(text: str, expected: Any) -> None:
    value = loads(text)
    assert value == expected
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # storable: UTF-8 encodes it
