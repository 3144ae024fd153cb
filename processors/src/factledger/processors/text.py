"""Text helpers shared by validators: sentences, clause prefixes, code-ish tokens.

Every pattern here is linear-time: no nested quantifiers, no backtracking over the same
characters twice, so a 1 MB reply costs one pass per pattern.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# A sentence ends at . ! ? followed by whitespace or the end, at CJK sentence marks, or at
# a line break. Dots inside tokens (v1.2.3, example.com, app.py) do not end a sentence.
_SENTENCE = re.compile(r"[^\n.!?。！？；]+(?:[.!?](?=\S)[^\n.!?。！？；]*)*[.!?。！？；]*")


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    end: int


def sentences(text: str) -> list[Sentence]:
    """Split into sentences with offsets; whitespace-only pieces are dropped."""
    out = []
    for m in _SENTENCE.finditer(text):
        piece = m.group()
        if piece.strip():
            out.append(Sentence(piece, m.start(), m.end()))
    return out


_TERMINATOR = re.compile(r"[.!?](?=\s|$)|[。！？；\n]")
SENTENCE_WINDOW = 400
"""How far from a position a sentence boundary is looked for; longer runs are cut there."""


def sentence_around(text: str, position: int) -> Sentence:
    """The sentence containing `position`, found by looking at most SENTENCE_WINDOW
    characters either way, so the cost per lookup is bounded whatever the text's length."""
    low = max(0, position - SENTENCE_WINDOW)
    start = _after_last_terminator(text, low, position)
    after = _TERMINATOR.search(text, position, position + SENTENCE_WINDOW)
    end = after.end() if after else min(len(text), position + SENTENCE_WINDOW)
    return Sentence(text[start:end], start, end)


def _after_last_terminator(text: str, low: int, position: int) -> int:
    """The end of the last `_TERMINATOR` match in text[low:position], else `low`.

    Every match is one character, so the last one is the rightmost terminator: found from
    the right with `rfind` instead of running the pattern over the whole window. A stop
    counts when whitespace follows it or it stands at `position` (the `$` of the pattern,
    which `finditer(text, low, position)` sees there)."""
    last = -1
    for mark in "。！？；\n":
        found = text.rfind(mark, low, position)
        if found > last:
            last = found
    for mark in ".!?":
        at = text.rfind(mark, low, position)
        while at > last:
            if at + 1 == position or text[at + 1].isspace():
                last = at
                break
            at = text.rfind(mark, low, at)
    return last + 1 if last >= 0 else low


def lowered(text: str) -> str:
    """`text.lower()` with every offset kept: a character whose lower case is longer
    (Turkish dotted I) stays as it is, so spans found in the result fit the original."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


# "but", "aber", "while" as a first letter and a lookbehind for the word start (not
# "\bbut\b"): every branch then opens on a character, so `re` skips to those characters.
_CLAUSE_BREAK = re.compile(
    r"[,;:—–()\[\]\n]|\s-\s|，|：|、|b(?<!\wb)ut\b|a(?<!\wa)ber\b|但是?|w(?<!\ww)hile\b"
)


def clause_prefix(text: str, position: int, *, limit: int = 80) -> str:
    """The text of the clause before `position`, at most `limit` characters back.

    Used to read what governs a verb: its subject, auxiliaries, negation and modality.
    """
    window = text[max(0, position - limit) : position]
    cut = 0
    for brk in _CLAUSE_BREAK.finditer(window):
        cut = brk.end()
    return window[cut:]


_CONTRAST = re.compile(r"\s*(?:but|however|yet|aber|jedoch|doch|但是?|可是|不过)\b", re.I)


def claim_scope(text: str, start: int, end: int, *, limit: int = 160) -> tuple[int, int]:
    """The clause around [start, end) plus a contrasting clause right after it ("I pushed
    it, but the push failed"), as offsets: where a claim's own caveats are written."""
    stop = min(len(text), end + limit)
    brk = _CLAUSE_BREAK.search(text, end, stop)
    clause_end = brk.start() if brk else stop
    if brk is not None and _CONTRAST.match(
        text, brk.end() if brk.group().strip() in ",;，" else brk.start()
    ):
        nxt = _CLAUSE_BREAK.search(text, brk.end() + 1, stop)
        clause_end = nxt.start() if nxt else stop
    return start - len(clause_prefix(text, start)), clause_end


# Sentence-start marks (bullets, emoji, "Done:") that may stand before a bare participle.
_LEADING_MARKS = re.compile(
    r"^[\s\-*•>#✅✔️☑️🚀🎉\d.)]*(?:(?:done|erledigt|ok|okay|all set)\W*)?$", re.I
)


def at_sentence_start(prefix: str) -> bool:
    """True when only bullets, emoji or 'Done:' stand before the position in its clause."""
    return _LEADING_MARKS.match(prefix) is not None


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_MAX_LIST_LINES = 40


def list_header(text: str, position: int) -> str | None:
    """The header line ("Once done we will have:") of the list whose item holds
    `position`, stripped; the line itself when it is no list item. None when the nearest
    line that is no item does not end in a colon, or is too far up (40 lines): the list
    has no header that could govern its items."""
    line_start = text.rfind("\n", 0, position) + 1
    for _ in range(_MAX_LIST_LINES):
        line_end = text.find("\n", line_start)
        line = text[line_start : len(text) if line_end == -1 else line_end]
        if line.strip() and not _BULLET.match(line):
            stripped = line.strip()
            return stripped if stripped.endswith((":", "：")) else None
        if line_start == 0:
            return None
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return None


def is_list_item(text: str, position: int) -> bool:
    """The line holding `position` is a bullet or numbered list item."""
    line_start = text.rfind("\n", 0, position) + 1
    return _BULLET.match(text[line_start:position]) is not None


def is_question(sentence: str) -> bool:
    stripped = sentence.rstrip()
    return stripped.endswith(("?", "？", "吗", "吗。")) or stripped.endswith("吗？")


def contains_token(haystack: str, token: str, *, bounded_end: bool = True) -> bool:
    """`token` occurs in `haystack` with no letter or digit right before it, nor right
    after it unless `bounded_end` is False (then the match may be a prefix of a run)."""
    start = haystack.find(token)
    while start != -1:
        end = start + len(token)
        before = haystack[start - 1] if start > 0 else " "
        after = haystack[end] if bounded_end and end < len(haystack) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = haystack.find(token, start + 1)
    return False


def non_overlapping(spans: list[tuple[int, int, int]]) -> list[int]:
    """Indexes of the spans to keep when overlapping ones compete: (start, end, rank),
    lower rank wins, then the earlier start. Sorting once keeps this O(n log n)."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][2], spans[i][0]))
    kept_starts: list[int] = []
    kept_ends: list[int] = []
    kept: list[int] = []
    for i in order:
        start, end, _ = spans[i]
        at = bisect.bisect_left(kept_starts, start)
        # Kept spans are disjoint and sorted, so only the neighbours can overlap.
        if at > 0 and kept_ends[at - 1] > start:
            continue
        if at < len(kept_starts) and kept_starts[at] < end:
            continue
        kept_starts.insert(at, start)
        kept_ends.insert(at, end)
        kept.append(i)
    return sorted(kept, key=lambda i: spans[i][0])


_LETTER = r"[^\W\d_]"
_JOIN = "['’-]"
_WORD = re.compile(rf"{_LETTER}+(?:{_JOIN}{_LETTER}+)*")


class PhraseMatcher:
    """Finds whole-word phrases in lower-cased text.

    A word is a run of letters, joined by apostrophes or hyphens ("don't", "re-run"), as
    `_WORD` reads it from left to right. Reading every word and looking it up costs a
    Python step per word; instead the phrases' first words are compiled into one regex trie
    that finds them in a single pass in C, and the word start and the rest of each phrase are
    checked only at those few places. Multi-word phrases match with single spaces between
    their words.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        by_first: dict[str, list[tuple[str, str]]] = {}
        for phrase in set(phrases):
            first, _, rest = phrase.partition(" ")
            # A first word `_WORD` cannot read whole never matches.
            if _WORD.fullmatch(first) is None:
                continue
            by_first.setdefault(first, []).append((" " + rest if rest else "", phrase))
        for candidates in by_first.values():
            candidates.sort(key=lambda c: len(c[0]), reverse=True)
        self._by_first = by_first
        self._first_words = _first_words_pattern(by_first)

    def finditer(self, lower: str, limit: int = 2_000) -> Iterator[tuple[int, int, str]]:
        """(start, end, phrase) for each phrase in `lower`, at most `limit` of them."""
        if self._first_words is None:
            return
        found = 0
        for m in self._first_words.finditer(lower):
            # A match inside a word ("no" in "casino") hides no word start: the match's
            # letters and joiners all continue the word it sits in.
            if not _starts_word(lower, m.start()):
                continue
            stop, phrase = self.phrase_at(lower, m.group(), m.end())
            if phrase:
                yield m.start(), stop, phrase
                found += 1
                if found >= limit:
                    return

    def phrase_at(self, lower: str, word: str, end: int) -> tuple[int, str]:
        """The longest phrase that the whole word `word`, ending at `end`, begins, and where
        it ends; (end, "") when there is none."""
        for rest, phrase in self._by_first.get(word, ()):
            stop = end + len(rest)
            if lower.startswith(rest, end) and not (stop < len(lower) and lower[stop].isalpha()):
                return stop, phrase
        return end, ""


class PhraseSets:
    """Several `PhraseMatcher`s run in one scan of the text: `find` returns, for each set,
    what its own `PhraseMatcher.finditer` yields (the scan is most of the cost)."""

    def __init__(self, *sets: Iterable[str]) -> None:
        self._matchers = tuple(PhraseMatcher(phrases) for phrases in sets)
        self._first_words = _first_words_pattern(
            {word for matcher in self._matchers for word in matcher._by_first}
        )

    def find(self, lower: str, limit: int = 2_000) -> list[list[tuple[int, int, str]]]:
        """(start, end, phrase) of each set's phrases in `lower`, at most `limit` per set."""
        found: list[list[tuple[int, int, str]]] = [[] for _ in self._matchers]
        if self._first_words is None:
            return found
        for m in self._first_words.finditer(lower):
            if not _starts_word(lower, m.start()):
                continue
            full = True
            for matcher, out in zip(self._matchers, found, strict=True):
                if len(out) < limit:
                    stop, phrase = matcher.phrase_at(lower, m.group(), m.end())
                    if phrase:
                        out.append((m.start(), stop, phrase))
                    full = full and len(out) >= limit
            if full:
                break
        return found


def _first_words_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """The first words as one regex trie, or None for none.

    Trie first, no lookbehind: `re` then skips ahead by the set of first letters, and the
    caller checks the rarer candidates' starts (`_starts_word`) in Python, which makes the
    scan about twice as fast. The lookahead refuses an end where `_WORD` would read on."""
    ordered = sorted(words)
    if not ordered:
        return None
    return re.compile(rf"{_trie(ordered)}(?!{_LETTER}|{_JOIN}{_LETTER})")


def _is_letter(char: str) -> bool:
    """`char` matches `_LETTER`: `re`'s \\w is `str.isalnum()` (plus "_"), its \\d `isdecimal()`."""
    return char.isalnum() and not char.isdecimal()


def _starts_word(text: str, at: int) -> bool:
    """`_WORD.finditer` starts a word at `at`, which holds a letter: no letter before it,
    nor a joiner with a letter before that (the word would run on through the joiner)."""
    if at == 0:
        return True
    before = text[at - 1]
    if _is_letter(before):
        return False
    return not (before in "'’-" and at > 1 and _is_letter(text[at - 2]))


def _trie(words: list[str]) -> str:
    """A regex matching exactly `words` (sorted), sharing prefixes: "do(?:n't|)"."""
    by_head: dict[str, list[str]] = {}
    for word in words:
        if word:
            by_head.setdefault(word[0], []).append(word[1:])
    # The empty tail goes last: a longer word is tried before the prefix it extends.
    branches = [re.escape(head) + _trie(tails) for head, tails in by_head.items()]
    if "" in words:
        branches.append("")
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"
