"""Is a value derivable from what the agent was told or shown?

Used for tool-call arguments (class 4b): an argument is grounded when the conversation
or an earlier tool result contains it, allowing for case, punctuation, word order,
partial place names ("Los Angeles" for "Los Angeles, CA") and date formats ("20th of
July 2023" or "tomorrow" for "2023-07-20").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

_NON_WORD = re.compile(r"[\W_]+")
_RECORD_NUMBER = re.compile(r"^[a-z]{0,2}(\d{4,})$")
# A number standing alone: a sentence's full stop may follow it, a version's digits may not.
_STANDALONE_NUMBER = re.compile(r"(?<!\w)(?<!\d\.)\d+(?:\.\d+)?(?!\w)(?!\.\d)")
# Letters and digits in one token, or an e-mail: identifiers, which only match exactly.
_IDENTIFIER_LIKE = re.compile(r"[a-z][\w.\-]*\d|\d[\w.\-]*[a-z]|@|/|\.[a-z0-9]{1,5}$")
_EXPRESSION = re.compile(r"^[\d\s.+\-*/()%]+$")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_VALUE_DATE = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.]\d{2,4}(?:[ t][\d:]+)?$")
# Values are lower-cased before matching, so the ISO "T" and "Z" are lower case here.
_ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[t ][\d:.]+(?:z|[+-]\d{2}:?\d{2})?)?$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*[ap]\.?m\.?)?$", re.I)
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january", "januar", "jänner"),
            ("feb", "february", "februar"),
            ("mar", "march", "märz", "maerz"),
            ("apr", "april"),
            ("may", "mai"),
            ("jun", "june", "juni"),
            ("jul", "july", "juli"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october", "okt", "oktober"),
            ("nov", "november"),
            ("dec", "december", "dez", "dezember"),
        ]
    )
    for m in names
}
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\.?(?:\s+of)?\s+({_MONTH_ALT})\b\.?", re.I)
_MONTH_DAY = re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.I)
_NUMERIC_DATE = re.compile(
    r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b|\b(\d{1,2})[/.](\d{1,2})(?:[/.]\d{2,4})?\b"
)
_CJK_DATE = re.compile(r"(\d{1,2})月(\d{1,2})[日号]")
_RELATIVE_DAY = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|this (?:week|weekend|morning|afternoon|evening)|"
    r"next (?:week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"heute|morgen|übermorgen|gestern)\b|今天|明天|后天|昨天|下周|周[一二三四五六日]",
    re.I,
)
_TIME_WORDS = re.compile(
    r"\b(?:\d{1,2}\s*(?:[ap]\.?m\.?|o'clock|uhr)|\d{1,2}:\d{2}|noon|midnight|morning|"
    r"afternoon|evening|night)\b|点",
    re.I,
)
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "twenty": 20,
    "thirty": 30,
    "a couple": 2,
    "a dozen": 12,
    "single": 1,
    "double": 2,
    "pair": 2,
}
# Placeholder values that say "no preference"; nobody invents those.
_PLACEHOLDERS = frozenset(
    {"dontcare", "don't care", "any", "none", "n/a", "na", "all", "unknown", "default", "null", "*"}
)
_STOPWORDS = frozenset(
    {"the", "and", "for", "with", "please", "from", "into", "about", "der", "die", "das", "und"}
)


@dataclass(frozen=True)
class Grounds:
    """Everything an argument may be derived from, lower-cased once."""

    text: str

    @cached_property
    def normalized(self) -> str:
        return " " + _NON_WORD.sub(" ", self.text).strip() + " "

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(self.normalized.split())

    @cached_property
    def dates(self) -> frozenset[tuple[int, int]]:
        found: set[tuple[int, int]] = set()
        for m in _DAY_MONTH.finditer(self.text):
            found.add((_MONTHS[m.group(2).lower()], int(m.group(1))))
        for m in _MONTH_DAY.finditer(self.text):
            found.add((_MONTHS[m.group(1).lower()], int(m.group(2))))
        for m in _NUMERIC_DATE.finditer(self.text):
            if m.group(1):
                found.add((int(m.group(2)), int(m.group(3))))
            else:
                a, b = int(m.group(4)), int(m.group(5))
                found.update({(a, b), (b, a)})
        for m in _CJK_DATE.finditer(self.text):
            found.add((int(m.group(1)), int(m.group(2))))
        return frozenset(found)

    @cached_property
    def has_relative_day(self) -> bool:
        return _RELATIVE_DAY.search(self.text) is not None

    @cached_property
    def has_time(self) -> bool:
        return _TIME_WORDS.search(self.text) is not None

    @cached_property
    def numbers(self) -> frozenset[float]:
        values = {float(n) for n in _STANDALONE_NUMBER.findall(self.normalized_numbers)}
        values.update(float(v) for w, v in _NUMBER_WORDS.items() if f" {w} " in self.normalized)
        return frozenset(values)

    @cached_property
    def normalized_numbers(self) -> str:
        return self.text.replace(",", "")


def value_grounded(value: str | int | float, grounds: Grounds) -> bool:
    """True when `value` can be derived from `grounds` (see the module docstring)."""
    if isinstance(value, int | float):
        return float(value) in grounds.numbers or str(value) in grounds.text
    text = value.strip().lower()
    if not text or text in _PLACEHOLDERS:
        return True
    date = _ISO_DATE.match(text)
    if date:
        month, day = int(date.group(2)), int(date.group(3))
        return (month, day) in grounds.dates or grounds.has_relative_day
    numeric_date = _VALUE_DATE.match(text)
    if numeric_date:
        a, b = int(numeric_date.group(1)), int(numeric_date.group(2))
        return bool({(a, b), (b, a)} & grounds.dates) or grounds.has_relative_day
    if _TIME.match(text):
        return grounds.has_time
    normalized = _NON_WORD.sub(" ", text).strip()
    if not normalized:
        return True
    if f" {normalized} " in grounds.normalized:
        return True
    record = _RECORD_NUMBER.match(normalized)
    if record and f" {record.group(1)} " in grounds.normalized:
        return True  # "#W9502126" formatted from the "9502126" the user gave
    if _EXPRESSION.match(text) and any(c.isdigit() for c in text):
        # "466.75 + 285.66": arithmetic over numbers the tools returned is derived, not
        # invented; small integer constants (x 2, / 100) are part of the arithmetic.
        return all(
            float(n) in grounds.numbers or (n.isdigit() and int(n) <= 100)
            for n in _NUMBER.findall(text)
        )
    if _IDENTIFIER_LIKE.search(text):
        # An id, e-mail, handle or path must appear as it is: "mei_kovacs_1234" is not
        # grounded by the user's name alone, nor "config/settings_prod.yaml" by "config".
        return False
    if re.fullmatch(r"\d+(?:\.\d+)?", normalized.replace(" ", "")):
        return float(normalized.replace(" ", "")) in grounds.numbers
    tokens = [t for t in normalized.split() if len(t) >= 3 and t not in _STOPWORDS]
    if not tokens:
        return normalized in grounds.normalized
    found = sum(1 for t in tokens if t in grounds.words or _stem_in(t, grounds.words))
    return (found * 2 >= len(tokens) and found > 0) or _abbreviated(normalized, grounds)


def _abbreviated(normalized: str, grounds: Grounds) -> bool:
    """'Great Britain' for 'GB', 'San Diego, CA' for 'SD': the initials are in the grounds."""
    words = normalized.split()
    if len(words) < 2:
        return False
    candidates = {"".join(w[0] for w in words), "".join(w[0] for w in words[:-1])}
    return any(len(c) >= 2 and c in grounds.words for c in candidates)


def _stem_in(token: str, words: frozenset[str]) -> bool:
    """Plural/singular and simple inflection: 'concerts' for 'concert', 'movies' for 'movie'."""
    for suffix in ("s", "es", "ies", "ing", "ed"):
        if token.endswith(suffix) and token[: -len(suffix)] in words:
            return True
        if token + suffix in words:
            return True
    return token.endswith("ies") and token[:-3] + "y" in words
