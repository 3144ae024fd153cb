"""Patterns written to open on a character ("m(?<!\\wm)y" for "\\bmy") match as their plain
forms do: same spans, same groups."""

from __future__ import annotations

import random
import re

import pytest

from factledger.processors import text
from factledger.processors.validators import citations

_NAME = r"`?(?P<name>[a-z_][\w.\-:/]*[\w])`?"
PLAIN = {
    "clause-break": (
        text._CLAUSE_BREAK,
        re.compile(r"[,;:—–()\[\]\n]|\s-\s|，|：|、|\bbut\b|\baber\b|但是?|\bwhile\b"),
    ),
    "used-the-tool": (
        citations._TOOL_CITATIONS[1],
        re.compile(
            rf"\b(?:i|we)\s+(?:have\s+|just\s+|then\s+)?(?:used|called|invoked|ran|queried|"
            rf"consulted)\s+(?:the\s+)?{_NAME}(?P<tool>\s+(?:tool|function|api|command|endpoint))?"
        ),
    ),
    "my-call": (
        citations._TOOL_CITATIONS[2],
        re.compile(rf"\bmy\s+{_NAME}\s+(?:tool\s+)?(?:call|query|lookup|request|invocation)\b"),
    ),
    "using-the-tool": (
        citations._TOOL_CITATIONS[3],
        re.compile(rf"\busing\s+(?:the\s+)?{_NAME}(?P<tool>\s+(?:tool|function))\b"),
    ),
    "mit-dem-tool": (
        citations._TOOL_CITATIONS[4],
        re.compile(rf"\b(?:mit|über|per)\s+(?:dem\s+)?{_NAME}(?P<tool>[- ](?:tool|werkzeug))\b"),
    ),
    "mein-aufruf": (
        citations._TOOL_CITATIONS[5],
        re.compile(rf"\bmein(?:em|en)?\s+{_NAME}[- ]?(?:aufruf|call|tool-call)\b"),
    ),
    "source-id": (citations._SOURCE_ID, re.compile(r"(?<![\w-])src_\d{2,}(?![\w-])")),
}
PIECES = [
    *"iwe ",
    "  ",
    "we",
    "used",
    "called",
    "ran",
    "the",
    "my",
    "using",
    "mit",
    "über",
    "per",
    "dem",
    "mein",
    "meinem",
    "tool",
    "function",
    "call",
    "query",
    "gh_read_file",
    "`x.y`",
    "werkzeug",
    "aufruf",
    *"-_x1,\né",
    "src_",
    "12",
    "but",
    "while",
    "aber",
    "但是",
    "i used gh_read_file tool",
    "we have called the `x.y` function",
    "my gh_read_file call",
    "using the x_y tool",
    "mit dem x_y-tool",
    "meinem x_y aufruf",
    "src_12",
]


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_matches_the_plain_form(name: str) -> None:
    fast, plain = PLAIN[name]
    rng = random.Random(name)
    found = 0
    for _ in range(8_000):
        sample = "".join(
            rng.choice(PIECES) + rng.choice([" ", " ", "", "-", "  "])
            for _ in range(rng.randint(0, 14))
        )
        expected = [(m.span(), m.groupdict()) for m in plain.finditer(sample)]
        assert [(m.span(), m.groupdict()) for m in fast.finditer(sample)] == expected, sample
        found += len(expected)
    assert found > 20  # the samples do exercise the pattern
