"""Text helpers shared by validators: sentences, clause prefixes, code-ish tokens.

Every pattern here is linear-time: no nested quantifiers, no backtracking over the same
characters twice, so a 1 MB reply costs one pass per pattern.
"""

from __future__ import annotations

import re
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


def sentence_at(sents: list[Sentence], position: int) -> Sentence | None:
    """The sentence containing `position` (binary search over sorted sentences)."""
    lo, hi = 0, len(sents) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        s = sents[mid]
        if position < s.start:
            hi = mid - 1
        elif position >= s.end:
            lo = mid + 1
        else:
            return s
    return None


_CLAUSE_BREAK = re.compile(r"[,;:—–()\[\]\n]|\s-\s|，|：|、|\bbut\b|\baber\b|但是?|\bwhile\b")


def clause_prefix(text: str, position: int, *, limit: int = 80) -> str:
    """The text of the clause before `position`, at most `limit` characters back.

    Used to read what governs a verb: its subject, auxiliaries, negation and modality.
    """
    window = text[max(0, position - limit) : position]
    cut = 0
    for brk in _CLAUSE_BREAK.finditer(window):
        cut = brk.end()
    return window[cut:]


# Sentence-start marks (bullets, emoji, "Done:") that may stand before a bare participle.
_LEADING_MARKS = re.compile(
    r"^[\s\-*•>#✅✔️☑️🚀🎉\d.)]*(?:(?:done|erledigt|ok|okay|all set)\W*)?$", re.I
)


def at_sentence_start(prefix: str) -> bool:
    """True when only bullets, emoji or 'Done:' stand before the position in its clause."""
    return _LEADING_MARKS.match(prefix) is not None


def is_question(sentence: str) -> bool:
    stripped = sentence.rstrip()
    return stripped.endswith(("?", "？", "吗", "吗。")) or stripped.endswith("吗？")
