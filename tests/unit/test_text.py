"""`PhraseMatcher` finds phrases exactly where reading the text word by word finds them."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator

import pytest

from factledger.processors.claim_rules import load_claim_rules
from factledger.processors.text import (
    _TERMINATOR,
    SENTENCE_WINDOW,
    PhraseMatcher,
    PhraseSets,
    sentence_around,
)
from factledger.processors.validators.mirror import _TRIGGERS

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def word_by_word(
    phrases: Iterable[str], lower: str, limit: int = 2_000
) -> Iterator[tuple[int, int, str]]:
    """The plain reading: every word in turn, the longest phrase it begins, if any."""
    by_first: dict[str, list[tuple[str, str]]] = {}
    for phrase in set(phrases):
        first, _, rest = phrase.partition(" ")
        by_first.setdefault(first, []).append((" " + rest if rest else "", phrase))
    found = 0
    for m in _WORD.finditer(lower):
        candidates = sorted(by_first.get(m.group(), []), key=lambda c: len(c[0]), reverse=True)
        for rest, phrase in candidates:
            stop = m.end() + len(rest)
            if lower.startswith(rest, m.end()) and not (
                stop < len(lower) and lower[stop].isalpha()
            ):
                yield m.start(), stop, phrase
                found += 1
                break
        if found >= limit:
            return


ODD = ["a", "a b", "a b c", "b c", "do", "don't", "don", "re-run", "x1", "ß", "straße", "½x"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i pushed it", [(2, 8, "pushed")]),
        ("casino", []),  # "no" ends a longer word
        ("1no 2 no_", [(1, 3, "no"), (6, 8, "no")]),  # digits and "_" are not letters
        ("don't", [(0, 5, "don't")]),
        ("don’t do-it", []),  # "don’t", "do-it": one word each, not "don" or "do"
        ("a-do x'do '-do", [(12, 14, "do")]),  # a joiner glued to a letter continues a word
        ("a b c", [(0, 5, "a b c"), (2, 5, "b c")]),  # the longest phrase of each word
        ("a bc", [(0, 1, "a")]),
        ("½x ²x", [(0, 2, "½x")]),  # numbers that are not digits count as letters
    ],
    ids=[
        "word",
        "inside-word",
        "after-digit-or-underscore",
        "apostrophe",
        "joined-words",
        "joiner-after-letter",
        "overlapping-phrases",
        "phrase-needs-whole-word",
        "numeric-letters",
    ],
)
def test_finds_whole_words(text: str, expected: list[tuple[int, int, str]]) -> None:
    phrases = [*ODD, "pushed", "no"]
    assert list(PhraseMatcher(phrases).finditer(text)) == expected
    assert list(word_by_word(phrases, text)) == expected


def test_stops_at_the_limit() -> None:
    assert list(PhraseMatcher(["no"]).finditer("no no no", limit=2)) == [(0, 2, "no"), (3, 5, "no")]


def test_agrees_with_reading_word_by_word() -> None:
    rules = load_claim_rules()
    sets = [
        [w for r in rules.rules for w in r.en],
        [w for r in rules.rules for w in r.de],
        list(_TRIGGERS._by_first),
        ODD,
    ]
    vocabulary = [w for phrases in sets for w in phrases]
    noise = [*"abcdeinorstu '’-_1.²½ß\n,é", "İ", " ", " "]
    rng = random.Random(7)
    for phrases in sets:
        matcher = PhraseMatcher(phrases)
        for _ in range(3_000):
            pieces = [
                rng.choice(vocabulary)
                if rng.random() < 0.5
                else "".join(rng.choice(noise) for _ in range(rng.randint(0, 5)))
                for _ in range(rng.randint(0, 12))
            ]
            text = "".join(p + rng.choice(["", " ", "-", "'", "’", "_", "1", "."]) for p in pieces)
            text = text.lower()
            for limit in (2_000, 1):
                assert list(matcher.finditer(text, limit)) == list(
                    word_by_word(phrases, text, limit)
                ), text


def test_sentence_starts_where_the_last_terminator_ends() -> None:
    """The start `sentence_around` finds from the right is the end of the last terminator
    match a scan of the window from the left finds."""
    pieces = [*"ab .!?。！？；\n\t\u00a0x", "v1.2", "e.g.", "...", "?!"]
    rng = random.Random(3)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        for position in range(len(text) + 1):
            low = max(0, position - SENTENCE_WINDOW)
            ends = [m.end() for m in _TERMINATOR.finditer(text, low, position)]
            assert sentence_around(text, position).start == (ends[-1] if ends else low), text


def test_sentence_around_in_a_reply() -> None:
    reply = "Done. I pushed v1.2 to main!\nNext step?"
    assert sentence_around(reply, reply.index("pushed")).text == " I pushed v1.2 to main!"
    assert sentence_around(reply, reply.index("step")).text == "Next step?"


def test_phrase_sets_find_what_each_matcher_finds() -> None:
    rules = load_claim_rules()
    english = [w for r in rules.rules for w in r.en]
    german = [w for r in rules.rules for w in r.de]
    sets = PhraseSets(english, german, ODD)
    matchers = [PhraseMatcher(english), PhraseMatcher(german), PhraseMatcher(ODD)]
    vocabulary = [*english, *german, *ODD]
    rng = random.Random(5)
    for _ in range(3_000):
        text = " ".join(
            rng.choice(vocabulary) if rng.random() < 0.6 else rng.choice(["x", "-", "1", "a-"])
            for _ in range(rng.randint(0, 12))
        ).lower()
        for limit in (2_000, 1, 2):
            assert sets.find(text, limit) == [list(m.finditer(text, limit)) for m in matchers]
