"""Completion claims in a reply: "I pushed", "has been deployed", "gepusht", "已发布".

Only assertions of finished work count. Negated, future, conditional, advisory sentences
and questions are not claims, nor are participles used as adjectives ("the updated file").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from .claim_rules import ClaimRule, ClaimRules, alternation
from .limits import MAX_MATCHES_PER_PATTERN, bounded_finditer
from .text import (
    PhraseMatcher,
    Sentence,
    at_sentence_start,
    clause_prefix,
    is_question,
    lowered,
    sentence_around,
)


@dataclass(frozen=True)
class Claim:
    rule: ClaimRule
    phrase: str
    start: int
    end: int
    sentence: Sentence
    first_person: bool
    """The agent speaks of its own act ("I deployed") rather than of a state ("is deployed")."""


# What blocks an English claim when it stands before the verb in its clause: negation,
# modality and future, conditions, advice to the user.
BLOCKS_CLAIM = re.compile(
    r"\b(?:not|never|no|nothing|none|without|yet|will|would|could|can|should|shall|may|might|"
    r"must|going|want|wants|plan|plans|planning|need|needs|about|if|once|when|whenever|after|"
    r"before|unless|until|whether|you|please|try|let|let's|ready|have to|has to|to be|"
    r"hoping|expect|expected|supposed|able|unable|tried|trying|attempted)\b|n't\b|'ll\b|'d\b",
    re.IGNORECASE,
)
_EN_SUBJECT = re.compile(r"\b(?:I|we)\b|\b(?:I|we)'(?:ve|m|re)\b", re.IGNORECASE)
# Perfect and past auxiliaries mark a completed act; the present "is configured" describes
# a state, unless "now" makes it news ("is now deployed").
_EN_AUX = re.compile(
    r"\b(?:has|have|had|was|were|been|got|gets|get)\b|'s\s+been\b|'ve\b"
    r"|\b(?:is|are|'s)\s+(?:now|successfully)\s+(?:\w+\s+)?$",
    re.IGNORECASE,
)
# "Ticket created." / "Email sent!": a headline of a few words that ends on the participle.
_HEADLINE_WORDS = 4
_CJK = re.compile(r"[\u3400-\u9fff]")
# A participle inside markdown emphasis or a heading is a label ("3. **Processed Orders**:").
_LABEL = re.compile(r"\*\*|__|#")
_SUCCESS_ADVERB = re.compile(r"\b(?:successfully|erfolgreich)\b", re.IGNORECASE)
_DE_BLOCK = re.compile(
    r"\b(?:nicht|kein\w*|nie|niemals|werde|wirst|wird|werden|würde\w*|könnte\w*|sollte\w*|"
    r"soll|sollen|müsste\w*|falls|wenn|sobald|bevor|nachdem|ob|bitte|kannst|können|"
    r"noch nicht|versucht)\b",
    re.IGNORECASE,
)
_ZH_BLOCK = re.compile(r"如果|假如|若|一旦|是否|未|没|尚|请|等到|待|不")


class ClaimMatcher:
    """Compiled claim rules; `find(text)` returns every completion claim in order.

    English and German verbs are looked up word by word in the lower-cased text (see
    `PhraseMatcher`); Chinese phrases and custom patterns are regular expressions.
    """

    def __init__(self, rules: ClaimRules) -> None:
        self.rules = rules
        self._en_words = {w: r for r in rules.rules for w in r.en}
        self._de_words = {w: r for r in rules.rules for w in r.de}
        self._zh_words = {w: r for r in rules.rules for w in r.zh}
        self._en = PhraseMatcher(self._en_words)
        self._de = PhraseMatcher(self._de_words)

    @cached_property
    def _zh(self) -> re.Pattern[str] | None:
        words = list(self._zh_words)
        return re.compile(alternation(words)) if words else None

    @cached_property
    def _extra(self) -> list[tuple[ClaimRule, re.Pattern[str]]]:
        return [(r, re.compile(p)) for r in self.rules.rules for p in r.patterns]

    def find(self, text: str, lower: str | None = None) -> list[Claim]:
        """Claims in `text`; pass `lower` (`text.lowered(text)`) when it is at hand."""
        lower = lowered(text) if lower is None else lower
        claims: list[Claim] = []
        for start, end, phrase in self._en.finditer(lower, MAX_MATCHES_PER_PATTERN):
            claim = self._english(text, start, end, self._en_words[phrase])
            if claim is not None:
                claims.append(claim)
        for start, end, phrase in self._de.finditer(lower, MAX_MATCHES_PER_PATTERN):
            claim = self._simple(text, start, end, self._de_words[phrase], _DE_BLOCK, window=60)
            if claim is not None:
                claims.append(claim)
        if self._zh is not None and _CJK.search(text):
            for m in bounded_finditer(self._zh, text):
                rule = self._zh_words[m.group()]
                claim = self._simple(text, m.start(), m.end(), rule, _ZH_BLOCK, window=8)
                if claim is not None:
                    claims.append(claim)
        for rule, pattern in self._extra:
            for m in bounded_finditer(pattern, text):
                sentence = sentence_around(text, m.start())
                if is_question(sentence.text):
                    continue
                prefix = text[max(sentence.start, m.start() - 8) : m.start()]
                if _ZH_BLOCK.search(prefix) or BLOCKS_CLAIM.search(prefix):
                    continue
                claims.append(Claim(rule, m.group(), m.start(), m.end(), sentence, True))
        claims.sort(key=lambda c: c.start)
        return claims

    def _english(self, text: str, start: int, end: int, rule: ClaimRule) -> Claim | None:
        sentence = sentence_around(text, start)
        if is_question(sentence.text):
            return None
        prefix = clause_prefix(text, start)
        prefix = prefix[max(0, len(prefix) - (start - sentence.start)) :]
        if BLOCKS_CLAIM.search(prefix):
            return None
        first_person = _EN_SUBJECT.search(prefix) is not None
        after = text[end : end + 16]
        bare = at_sentence_start(prefix) and not _LABEL.search(prefix)
        headline = (
            len(sentence.text.split()) <= _HEADLINE_WORDS
            and sentence.text[end - sentence.start :].strip(" .!\n") == ""
            and not _LABEL.search(sentence.text)
        )
        if not (
            first_person
            or _EN_AUX.search(prefix)
            or bare
            or headline
            or _SUCCESS_ADVERB.search(prefix[-16:])
            or _SUCCESS_ADVERB.match(after.lstrip())
        ):
            return None
        return Claim(rule, text[start:end], start, end, sentence, first_person)

    def _simple(
        self,
        text: str,
        start: int,
        end: int,
        rule: ClaimRule,
        block: re.Pattern[str],
        *,
        window: int,
    ) -> Claim | None:
        sentence = sentence_around(text, start)
        if is_question(sentence.text):
            return None
        prefix = clause_prefix(text, start, limit=window)
        prefix = prefix[max(0, len(prefix) - (start - sentence.start)) :]
        # Replies mix languages ("Ich werde das nicht pushen, will do later"): both block.
        if block.search(prefix) or BLOCKS_CLAIM.search(prefix):
            return None
        return Claim(rule, text[start:end], start, end, sentence, True)
