"""Identifier shapes: what in a reply names a concrete thing that a tool must have produced.

A SHA-only check (10..40 hex characters) is the usual starting point; other shapes are
often dismissed as too noisy. FactLedger goes further with shapes that rarely collide with
prose: SHA-1/SHA-256 hex, UUIDs, URLs with a path, ticket and record keys, e-mail addresses
and order/record ids. Hex colours, versions, dates, times and plain numbers never match any
shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .limits import MAX_MATCHES_PER_PATTERN, bounded_finditer
from .text import contains_token, non_overlapping


class Shape(StrEnum):
    URL = "url"
    EMAIL = "email"
    UUID = "uuid"
    SHA = "sha"
    KEY = "key"
    RECORD = "record"


@dataclass(frozen=True)
class Identifier:
    text: str
    shape: Shape
    start: int
    end: int


# A URL runs to a space, quote, bracket or brace; a parenthesis only as a balanced pair
# (`/wiki/God_of_War_(2018_video_game)`), so a Markdown link's `)` is not part of it. The
# two branches start with different characters and the inner run cannot hold `(` or `)`,
# so every character is read at most twice.
_URL = re.compile(r"https?://(?:[^\s<>\"'`()\]}|]|\([^\s<>\"'`()\]}|]*\))+", re.I)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# Each pattern opens with the character class of its first character and checks the
# character before in a lookbehind right after it (`X(?<!B X)` rather than `(?<!B)X`): the
# same matches, but `re` then skips every position whose character cannot start a match,
# instead of running the lookbehind at every position of the text.
_HEX = "[0-9a-fA-F]"
_UUID = re.compile(
    rf"{_HEX}(?<![A-Za-z0-9]{_HEX}){_HEX}{{7}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
    r"(?![A-Za-z0-9])"
)
# Explicit lookarounds as boundaries, because \b would not separate the hex run from a
# hyphen-joined word. 10 is the minimum (a trade-off against colours, error codes and
# version fragments); 64 covers SHA-256.
_SHA = re.compile(r"[A-Fa-f0-9](?<![A-Za-z0-9][A-Fa-f0-9])[A-Fa-f0-9]{9,63}(?![A-Za-z0-9])")
# OPS-4821, CT-20260922-001, JIRA-12: an upper-case project key and a number of 2+ digits.
_KEY = re.compile(r"[A-Z](?<![A-Za-z0-9-][A-Z])[A-Z0-9]{1,9}(?:-\d{2,}){1,3}(?![A-Za-z0-9-])")
# #W2378156, #48213 (4+ digits); credit_card_9513926, ord_12345, cus_9fQ2xL7a. Two
# patterns, each scanned only when its mark ("#", "_") is in the text: they start on
# different characters and share none, so their matches never overlap.
_HASH_RECORD = re.compile(r"#(?<![\w#]#)[A-Z]{0,2}\d{4,}(?!\w)")
_SNAKE_RECORD = re.compile(
    r"[a-z](?<![\w.-][a-z])[a-z0-9]*(?:_[a-z][a-z0-9]*)*_"
    r"(?:\d{3,}|(?=[A-Za-z]{0,40}\d)[A-Za-z0-9]{8,64})(?![\w-])"
)
# Text every match holds, found by a search that skips ahead to its first character: far
# cheaper than the full pattern's scan over a reply that has none.
_UUID_HINT = re.compile(r"-[0-9a-fA-F]{4}-")
_SNAKE_RECORD_HINT = re.compile(r"_(?:\d{3}|[A-Za-z0-9]{8})")
# Keys that are names of standards or products, not records.
_NOT_KEYS = frozenset(
    {
        "ISO",
        "RFC",
        "UTF",
        "SHA",
        "MD",
        "PEP",
        "COVID",
        "GPT",
        "HTTP",
        "TLS",
        "SSL",
        "IPV",
        "AES",
        "RSA",
        "ECMA",
        "IEEE",
        "ANSI",
        "DIN",
        "EN",
        "BS",
        "IEC",
        "ES",
        "MP",
        "USB",
        "PCI",
        "SOC",
        "NIST",
        "CVSS",
        "WCAG",
        "OWASP",
        "X",
        "H",
        "A",
        "B",
        "F",
        "W",
        "CWE",
        "UTC",
        "GMT",
        "CET",
        "PST",
        "EST",
        "API",
        "ISBN",
        "ASTM",
        "EC",
        "FIPS",
    }
)
_TRAILING = ".,;:!?'\")]}>*_"

# Characters each shape cannot match without; SHAs have none, records are read by mark
# ("#" or "_", see `_matches`).
_NEEDLES: dict[Shape, str] = {
    Shape.URL: "://",
    Shape.EMAIL: "@",
    Shape.UUID: "-",
    Shape.KEY: "-",
}
_PATTERNS = {Shape.EMAIL: _EMAIL, Shape.UUID: _UUID, Shape.SHA: _SHA, Shape.KEY: _KEY}

_PRIORITY = (Shape.URL, Shape.EMAIL, Shape.UUID, Shape.KEY, Shape.RECORD, Shape.SHA)
_RANK = {shape: i for i, shape in enumerate(_PRIORITY)}


def extract_identifiers(text: str) -> list[Identifier]:
    """Identifier-shaped tokens in order of position; overlapping matches keep the
    higher-priority shape (a SHA inside a URL belongs to the URL)."""
    return _extracted(text, _PRIORITY)


def identifiers_of_shape(text: str, shape: Shape) -> list[Identifier]:
    """The identifiers of `shape` among `extract_identifiers(text)`, found without scanning
    for the shapes of lower priority: an overlap goes to the higher-priority shape, so
    those never take a match from `shape` (the SHA scan, the dearest on text full of digits
    such as a JSON record, runs only for SHAs)."""
    found = _extracted(text, _PRIORITY[: _RANK[shape] + 1])
    return [i for i in found if i.shape is shape]


def _extracted(text: str, shapes: Sequence[Shape]) -> list[Identifier]:
    found = [
        Identifier(token, shape, start, end)
        for shape in shapes
        for token, start, end in _matches(shape, text)
    ]
    if len(found) < 2:
        return found  # nothing to overlap
    keep = non_overlapping([(i.start, i.end, _RANK[i.shape]) for i in found])
    return [found[i] for i in keep]


def _matches(shape: Shape, text: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    needle = _NEEDLES.get(shape)
    if needle is not None and needle not in text:
        return out  # a substring test is far cheaper than a scan that cannot match
    if shape is Shape.URL:
        for m in bounded_finditer(_URL, text):
            token = _strip_url(m.group())
            if _has_path(token):
                out.append((token, m.start(), m.start() + len(token)))
        return out
    if shape is Shape.RECORD:
        found = _tokens(shape, _HASH_RECORD, text) if "#" in text else []
        if "_" in text and _SNAKE_RECORD_HINT.search(text) is not None:
            found += _tokens(shape, _SNAKE_RECORD, text)
            found.sort(key=lambda t: t[1])
        return found[:MAX_MATCHES_PER_PATTERN]
    if shape is Shape.UUID and _UUID_HINT.search(text) is None:
        return out
    return _tokens(shape, _PATTERNS[shape], text)


def _tokens(shape: Shape, pattern: re.Pattern[str], text: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for m in bounded_finditer(pattern, text):
        token = m.group()
        if shape is Shape.SHA and not _looks_like_hash(token):
            continue
        if shape is Shape.KEY and token.split("-", 1)[0] in _NOT_KEYS:
            continue
        if shape is Shape.EMAIL:
            token = token.rstrip(_TRAILING)
        out.append((token, m.start(), m.start() + len(token)))
    return out


def _strip_url(url: str) -> str:
    """Trailing punctuation is the sentence's, except a `)` that closes a pair in the URL."""
    end = len(url)
    while end and url[end - 1] in _TRAILING:
        if url[end - 1] == ")" and url.count("(", 0, end) >= url.count(")", 0, end):
            break
        end -= 1
    return url[:end]


def _has_path(url: str) -> bool:
    rest = url.split("://", 1)[1]
    path = rest.partition("/")[2]
    return bool(path.strip("/")) or "?" in rest


def _looks_like_hash(token: str) -> bool:
    # All digits is a plain number; a hash of this length has letters almost always.
    return not token.isdigit()


def is_grounded(identifier: Identifier, haystack_lower: str) -> bool:
    """True when the identifier occurs in the (lower-cased) haystack.

    SHAs match by prefix in both directions: a short form quoted from a full
    hash, or a full hash whose short form the tool showed. URLs match without a trailing
    slash and as a prefix of a longer URL the tool returned.
    """
    token = identifier.text.lower()
    if identifier.shape is Shape.URL:
        token = token.rstrip("/")
        if token in haystack_lower:
            return True
        bare = token.split("://", 1)[1]
        return bare in haystack_lower
    if identifier.shape is Shape.SHA:
        return _sha_grounded(token, haystack_lower)
    if identifier.shape is Shape.RECORD and token.startswith("#"):
        # "#W9502126" is the system's spelling of the "9502126" a user typed.
        digits = token.lstrip("#abcdefghijklmnopqrstuvwxyz")
        return token[1:] in haystack_lower or contains_token(haystack_lower, digits)
    return contains_token(haystack_lower, token)


def is_repeated(identifier: Identifier, haystack_lower: str) -> bool:
    """True when the haystack holds exactly this identifier, as a whole token: no prefix
    match either way. What the model said before grounds a repeat of it, never an
    extension (a full SHA whose short form it gave is as invented as that form)."""
    token = identifier.text.lower()
    if identifier.shape is Shape.URL:
        token = token.rstrip("/")
    return contains_token(haystack_lower, token)


# 7 to 9 hex characters: git's short forms, below `_SHA`'s minimum. Outside a commit's
# context they collide with prose too often to judge on shape alone.
_SHORT_SHA = re.compile(r"[A-Fa-f0-9](?<![A-Za-z0-9_./\-#][A-Fa-f0-9])[A-Fa-f0-9]{6,8}(?![\w\-])")


def short_shas(text: str, longer: Sequence[Identifier]) -> list[Identifier]:
    """Short SHAs of `text`: 7 to 9 hex characters with a digit and a letter, outside every
    identifier of `longer` (its `extract_identifiers`), and not a placeholder (`abc1234`
    counting up). Whether one names a commit is the caller's to decide."""
    out: list[Identifier] = []
    for match in bounded_finditer(_SHORT_SHA, text):
        token = match.group()
        if token.isdigit() or token.isalpha() or is_placeholder(token):
            continue
        if any(i.start <= match.start() and match.end() <= i.end for i in longer):
            continue
        out.append(Identifier(token, Shape.SHA, match.start(), match.end()))
    return out


def _sha_grounded(token: str, haystack: str) -> bool:
    # The token is (a prefix of) a hex run in the haystack.
    if contains_token(haystack, token, bounded_end=False):
        return True
    # A hex run in the haystack (10+ chars) is a prefix of the token.
    return any(contains_token(haystack, token[:k]) for k in range(len(token) - 1, 9, -1))


# --- identifiers that the reply does not present as existing ----------------------------

_FRAME_WINDOW = 80
"""How far before a token its framing ("should look like", "Go to") is read."""
_ABBREVIATIONS = frozenset({"etc", "vs", "no", "nr", "ca", "approx", "fig", "inc", "ltd", "dr"})
_SENTENCE_END = re.compile(r"(\S{0,12})[.!?](?=\s)|[。！？；]")

# Framings read on the lower-cased text right before a token; `\Z` ties each to it.
_GAP = r"[\s:\"'`“”„«(*\[]*\Z"
_FORMAT_FRAME = re.compile(
    r"(?:\b(?:should|would|will|must|might|may|could|usually|typically|normally|generally|"
    r"always|often)\s+(?:\w+\s+)?looks?\s+(?:something\s+|roughly\s+|a bit\s+)?like"
    r"|\blooks?\s+(?:something|roughly|a bit)\s+like"
    r"|\b(?:in|of|has|have|follows?|with)\s+the\s+(?:form|format|pattern|shape)(?:\s+of)?"
    r"|\bformatted\s+(?:as|like)|\bformat\s*(?:is|like|such as)?"
    r"|\bsieht\s+(?:etwa\s+)?so\s+aus|\bim\s+format|\bnach\s+dem\s+muster"
    r"|格式(?:为|是|如)?|形如|类似于?)" + _GAP
)
_EXAMPLE_MARK = re.compile(
    r"(?:\be\.\s?g\.,?|\bfor\s+(?:example|instance),?|\bsuch\s+as|\bz\.\s?b\.|"
    r"\bzum\s+beispiel|\bbeispielsweise|例如|比如)" + _GAP
)
# A URL offered as a place to go: an instruction at the start of its sentence or clause,
# or a plan, an offer or a guess anywhere before it.
_MARKERS = r"\A[\s\-*•>#\d.)]*(?:\*\*[^*]{0,40}\*\*:?\s*)?"
_CLAUSE_START = r"(?:" + _MARKERS + r"|[,;:]\s*|\b(?:then|or|otherwise|else)\s+)"
_INSTRUCTION = re.compile(
    _CLAUSE_START + r"(?:(?:go|head|navigate|browse|proceed|return|switch)\s+(?:back\s+)?to\b|"
    r"(?:visit|open|check|download|access|enter|type|paste|click|use|look\s+(?:at|up)|"
    r"refer\s+to|try|consult|search|find|locate|follow|explore|start\s+at|rufe?|öffne|"
    r"besuche|gehe?\s+(?:auf|zu)|访问|打开|前往)\b)"
)
_PLAN_OR_GUESS = re.compile(
    r"\byou\s+(?:can|could|may|might|should|would|need\s+to|will\s+need\s+to)\b"
    r"|\b(?:i|we)(?:'ll|'d|\s+will|\s+would|\s+could|\s+can|\s+should|\s+might|\s+plan\s+to|"
    r"\s+need\s+to|\s+am\s+going\s+to|\s+are\s+going\s+to)\s+(?:\w+\s+)?(?:use|try|visit|"
    r"fetch|scrape|access|open|check|query|call|request|download|look|start|navigate|go)\b"
    r"|\blet(?:'s|\s+us|\s+me)\s+(?:\w+\s+)?(?:use|try|visit|fetch|scrape|access|open|check|"
    r"query|download|look|start|navigate|go)\b|\bplease\b"
    r"|\b(?:seems?|appears?)\s+to\s+be\b|\b(?:might|may|could|should|would)\s+be\b"
    r"|\bprobably\b|\bpresumably\b|\bi\s+(?:think|guess|believe|assume|suspect)\b"
    r"|\b(?:sie\s+können|du\s+kannst)\b|\bvermutlich\b|\bwahrscheinlich\b"
    r"|可以(?:访问|打开|查看)|请(?:访问|打开)|可能是"
)
# Words that present the URL as where something came from: then it is a report.
_PROVENANCE = re.compile(
    r"\b(?:retrieved|fetched|obtained|scraped|collected|extracted|downloaded|pulled|"
    r"returned|reported|according\s+to|based\s+on|sources?|sourced|taken\s+from|"
    r"comes?\s+from|came\s+from|laut|quelle|abgerufen)\b|来源|来自|根据"
)


def frame_before(text_lower: str, start: int) -> str:
    """The lower-cased text of the token's sentence before it, at most _FRAME_WINDOW long."""
    low = max(0, start - _FRAME_WINDOW)
    cut = max(text_lower.rfind("\n", low, start) + 1, low)
    begin = cut
    for m in _SENTENCE_END.finditer(text_lower, cut, start):
        word = m.group(1) or ""
        if word.isdigit() or "." in word or word.lstrip("(") in _ABBREVIATIONS:
            continue  # "1." of a list item, "e.g.", "etc.", "No." end no sentence
        begin = m.end()
    return text_lower[begin:start]


def is_format_example(text_lower: str, ident: Identifier) -> bool:
    """The token shows what an identifier looks like ("It should look like #W0000000",
    "e.g. ORD-0000"), so it claims no such record exists."""
    before = frame_before(text_lower, ident.start)
    if _FORMAT_FRAME.search(before):
        return True
    return _EXAMPLE_MARK.search(before) is not None and is_placeholder(ident.text)


def is_placeholder(token: str) -> bool:
    """Digits that only show a shape: one digit repeated or counting up (0000, 1234567)."""
    digits = "".join(c for c in token if c.isdigit())
    if len(digits) < 3:
        return "xxx" in token.lower()
    return len(set(digits)) == 1 or digits in "01234567890123456789"


def is_place_to_go(text_lower: str, ident: Identifier) -> bool:
    """A URL offered as where to look, not as a result: an instruction ("Go to …"), a plan
    or offer ("I'll use the URL …", "you can check …") or a guess ("seems to be …") before
    it in its sentence, with no provenance word ("retrieved", "according to", "source").
    A URL whose path holds a record (ticket key, SHA, UUID, order id) still asserts that
    record, so it is never only a place to go."""
    if ident.shape is not Shape.URL or _holds_record(ident.text):
        return False
    before = frame_before(text_lower, ident.start)
    if _PROVENANCE.search(before):
        return False
    return _INSTRUCTION.search(before) is not None or _PLAN_OR_GUESS.search(before) is not None


def _holds_record(url: str) -> bool:
    rest = url.split("://", 1)[-1]
    path = rest.partition("/")[2]
    return any(i.shape is not Shape.URL for i in extract_identifiers(path))
