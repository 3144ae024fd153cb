"""Identifier and code-name patterns find what their plain forms find.

The patterns are written for speed (first character, then a lookbehind; split records;
a search for a file ending before the file scan); the plain forms below, with the boundary
lookbehind first and one pattern per shape, are the definition they must keep.
"""

from __future__ import annotations

import random
import re

from factledger.processors import codeish, identifiers
from factledger.processors.codeish import code_names
from factledger.processors.identifiers import Shape, extract_identifiers, identifiers_of_shape

_HEX = "[0-9a-fA-F]"
PLAIN = {
    "uuid": (
        identifiers._UUID,
        re.compile(
            rf"(?<![A-Za-z0-9]){_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
            r"(?![A-Za-z0-9])"
        ),
    ),
    "sha": (identifiers._SHA, re.compile(r"(?<![A-Za-z0-9])[A-Fa-f0-9]{10,64}(?![A-Za-z0-9])")),
    "key": (
        identifiers._KEY,
        re.compile(r"(?<![A-Za-z0-9-])[A-Z][A-Z0-9]{1,9}(?:-\d{2,}){1,3}(?![A-Za-z0-9-])"),
    ),
    "camel": (codeish._CAMEL, re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z0-9]+)+)\b")),
}
PLAIN_RECORD = re.compile(
    r"(?<![\w#])#[A-Z]{0,2}\d{4,}(?!\w)"
    r"|(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)*_"
    r"(?:\d{3,}|(?=[A-Za-z]{0,40}\d)[A-Za-z0-9]{8,64})(?![\w-])"
)
PIECES = [
    "deadbeef12",
    "0123456789abcdef0123456789abcdef01234567",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "123e4567-e89b-12d3-a456-426614174000",
    "OPS-4821",
    "CT-20260922-001",
    "#W2378156",
    "#48213",
    "credit_card_9513926",
    "ord_12345",
    "inv_123",
    "cus_9fQ2xL7a",
    "HelloWorld",
    "MyClass2Name",
    "a_b_c_",
    "src/app.py",
    "x.json",
    "README.md",
    "load_user()",
]
NOISE = [*"aAbBfFgGzZxX019-_#.@ /:\n()`", "é", "İ", "ß", "٣"]


def corpus(seed: int, size: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(
            rng.choice(PIECES) if rng.random() < 0.35 else rng.choice(NOISE)
            for _ in range(rng.randint(0, 25))
        )
        for _ in range(size)
    ]


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span(pattern.groups and 1) for m in pattern.finditer(text)]


def test_patterns_match_their_plain_forms() -> None:
    found = 0
    for text in corpus(11, 6_000):
        for fast, plain in PLAIN.values():
            assert spans(fast, text) == spans(plain, text), text
        records = sorted(
            spans(identifiers._HASH_RECORD, text) + spans(identifiers._SNAKE_RECORD, text)
        )
        assert records == spans(PLAIN_RECORD, text), text
        found += len(records)
    assert found > 1_000  # the corpus does exercise the shapes


def test_every_file_name_has_a_file_ending() -> None:
    for text in corpus(12, 6_000):
        if codeish._FILE.search(text):
            assert codeish._FILE_END.search(text), text


def test_shapes_and_names_in_a_reply() -> None:
    reply = "Order #W2378156 for cus_9fQ2xL7a (OPS-4821) is in src/app.py, see HelloWorld."
    assert [(i.text, i.shape.value) for i in extract_identifiers(reply)] == [
        ("#W2378156", "record"),
        ("cus_9fQ2xL7a", "record"),
        ("OPS-4821", "key"),
    ]
    assert [n.text for n in code_names(reply)] == ["src/app.py", "HelloWorld"]


def test_every_uuid_and_snake_record_holds_its_hint() -> None:
    for sample in corpus(13, 6_000):
        if identifiers._UUID.search(sample):
            assert identifiers._UUID_HINT.search(sample), sample
        if identifiers._SNAKE_RECORD.search(sample):
            assert identifiers._SNAKE_RECORD_HINT.search(sample), sample


# Shapes inside shapes: a key, a SHA and a record inside a URL or an e-mail address, a UUID
# whose groups look like a SHA, so that every overlap between two shapes occurs.
NESTED = [
    "https://jira.example.com/browse/OPS-4821",
    "https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567",
    "https://shop.example/orders/#W2378156?ref=cus_9fQ2xL7a",
    "ops-4821@example.com",
    "deadbeef12@mail.example.org",
    "123e4567-e89b-12d3-a456-426614174000",
    "e89b12d3a456426614174000",
]


def test_the_identifiers_of_one_shape_are_those_the_full_extraction_keeps() -> None:
    rng = random.Random(14)
    texts = corpus(14, 3_000) + [
        " ".join(rng.choice(NESTED + PIECES) for _ in range(rng.randint(1, 6)))
        for _ in range(3_000)
    ]
    checked = 0
    for text in texts:
        every = extract_identifiers(text)
        for shape in Shape:
            expected = [i for i in every if i.shape is shape]
            assert identifiers_of_shape(text, shape) == expected, (text, shape)
            checked += len(expected)
    assert checked > 3_000
