"""Is a value derivable from what the agent was told or shown?

Used for tool-call arguments (class 4b): an argument is grounded when the conversation
or an earlier tool result contains it, allowing for case, punctuation, word order,
partial place names ("Los Angeles" for "Los Angeles, CA") and date formats ("20th of
July 2023" or "tomorrow" for "2023-07-20"). A member of a schema's enum is a choice among
fixed options: `member_grounded` decides whether the grounds name it, by the words that
set it apart from the other members.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from ..lazy import lazy_property

_NON_WORD = re.compile(r"[\W_]+")
_RECORD_NUMBER = re.compile(r"^[a-z]{0,2}(\d{4,})$")
# A number standing alone: a sentence's full stop may follow it, a version's digits may not.
# An ordinal or unit may follow it ("93rd", "5km", "3pm"); a letter before it makes it part
# of a token ("v2", "W95"), and a digit on either side part of a longer number.
_STANDALONE_NUMBER = re.compile(r"(?<!\w)(?<!\d\.)\d+(?:\.\d+)?(?!\d)(?!\.\d)")
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
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
# Full month names only: "may" and "mar" are words too often to name a month on their own.
_MONTH_NAME = re.compile(
    r"\b(?:january|february|march|april|june|july|august|september|october|november|"
    r"december|januar|februar|märz|juni|juli|oktober|dezember)\b",
    re.I,
)
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

    @lazy_property
    def normalized(self) -> str:
        return " " + _NON_WORD.sub(" ", self.text).strip() + " "

    @lazy_property
    def words(self) -> frozenset[str]:
        return frozenset(self.normalized.split())

    @lazy_property
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

    @lazy_property
    def months(self) -> frozenset[int]:
        """Months named in words ("April 2023", "im März"): a range over the whole month."""
        return frozenset(_MONTHS[m.group(0).lower()] for m in _MONTH_NAME.finditer(self.text))

    @lazy_property
    def has_relative_day(self) -> bool:
        return _RELATIVE_DAY.search(self.text) is not None

    @lazy_property
    def has_time(self) -> bool:
        return _TIME_WORDS.search(self.text) is not None

    @lazy_property
    def numbers(self) -> frozenset[float]:
        values = {float(n) for n in _STANDALONE_NUMBER.findall(self.normalized_numbers)}
        values.update(float(v) for w, v in _NUMBER_WORDS.items() if f" {w} " in self.normalized)
        return frozenset(values)

    @lazy_property
    def normalized_numbers(self) -> str:
        """Thousands separators dropped ("1,250" is 1250); a list "2,3,4" stays three."""
        return _THOUSANDS_COMMA.sub("", self.text)

    @lazy_property
    def date_spans(self) -> frozenset[int]:
        """Days between two dates the grounds name ("August 15th to 17th" spans 2): a stay's
        length or a trip's duration is derived from them."""
        days = set()
        for month, day in sorted(self.dates)[:_MAX_DATES]:
            try:
                days.add(date(2024, month, day).toordinal())
            except ValueError:  # a day/month pair read both ways, one of them impossible
                continue
        return frozenset(abs(a - b) for a in days for b in days if 0 < abs(a - b) <= _MAX_SPAN)

    @lazy_property
    def years(self) -> frozenset[int]:
        return frozenset(int(n) for n in self.numbers if 1000 <= n <= 2999 and n == int(n))


def value_grounded(value: str | int | float, grounds: Grounds) -> bool:
    """True when `value` can be derived from `grounds` (see the module docstring)."""
    if isinstance(value, int | float):
        # As a number of its own: the 2 of "2022" or of "v2.1" is not the user's 2.
        return float(value) in grounds.numbers or _derived_number(float(value), grounds)
    text = value.strip().lower()
    if not text or text in _PLACEHOLDERS:
        return True
    date = _ISO_DATE.match(text)
    if date:
        month, day = int(date.group(2)), int(date.group(3))
        return (
            (month, day) in grounds.dates
            or grounds.has_relative_day
            or (month in grounds.months and (day == 1 or day == _month_end(month)))
        )
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
    if _alias_grounded(normalized, grounds):
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
        number = float(normalized.replace(" ", ""))
        return number in grounds.numbers or _derived_number(number, grounds)
    tokens = [t for t in normalized.split() if len(t) >= 3 and t not in _STOPWORDS]
    if not tokens:
        return normalized in grounds.normalized
    found = sum(1 for t in tokens if t in grounds.words or _stem_in(t, grounds.words))
    return (found * 2 >= len(tokens) and found > 0) or _abbreviated(normalized, grounds)


def _derived_number(value: float, grounds: Grounds) -> bool:
    """Counts and years the request spells out another way: the days between two dates it
    names (a two-night stay from "the 15th to the 17th"), or a year relative to a year it
    names ("seven years before 2023")."""
    if value != int(value):
        return False
    number = int(value)
    if number in grounds.date_spans:
        return True
    if 1000 <= number <= 2999:
        offsets = {int(n) for n in grounds.numbers if 1 <= n <= _MAX_YEAR_OFFSET and n == int(n)}
        return any(abs(number - year) in offsets for year in grounds.years)
    return False


_MAX_DATES = 16
"""Dates of the grounds paired into spans (a bound on the pairs: 16 dates, 120 spans)."""
_MAX_SPAN = 60
_MAX_YEAR_OFFSET = 100


def _month_end(month: int) -> int:
    """The last day of a month (29 for February: a leap year's end is still its end)."""
    return 29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31


_COUNTRY_GROUPS = (
    ("uk", "gb", "united kingdom", "great britain", "britain"),
    ("us", "usa", "united states", "united states of america", "america"),
    ("uae", "ae", "united arab emirates"),
    ("nl", "netherlands", "holland"),
    ("de", "germany", "deutschland"),
    ("ch", "switzerland", "schweiz"),
    ("kr", "south korea", "korea"),
    ("cn", "china", "prc"),
)
_COUNTRY_ALIASES: dict[str, tuple[str, ...]] = {
    name: tuple(n for n in group if n != name) for group in _COUNTRY_GROUPS for name in group
}
"""Countries whose code or common name is not their initials: "GB" for "the UK"."""

_LANGUAGE_GROUPS = (
    ("en", "english"),
    ("fr", "french", "français", "francais"),
    ("de", "german", "deutsch"),
    ("es", "spanish", "español", "espanol"),
    ("it", "italian", "italiano"),
    ("pt", "portuguese", "português"),
    ("nl", "dutch"),
    ("hi", "hindi"),
    ("id", "indonesian", "bahasa"),
    ("zh", "chinese", "mandarin"),
    ("ja", "japanese"),
    ("ko", "korean"),
    ("ru", "russian"),
    ("ar", "arabic"),
    ("vi", "vietnamese"),
    ("th", "thai"),
    ("tr", "turkish"),
    ("pl", "polish"),
    ("sv", "swedish"),
)
_LANGUAGE_ALIASES: dict[str, tuple[str, ...]] = {
    name: tuple(n for n in group if n != name) for group in _LANGUAGE_GROUPS for name in group
}
"""Languages by their ISO 639-1 code and English or own name: "fr" for French."""
_LOCALE = re.compile(r"^([a-z]{2}) ([a-z]{2})$")


def _alias_grounded(normalized: str, grounds: Grounds) -> bool:
    """A country's or language's code or other name ("GB" for "the UK", "fr" for
    "French"), a locale by its language ("es-ES" for "Spanish")."""
    locale = _LOCALE.match(normalized)
    names = (normalized, locale.group(1)) if locale else (normalized,)
    return any(
        f" {alias} " in grounds.normalized
        for name in names
        for table in (_COUNTRY_ALIASES, _LANGUAGE_ALIASES)
        for alias in table.get(name, ())
    )


_PAIRING = r"\s*(?:for|=|:|means|is|->|→|-)\s*"


def described_value_grounded(value: str | int | float, description: str, grounds: Grounds) -> bool:
    """A code the parameter's description pairs with words the user gave: `province_id=1`
    where the description says "1 for Bangkok" and the user said Bangkok. Only a pairing
    counts ("1 for X", "1 = X", "X (1)", "X: 1"), not the number appearing anywhere."""
    code = str(value).strip()
    if not description or not code or len(code) > 20:
        return False
    text = description.lower()
    if code.lower() not in text:
        return False  # both patterns hold the code itself: no pattern to build for it
    token = re.escape(code.lower())
    # The code may be quoted: "'metric' for Celsius".
    after = re.finditer(rf"(?<![\w.]){token}(?![\w])['\"`]?{_PAIRING}([^,;.()\n]{{1,60}})", text)
    before = re.finditer(rf"([^,;.()\n:=]{{1,60}})(?:\(|{_PAIRING})['\"`]?{token}(?![\w.])", text)
    for m in (*after, *before):
        words = [w for w in _NON_WORD.sub(" ", m.group(1)).split() if len(w) >= 3]
        if any(w not in _DESCRIPTION_FILLER and w in grounds.words for w in words):
            return True
    return False


_DESCRIPTION_FILLER = frozenset(
    {
        "the",
        "and",
        "for",
        "etc",
        "example",
        "instance",
        "such",
        "value",
        "values",
        "service",
        "services",
        "type",
        "types",
        "code",
        "identifier",
        "number",
        "default",
        "one",
        "two",
    }
)


def _abbreviated(normalized: str, grounds: Grounds) -> bool:
    """'Great Britain' for 'GB', 'San Diego, CA' for 'SD': the initials are in the grounds."""
    words = normalized.split()
    if len(words) < 2:
        return False
    candidates = {"".join(w[0] for w in words), "".join(w[0] for w in words[:-1])}
    return any(len(c) >= 2 and c in grounds.words for c in candidates)


def member_grounded(member: str | int | float, members: Sequence[object], grounds: Grounds) -> bool:
    """True when `grounds` name the enum member `member` of `members`: verbatim, as a
    number or date, by a code's other name, or by the words that set it apart from the
    other members, each given as it is or as a word sharing its stem ("musical" for
    `Music`, "comfortable" for `comfort`). A word the member shares with another member
    does not choose it: "economy" names `Economy`, not `Premium Economy`."""
    if isinstance(member, int | float):
        return value_grounded(member, grounds)
    normalized = _NON_WORD.sub(" ", member.lower()).strip()
    if not normalized or f" {normalized} " in grounds.normalized:
        return True
    if _alias_grounded(normalized, grounds):
        return True
    if re.fullmatch(r"[\d ]+", normalized) or _ISO_DATE.match(member.lower()):
        return value_grounded(member, grounds)
    tokens = _member_tokens(normalized)
    others = {
        t
        for other in members
        if str(other).lower() != member.lower()
        for t in _member_tokens(_NON_WORD.sub(" ", str(other).lower()).strip())
    }
    distinctive = [t for t in tokens if t not in others] or tokens
    found = sum(1 for t in distinctive if _shares_stem(t, grounds.words))
    return found > 0 and found * 2 >= len(distinctive)


def _member_tokens(normalized: str) -> list[str]:
    words = normalized.split()
    return [w for w in words if len(w) >= 3 and w not in _STOPWORDS] or words


_DERIVATIONS = (
    "s",
    "es",
    "al",
    "ally",
    "ic",
    "ical",
    "ly",
    "able",
    "ful",
    "ing",
    "ed",
    "er",
    "ers",
    "ist",
    "ists",
    "y",
)
"""Suffixes that make a word of the same stem: music → musical, comfort → comfortable."""


def _shares_stem(token: str, words: frozenset[str]) -> bool:
    """`token`, or a word that is `token` plus a derivational suffix, or `token` less one."""
    if token in words:
        return True
    for suffix in _DERIVATIONS:
        if token + suffix in words:
            return True
        stem = token[: -len(suffix)]
        if token.endswith(suffix) and len(stem) >= 3 and stem in words:
            return True
    return False


def different_script(value: str, text: str) -> bool:
    """True when `text` holds letters of a script `value` is not written in (a Chinese
    request, a Latin-script value; a Korean value, an English request): whether the
    request names the value is then a translation no token comparison decides."""
    own = _scripts(value)
    return bool(own) and not _scripts(text) <= own


def _scripts(text: str) -> frozenset[str]:
    """The scripts of the letters of `text` (LATIN, CJK, HANGUL, CYRILLIC ...)."""
    found = {"LATIN"} if any(c.isascii() and c.isalpha() for c in text) else set()
    for c in set(text):
        if not c.isascii() and c.isalpha():
            script = unicodedata.name(c, "OTHER").split(" ", 1)[0]
            if script != "MODIFIER":  # ʼ and ˈ mark a Latin word, not another script
                found.add(script)
    return frozenset(found)


def _stem_in(token: str, words: frozenset[str]) -> bool:
    """Plural/singular and simple inflection: 'concerts' for 'concert', 'movies' for 'movie'."""
    for suffix in ("s", "es", "ies", "ing", "ed"):
        if token.endswith(suffix) and token[: -len(suffix)] in words:
            return True
        if token + suffix in words:
            return True
    return token.endswith("ies") and token[:-3] + "y" in words
