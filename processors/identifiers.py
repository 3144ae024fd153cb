"""Identifier shapes: what in a reply names a concrete thing that a tool must have produced.

A SHA-only check (10..40 hex characters) is the usual starting point; other shapes are
often dismissed as too noisy. FactLedger goes further with shapes that rarely collide with
prose: SHA-1/SHA-256 hex, UUIDs, URLs with a path, ticket and record keys, e-mail addresses
and order/record ids. Hex colours, versions, dates, times and plain numbers never match any
shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .limits import bounded_finditer
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


_URL = re.compile(r"https?://[^\s<>\"'`)\]}|]+", re.I)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_UUID = re.compile(
    r"(?<![A-Za-z0-9])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![A-Za-z0-9])"
)
# Explicit lookarounds as boundaries, because \b would not separate the hex run from a
# hyphen-joined word. 10 is the minimum (a trade-off against colours, error codes and
# version fragments); 64 covers SHA-256.
_SHA = re.compile(r"(?<![A-Za-z0-9])[A-Fa-f0-9]{10,64}(?![A-Za-z0-9])")
# OPS-4821, CT-20260922-001, JIRA-12: an upper-case project key and a number of 2+ digits.
_KEY = re.compile(r"(?<![A-Za-z0-9-])[A-Z][A-Z0-9]{1,9}(?:-\d{2,}){1,3}(?![A-Za-z0-9-])")
# #W2378156, #48213 (4+ digits), credit_card_9513926, ord_12345, cus_9fQ2xL7a.
_RECORD = re.compile(
    r"(?<![\w#])#[A-Z]{0,2}\d{4,}(?!\w)"
    r"|(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)*_(?:\d{3,}|(?=[A-Za-z]{0,40}\d)[A-Za-z0-9]{8,64})(?![\w-])"
)
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

# Characters each shape cannot match without; SHAs have none.
_NEEDLES: dict[Shape, tuple[str, ...]] = {
    Shape.URL: ("://",),
    Shape.EMAIL: ("@",),
    Shape.UUID: ("-",),
    Shape.KEY: ("-",),
    Shape.RECORD: ("#", "_"),
}

_PRIORITY = (Shape.URL, Shape.EMAIL, Shape.UUID, Shape.KEY, Shape.RECORD, Shape.SHA)


def extract_identifiers(text: str) -> list[Identifier]:
    """Identifier-shaped tokens in order of position; overlapping matches keep the
    higher-priority shape (a SHA inside a URL belongs to the URL)."""
    found = [
        Identifier(token, shape, start, end)
        for shape in _PRIORITY
        for token, start, end in _matches(shape, text)
    ]
    rank = {shape: i for i, shape in enumerate(_PRIORITY)}
    keep = non_overlapping([(i.start, i.end, rank[i.shape]) for i in found])
    return [found[i] for i in keep]


def _matches(shape: Shape, text: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    needles = _NEEDLES.get(shape)
    if needles is not None and not any(n in text for n in needles):
        return out  # a substring test is far cheaper than a scan that cannot match
    if shape is Shape.URL:
        for m in bounded_finditer(_URL, text):
            token = m.group().rstrip(_TRAILING)
            if _has_path(token):
                out.append((token, m.start(), m.start() + len(token)))
        return out
    pattern = {
        Shape.EMAIL: _EMAIL,
        Shape.UUID: _UUID,
        Shape.SHA: _SHA,
        Shape.KEY: _KEY,
        Shape.RECORD: _RECORD,
    }[shape]
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


def _sha_grounded(token: str, haystack: str) -> bool:
    # The token is (a prefix of) a hex run in the haystack.
    if contains_token(haystack, token, bounded_end=False):
        return True
    # A hex run in the haystack (10+ chars) is a prefix of the token.
    return any(contains_token(haystack, token[:k]) for k in range(len(token) - 1, 9, -1))
