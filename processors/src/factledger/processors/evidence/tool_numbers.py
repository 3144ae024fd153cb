"""The numbers a turn's tool results hold, as a quantity in the reply is grounded on them.

A tool returned a number when it is a numeric value of a structured result (or numeric
text in one, "$1,234.50"), a number in a plain-text result, the length of a list in a
structured result (a count of what it returned), or the sum of one list's values: the
numbers of a list of numbers, or one numeric field over a list of objects (the prices of
an order's items add up to its total). Nothing else is derived: no differences, products
or sums across lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .outcomes import structured_payload

MAX_NUMBERS = 20_000
"""Numbers read from one turn's results; past it the rest is unread."""
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])-?\d+(?:\.\d+)?")
NUMBER_WORDS = {
    w: float(i)
    for names in (
        "one two three four five six seven eight nine ten eleven twelve",
        "eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
    )
    for i, w in enumerate(names.split(), start=1)
}
"""Numbers written as words (English, German), as a reply or a text result gives them."""
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


def tool_numbers(results: Iterable[str]) -> frozenset[float]:
    """Every number the results hold, with list lengths and one-list sums."""
    out: set[float] = set()
    for text in results:
        payload = structured_payload(text)
        if payload is None:
            out.update(numbers_in_text(text))
        else:
            _walk(payload, out)
        if len(out) >= MAX_NUMBERS:
            break
    return frozenset(out)


def numbers_in_text(text: str) -> list[float]:
    """Numbers written in text, thousands separators (`1,234.50`) read as such, and
    numbers written as words ("four lanes")."""
    found = [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)][:MAX_NUMBERS]
    found.extend(NUMBER_WORDS[m.group().lower()] for m in _NUMBER_WORD.finditer(text))
    return found


def _walk(payload: Any, out: set[float]) -> None:
    stack = [payload]
    while stack and len(out) < MAX_NUMBERS:
        value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out.add(float(value))
        elif isinstance(value, str):
            if any(c.isdigit() for c in value):
                out.update(numbers_in_text(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            out.add(float(len(value)))
            out.update(_list_sums(value))
            stack.extend(value)


def _list_sums(items: list[Any]) -> list[float]:
    """The sum of a list of numbers; of each numeric field over a list of objects."""
    numbers = [v for v in items if isinstance(v, (int, float)) and not isinstance(v, bool)]
    sums = [float(sum(numbers))] if len(numbers) > 1 else []
    objects = [v for v in items if isinstance(v, dict)]
    if len(objects) > 1:
        fields: dict[str, float] = {}
        for obj in objects:
            for key, v in obj.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    fields[str(key)] = fields.get(str(key), 0.0) + float(v)
        sums.extend(fields.values())
    return sums
