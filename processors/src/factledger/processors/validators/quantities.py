"""Numbers given as tool results that no tool returned.

"The order total is $54.21", "the API returned 3 results", "laut der Datenbank 12
Einträge": a quantity the reply presents as read from a source. In scope: every number of
a sentence that names a source ("according to", "the API/database/query/search returned",
"laut", "gemäß"), an amount of money (`$54.21`, `12,50 €`) read as one number. A figure
the reply gives without naming a source ("the order total is $54.21") is out of scope:
agents compute such figures (a price difference, the total of the items chosen), and
nothing here tells arithmetic from invention. Not quantities: numbers inside ids, code
spans, dates (and years), times, versions, card endings, list markers, and numbers of
seven digits or more.

What grounds one (`processors.evidence.tool_numbers`): a number the turn's or an earlier
turn's tool results hold, a list's length, or the sum of one list's values; or a number
the user or the system prompt gave. Formats are compared as values: `$1,234.50`, `1234.5`
and `1.234,50 €` are one number; "three" is 3; "12%" matches 12 or 0.12; the tool's value
is rounded to the decimals the reply shows ($54 stands for 54.21).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..evidence.tool_numbers import NUMBER_WORDS, numbers_in_text, tool_numbers
from ..kinds import Kind
from ..limits import MAX_FINDINGS_PER_VALIDATOR
from ..model import Finding, Turn
from ..text import sentence_around
from .base import finding

_MONEY = re.compile(
    r"(?:[$€£]|\b(?:usd|eur|gbp|chf)\s?)\s?(?P<a>\d[\d,.]*\d|\d)"
    r"|(?P<b>\d[\d,.]*\d|\d)\s?(?:€|\b(?:usd|eur|euro|gbp|chf|dollars?)\b)"
)
_NUMBER = re.compile(
    r"(?<![\w.,#$€£/:-])(?P<n>\d[\d,.]*\d|\d)(?P<pct>\s?%)?(?![\w/:-]|[.,]\d)"
    r"|\b(?P<w>one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|zwei|drei|vier|"
    r"fünf|sechs|sieben|acht|neun|zehn|elf|zwölf)\b"
)
_SOURCE = re.compile(
    r"\baccording to\b|\b(?:the|your) (?:api|tool|database|db|query|search|system|records?|"
    r"results?|response|lookup|report|account)\b[^.]{0,40}\b(?:returned|returns|shows?|"
    r"showed|reports?|reported|lists?|listed|gave|found|has|had|is|are|was|were|contains?)\b"
    r"|\b(?:returned|reported)\b|\blaut\b|\bgemäß\b|\bzufolge\b|\b(?:ergab|ergibt|liefert|"
    r"lieferte)\b"
)
_NOT_QUANTITY = re.compile(
    r"`[^`]*`|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b|\bv?\d+\.\d+\.\d+\b|"
    r"\b(?:python|node|java|go|ruby|php|version|release|ubuntu|debian|postgres(?:ql)?|mysql|"
    r"redis)\s+v?\d+(?:\.\d+)+|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mär|okt|dez)[a-zä]*\.?\s+\d{1,2}"
    r"(?:st|nd|rd|th)?\b|\b\d{1,2}\.?\s+(?:jan|feb|mar|mär|apr|may|mai|jun|jul|aug|sep|oct|"
    r"okt|nov|dec|dez)[a-zä]*|\b(?:19|20)\d{2}\b|"
    r"\b(?:ending|endet)(?: in| auf)?\s+\d+|^\s*\d+[.)]\s|#\s?\w+|\b[a-z_]+\d\w*|\b\d{7,}\b",
    re.MULTILINE,
)
_MAX_CANDIDATES = 200


@dataclass(frozen=True)
class Quantity:
    """A number the reply gives, with the decimals it shows and where it stands."""

    value: float
    decimals: int
    percent: bool
    start: int
    end: int


class QuantityGroundingValidator:
    name = "quantities"
    version = "1.0"
    kinds = frozenset({Kind.UNGROUNDED_QUANTITY})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if not turn.tool_results_text:
            return ()
        candidates = list(reply_quantities(turn.reply, turn.reply_lower))
        if not candidates:
            return ()
        results = [
            c.result
            for c in (*turn.tool_calls, *turn.history_tool_calls)
            if c.result is not None and not c.answer
        ]
        grounds = tool_numbers(results) | frozenset(numbers_in_text(turn.given_lower))
        tools = [c.name for c in turn.tool_calls if c.result is not None and not c.answer]
        out: list[Finding] = []
        seen: set[float] = set()
        for q in candidates:
            if len(out) >= MAX_FINDINGS_PER_VALIDATOR:
                break
            if q.value in seen or grounded(q, grounds):
                continue
            seen.add(q.value)
            token = turn.reply[q.start : q.end]
            out.append(
                finding(
                    self,
                    Kind.UNGROUNDED_QUANTITY,
                    f"the reply gives {token} as a tool's figure, but no tool result of the "
                    "session holds that number (nor a list's count or sum that makes it)",
                    token=token,
                    span=(q.start, q.end),
                    checked_against=tools,
                )
            )
        return out


def grounded(q: Quantity, grounds: frozenset[float]) -> bool:
    """Some ground, rounded to the decimals the reply shows, is the reply's number."""
    if q.value in grounds:
        return True
    tolerance = 0.5 * 10 ** (-q.decimals) + 1e-9
    targets = [q.value, q.value / 100] if q.percent else [q.value]
    for target in targets:
        for g in grounds:
            if abs(g - target) <= (tolerance if target == q.value else tolerance / 100):
                return True
    return False


def reply_quantities(reply: str, lower: str) -> Iterator[Quantity]:
    """The numbers of the sentences that name a source, amounts of money among them."""
    found = 0
    last_end = -1
    for cue in _SOURCE.finditer(lower):
        if cue.start() < last_end:
            continue  # a second cue in a sentence already read
        sentence = sentence_around(reply, cue.start())
        last_end = sentence.end
        masked = _masked(lower[sentence.start : sentence.end])
        for q in _quantities(masked):
            found += 1
            if found > _MAX_CANDIDATES:
                return
            yield Quantity(
                q.value, q.decimals, q.percent, sentence.start + q.start, sentence.start + q.end
            )


def _quantities(text: str) -> Iterator[Quantity]:
    money_spans: list[tuple[int, int]] = []
    for m in _MONEY.finditer(text):
        money_spans.append((m.start(), m.end()))
        group = "a" if m.group("a") else "b"
        parsed = parse_number(m.group(group))
        if parsed is not None:
            yield Quantity(parsed[0], parsed[1], False, m.start(group), m.end(group))
    for m in _NUMBER.finditer(text):
        if any(s <= m.start() < e for s, e in money_spans):
            continue
        if m.group("w"):
            yield Quantity(NUMBER_WORDS[m.group("w")], 0, False, m.start(), m.end())
            continue
        parsed = parse_number(m.group("n"))
        if parsed is not None:
            yield Quantity(parsed[0], parsed[1], bool(m.group("pct")), m.start("n"), m.end())


def parse_number(text: str) -> tuple[float, int] | None:
    """A written number as (value, decimals shown): `1,234.50`, `1.234,50`, `12,5`."""
    if "," in text and "." in text:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
    elif text.count(",") == 1 and len(text) - text.rfind(",") - 1 != 3:
        decimal = ","  # 12,5 and 54,21: German decimals; 1,234 is a thousands separator
    elif text.count(".") == 1 and len(text) - text.rfind(".") - 1 == 3 and len(text) > 4:
        decimal = ","  # 1.234: German thousands (a price of 1.234 dollars is rare)
    else:
        decimal = "."
    thousands = "," if decimal == "." else "."
    digits = text.replace(thousands, "")
    if digits.count(decimal) > 1:
        return None
    whole, _, fraction = digits.partition(decimal)
    try:
        return float(f"{whole}.{fraction}" if fraction else whole), len(fraction)
    except ValueError:
        return None


def _masked(lower: str) -> str:
    """The reply with what holds no quantity (ids, code, dates, versions) blanked, so
    offsets stay the reply's."""
    return _NOT_QUANTITY.sub(lambda m: " " * len(m.group()), lower)
