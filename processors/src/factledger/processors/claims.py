"""Completion claims in a reply: "I pushed", "has been deployed", "gepusht", "已发布".

Only assertions of finished work count. Negated, future, conditional, advisory sentences
and questions are not claims, nor are participles used as adjectives ("the updated file"),
verbs inside code (a region of `code_regions`, or a word glued to an identifier:
`downloaded_files`, `row.verified`), a first-person subject that governs another verb
("we found that the video was released ..."), or a passive that dates the event or names
a third party as its doer ("released on YouTube in 2012", "published by Nature", "no rainy
days were recorded during the first week"): those report the world, not the agent's act.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .claim_rules import ClaimRule, ClaimRules, alternation
from .code_regions import inside
from .limits import MAX_MATCHES_PER_PATTERN, bounded_finditer
from .text import (
    PhraseSets,
    Sentence,
    at_sentence_start,
    clause_prefix,
    is_list_item,
    is_question,
    list_header,
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
    r"hoping|expect|expected|supposed|able|unable|tried|trying|attempted)\b|n['’]t\b|['’]ll\b|"
    r"['’]d\b",
    re.IGNORECASE,
)
# A list header that frames its items as what is to come ("Once done we will have:",
# "Plan:", "Next steps:"): the perfect tense of its items ("- Confirmed the dates") is
# the plan's, not a report.
_FUTURE_HEADER = re.compile(
    r"\b(?:will|shall|would|should|going to|plan|plans|planned|next steps?|to ?do|once|"
    r"after (?:these|this|that|the|all|we|i)\b|when (?:done|finished|complete)|need to|must|"
    r"(?:facts|things|steps|items|questions) to|werden|werde|wird|sobald|nachdem|geplant|"
    r"nächste schritte)\b|['’]ll\b|计划|下一步|将会",
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
# A German participle with a passive or stative auxiliary and no first-person subject
# ("das Wort, das entfernt wurde", "der Branch ist gepusht") tells what happened, like an
# English passive; "ich habe ... gelöscht", "wir haben es gepusht" is the agent's act.
_DE_FIRST_PERSON = re.compile(r"\b(?:ich|wir|habe|haben|hab|hatte|hatten)\b", re.IGNORECASE)
_DE_AUX_BEFORE = re.compile(r"\b(?:wurde|wurden|ist|sind|war|waren)\b", re.IGNORECASE)
_DE_AUX_AFTER = re.compile(r"\s+(?:wurde|wurden|worden|ist|sind|war|waren)\b", re.IGNORECASE)
# 请 asks the user ("请确认"), but 请求 is a request ("拉取请求已合并").
_ZH_BLOCK = re.compile(r"如果|假如|若|一旦|是否|未|没|尚|请(?!求)|等到|待|不")
# Between a first-person subject and its verb stand only auxiliaries and adverbs ("I have
# now pushed"), or the subject's earlier verb joined by "and"/"then" ("I fixed it and
# pushed"). A relative or complement word means the verb has another subject ("we found
# that the video was released", "the first short ever released").
_SUBJECT_LINK = frozenset(
    {
        "have",
        "has",
        "had",
        "'ve",
        "'m",
        "'re",
        "am",
        "are",
        "just",
        "now",
        "also",
        "already",
        "successfully",
        "then",
        "finally",
        "all",
        "both",
        "manually",
        "carefully",
        "thoroughly",
        "recently",
        "first",
        "indeed",
        "again",
        "together",
        "fully",
        "properly",
        "directly",
        "actually",
        "personally",
        "since",
        "meanwhile",
        "subsequently",
        "additionally",
    }
)
_SUBJECT_LINK_WORDS = 4
_COORDINATION = frozenset({"and", "then", "&"})
_SUBORDINATE = frozenset(
    {"that", "which", "who", "whom", "whose", "where", "what", "how", "why", "ever"}
)
_LINK_WORD = re.compile(r"[\w']+|&")
# A passive that dates its event or names another doer reports the world, not an act of
# the agent: "released on YouTube on June 8, 2012", "published by Nature in 2020".
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_WORLD_EVENT = re.compile(
    r"\b(?:in|on|during|since|between|from|around|circa)\s+(?:the\s+)?"
    rf"(?:(?:early|late|mid)[- ]?)?(?:1[5-9]\d\d\b|20\d\d\b|{_MONTH}\s|(?:\w+\s)?"
    r"(?:week|month|year|decade|century|season|quarter)s?\b)",
    re.IGNORECASE,
)
# "by Nature", "by the authors": a doer named after the verb (not "by email", "by me").
_OTHER_DOER = re.compile(r"\bby\s+(?:(?:the|a|an)\s+\w|[A-Z])")
_EXISTENTIAL = re.compile(r"\bthere\s+(?:is|are|was|were|has been|have been|had been)\b", re.I)
_WORLD_WINDOW = 60
_CLAUSE_STOP = re.compile(r"[.;:!?\n]")
_GLUED_BEFORE = frozenset("_$@")
_GLUED_AFTER = frozenset("_([=")


class ClaimMatcher:
    """Compiled claim rules; `find(text)` returns every completion claim in order.

    English and German verbs are found in one scan of the lower-cased text (see
    `PhraseSets`); Chinese phrases and custom patterns are regular expressions.
    """

    def __init__(self, rules: ClaimRules) -> None:
        self.rules = rules
        self._en_words = {w: r for r in rules.rules for w in r.en}
        self._de_words = {w: r for r in rules.rules for w in r.de}
        self._zh_words = {w: r for r in rules.rules for w in r.zh}
        self._phrases = PhraseSets(self._en_words, self._de_words)
        words = list(self._zh_words)
        self._zh = re.compile(alternation(words)) if words else None
        self._extra = [(r, re.compile(p)) for r in rules.rules for p in r.patterns]

    def find(
        self, text: str, lower: str | None = None, code: list[tuple[int, int]] | None = None
    ) -> list[Claim]:
        """Claims in `text`; pass `lower` (`text.lowered(text)`) when it is at hand, and
        `code`, the sorted code regions of `text` (`code_regions`), where no claim is read."""
        lower = lowered(text) if lower is None else lower
        regions = code or []
        starts = [r[0] for r in regions]

        def prose(start: int, end: int) -> bool:
            return (
                not (regions and inside(regions, starts, start))
                and not _glued(text, start, end)
                and not _item_of_a_plan(text, start)
            )

        claims: list[Claim] = []
        english, german = self._phrases.find(lower, MAX_MATCHES_PER_PATTERN)
        for start, end, phrase in english:
            if not prose(start, end):
                continue
            claim = self._english(text, start, end, self._en_words[phrase])
            if claim is not None:
                claims.append(claim)
        for start, end, phrase in german:
            if not prose(start, end):
                continue
            claim = self._simple(text, start, end, self._de_words[phrase], _DE_BLOCK, window=60)
            if claim is not None:
                claims.append(_german_person(text, claim))
        if self._zh is not None and _CJK.search(text):
            for m in bounded_finditer(self._zh, text):
                if not prose(m.start(), m.end()):
                    continue
                rule = self._zh_words[m.group()]
                claim = self._simple(text, m.start(), m.end(), rule, _ZH_BLOCK, window=8)
                if claim is not None:
                    claims.append(claim)
        for rule, pattern in self._extra:
            for m in bounded_finditer(pattern, text):
                if not prose(m.start(), m.end()):
                    continue
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
        if BLOCKS_CLAIM.search(prefix) or _blocked_before_parenthesis(text, start - len(prefix)):
            return None
        first_person = _governed_by_first_person(prefix)
        if not first_person and _reports_the_world(text, prefix, end):
            return None
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


def _german_person(text: str, claim: Claim) -> Claim:
    """`claim` as not the agent's own act when its verb stands passive ("entfernt wurde",
    "wurde ... veröffentlicht") with no first-person subject in its clause."""
    prefix = text[claim.sentence.start : claim.start]
    if _DE_FIRST_PERSON.search(prefix):
        return claim
    if _DE_AUX_AFTER.match(text, claim.end) or _DE_AUX_BEFORE.search(prefix):
        return replace(claim, first_person=False)
    return claim


def _item_of_a_plan(text: str, position: int) -> bool:
    """The position is in an item of a list whose header looks ahead (`_FUTURE_HEADER`)."""
    if not is_list_item(text, position):
        return False
    header = list_header(text, position)
    return header is not None and _FUTURE_HEADER.search(header) is not None


def _glued(text: str, start: int, end: int) -> bool:
    """The word is part of an identifier: `downloaded_files`, `row.verified`, `verified=`."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if before in _GLUED_BEFORE or after in _GLUED_AFTER:
        return True
    return before == "." and start > 1 and (text[start - 2].isalnum() or text[start - 2] == "_")


def _governed_by_first_person(prefix: str) -> bool:
    """ "I have now pushed", "we fixed it and pushed": the first-person subject is the
    verb's own, not the subject of a verb before it ("we found that it was released")."""
    subjects = list(_EN_SUBJECT.finditer(prefix))
    if not subjects:
        return False
    words = _LINK_WORD.findall(prefix[subjects[-1].end() :].lower())
    if any(w in _SUBORDINATE for w in words):
        return False
    if len(words) <= _SUBJECT_LINK_WORDS and all(w in _SUBJECT_LINK for w in words):
        return True
    return bool(words) and words[-1] in _COORDINATION


def _reports_the_world(text: str, prefix: str, end: int) -> bool:
    """A statement about the world or the data rather than the agent's act: "there were no
    rainy days recorded", "released on YouTube in 2012", "published by Nature"."""
    if _EXISTENTIAL.search(prefix):
        return True
    stop = min(len(text), end + _WORLD_WINDOW)
    brk = _CLAUSE_STOP.search(text, end, stop)
    after = text[end : brk.start() if brk else stop]
    return _WORLD_EVENT.search(after) is not None or _OTHER_DOER.search(after) is not None


def _blocked_before_parenthesis(text: str, clause_start: int) -> bool:
    """The clause goes on before a parenthesis that cut it: "no rainy days (with at least
    0.5mm) recorded" is negated by the "no" before the parenthesis."""
    if clause_start <= 0 or text[clause_start - 1] != ")":
        return False
    opening = text.rfind("(", max(0, clause_start - 200), clause_start - 1)
    if opening < 0:
        return False
    return BLOCKS_CLAIM.search(clause_prefix(text, opening)) is not None
