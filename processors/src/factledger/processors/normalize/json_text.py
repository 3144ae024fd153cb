"""`json.loads`, reached in compiled code: the same answers (but one, below), about three
times faster on the JSON that spans carry (GenAI messages, tool definitions, OTLP/JSON
bodies).

msgspec decodes first. Everything it accepts, `json.loads` reads to the same value
(integers of any size stay integers, a repeated key keeps its last value); what it refuses
goes to `json.loads`, which then reads or refuses it as it always did: NaN and Infinity,
numbers past the float range (inf), lone surrogate escapes, non-UTF-8 encodings of bytes,
and every malformed text with `json.loads`'s own error and message. One answer differs
from `json.loads`'s: a lone surrogate escape (`\\ud800` with no pair), which JSON allows
and UTF-8 cannot encode, reads as U+FFFD in keys and strings at any depth, so text read
here can always be stored and served. Both stop near the interpreter's recursion limit,
msgspec a few levels deeper (998 against 994 nested arrays at the top of a stack:
json.loads's own depth was never fixed, it depends on the caller's stack). orjson was not
chosen: it reads integers past 64 bits as floats.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_DECODER = msgspec.json.Decoder()
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str | bytes | bytearray) -> Any:
    """What `json.loads(text)` returns, or the exception it raises."""
    try:
        if isinstance(text, str) and not text.isascii():
            # A transient copy: given the str, msgspec would ask Python for its UTF-8 form,
            # which then stays cached inside the str for as long as the str lives.
            return _DECODER.decode(text.encode())
        return _DECODER.decode(text)
    except Exception:  # refused (or unreadable) here: json.loads decides, as before
        # Only a lone surrogate escape among what msgspec refuses leaves a surrogate.
        return without_surrogates(json.loads(text))


def replace_surrogates(text: str) -> str:
    """`text` with every lone surrogate (no UTF-8 form) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def without_surrogates(value: Any) -> Any:
    """A JSON value (str, list, dict, scalars) with `replace_surrogates` applied to every
    key and string in it, at any depth."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, list | tuple):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {
            replace_surrogates(k) if isinstance(k, str) else k: without_surrogates(v)
            for k, v in value.items()
        }
    return value
