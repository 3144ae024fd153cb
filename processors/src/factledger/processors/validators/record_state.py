"""Mirror drift for values: the reply gives an object a state its record contradicts.

"Order #W2378156 has been delivered" while the turn's latest `get_order_details` of that
order says `"status": "processed"`. The object exists and the reply names it rightly; the
value it reports is not the one the tool recorded.

What counts as evidence (`processors.evidence.record_states`): the latest call of the
turn that says something about the object, a record of it (`status`/`state` beside its id)
or an action on it (a successful `cancel_order` with its id moves it to "cancelled"). The
reply contradicts it when it attributes a state to the object (a copula before the state
word, "(Delivered)", "status: delivered", "the delivered order #W1") in a sentence that
names the object's id (the nearest id to the word), or that speaks of "the order" while
the turn has one object only; when that state is none the last action moved it to; and
when the pair is one of the explicit incompatible ones (`contradicts`). A state the reply
only anticipates, conditions or denies ("will be shipped", "can't be cancelled", "has not
been delivered", a question) is no attribution.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..evidence.record_states import (
    REPLY_STATE_WORDS,
    ObjectEvent,
    contradicts,
    object_events,
)
from ..kinds import Kind
from ..limits import MAX_FINDINGS_PER_VALIDATOR
from ..model import Finding, Turn
from ..text import Sentence, sentence_around
from .base import finding

_CJK_WORDS = [w for w in REPLY_STATE_WORDS if w[0] >= "\u3000"]
# A word stands alone (no letter, digit, `_` or `-` on either side). Each word opens its
# own alternative, its boundary checked behind it: a pattern whose every alternative
# starts with a letter lets `re` skip to the characters that can start one, where a
# leading lookbehind makes it try every position of the reply.
_STATE_WORD = re.compile(
    "|".join(
        rf"{re.escape(w)}(?<![\w-]{re.escape(w)})(?![\w-])"
        for w in sorted((w for w in REPLY_STATE_WORDS if w not in _CJK_WORDS), key=len)[::-1]
    )
    + "|"
    + "|".join(_CJK_WORDS)
)
# Before the word: a copula or auxiliary (with adverbs between), an opening label.
_ATTRIBUTED_BEFORE = re.compile(
    r"(?:\b(?:is|are|was|were|been|got|shows?|showing|marked|listed|status|ist|sind|war|"
    r"waren|wurde|wurden|status)\b(?:\s+(?:as|als|already|now|still|successfully|just|"
    r"fully|bereits|schon|jetzt|erfolgreich|inzwischen|of|is|currently|derzeit))*"
    r"|[(:])[\s\"'*`“]*\Z"
)
# After the word: "in 'delivered' status", "the pending order", "ist storniert worden".
_ATTRIBUTED_AFTER = re.compile(r"\A[\s\"'*`”]*(?:status\b|state\b|worden\b|\))", re.IGNORECASE)
_NOT_ATTRIBUTED = re.compile(
    r"\b(?:will|would|can|could|cannot|can't|should|shall|may|might|must|to be|not|n't|"
    r"never|once|if|when|whether|after|until|unless|before|eligible|only|wird|werden|kann|"
    r"können|soll|sollte|muss|nicht|kein\w*|sobald|wenn|falls|nachdem|bevor|erst|nur)\b"
    r"|未|不|没|将|会|可以|如果"
)
_CLAUSE_EDGE = re.compile(r"[,;，；]|\s(?:but|however|aber|jedoch|while|whereas)\s|但")
_THE_OBJECT = re.compile(
    r"\b(?:your|the|this|that|ihre|die|diese|deine)\s+(?:order|bestellung|ticket|pull request|"
    r"issue|invoice|rechnung)(?![\w-])|(?:您的|该|这个)订单"
)
_ID_SHAPE = re.compile(r"#\s?\w+|\b[a-z]*\d[\w-]*")
_BEFORE = 48
_AFTER = 24
_MAX_WORDS = 200


class RecordStateValidator:
    name = "record_state"
    version = "1.0"
    kinds = frozenset({Kind.CONTRADICTED_RECORD_STATE})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if not turn.tool_results_text:
            return ()
        attributed = []
        for word in list(_STATE_WORD.finditer(turn.reply_lower))[:_MAX_WORDS]:
            sentence = sentence_around(turn.reply, word.start())
            if _attributed(turn.reply_lower, sentence, word):
                attributed.append((word, sentence))
        if not attributed:
            return ()  # before the records are read: most replies attribute no state
        events = object_events(turn)
        if not events:
            return ()
        mentions = _id_mentions(turn.reply_lower, events)
        out: list[Finding] = []
        for word, sentence in attributed:
            if len(out) >= MAX_FINDINGS_PER_VALIDATOR:
                break
            claimed = REPLY_STATE_WORDS[word.group()]
            object_id = _object_of(turn.reply_lower, sentence, word, mentions, events)
            if object_id is None:
                continue
            latest = _latest(events[object_id])
            recorded = next((e for e in reversed(latest) if e.recorded is not None), None)
            if recorded is None or recorded.recorded is None:
                continue
            if any(e.moved_to == claimed for e in latest):
                continue
            if not contradicts(claimed, recorded.recorded):
                continue
            out.append(
                finding(
                    self,
                    Kind.CONTRADICTED_RECORD_STATE,
                    f"the reply says `{object_id}` is {claimed}, but the latest "
                    f"`{recorded.tool}` result of this turn records it as {recorded.recorded}",
                    token=turn.reply[word.start() : word.end()],
                    span=(word.start(), word.end()),
                    checked_against=(recorded.tool,),
                    checked_note=f"{object_id}: {recorded.recorded}",
                )
            )
        return out


def _attributed(lower: str, sentence: Sentence, word: re.Match[str]) -> bool:
    """The reply attributes the state word to something now, not as a plan, a condition, a
    denial or a question."""
    if sentence.text.rstrip().endswith("?"):
        return False
    start = max(sentence.start, word.start() - _BEFORE)
    before = lower[start : word.start()]
    after = lower[word.end() : min(sentence.end, word.end() + _AFTER)]
    if not word.group().isascii():
        attributed = True  # 已发货: the marker of a done state is part of the word
    else:
        attributed = bool(_ATTRIBUTED_BEFORE.search(before) or _ATTRIBUTED_AFTER.match(after))
    if not attributed:
        return False
    edges = list(_CLAUSE_EDGE.finditer(lower, sentence.start, word.start()))
    clause = lower[edges[-1].end() if edges else sentence.start : word.start()]
    return _NOT_ATTRIBUTED.search(clause) is None


def _id_mentions(lower: str, events: dict[str, list[ObjectEvent]]) -> list[tuple[int, str]]:
    """(offset, id) of each recorded id the reply names: an id with a letter as it stands,
    a number only after `#` (a bare number is more often a price or a count)."""
    found: list[tuple[int, str]] = []
    for object_id in events:
        # A plain search per id: a pattern built from each turn's ids would be compiled
        # anew for every turn (the ids never repeat), which cost more than all the rest.
        at = lower.find(object_id)
        while at != -1:
            end = at + len(object_id)
            if not _word_char(lower, end, extra="" if object_id.isdigit() else "-"):
                if object_id.isdigit():
                    hash_at = at - 2 if at >= 2 and lower[at - 1].isspace() else at - 1
                    if hash_at >= 0 and lower[hash_at] == "#":
                        found.append((hash_at, object_id))
                elif not _word_char(lower, at - 1, extra="-"):
                    found.append((at, object_id))
            at = lower.find(object_id, at + 1)
    return sorted(found)


def _word_char(text: str, index: int, *, extra: str) -> bool:
    """`text[index]` exists and is a word character (or one of `extra`)."""
    if index < 0 or index >= len(text):
        return False
    char = text[index]
    return char.isalnum() or char == "_" or char in extra


def _object_of(
    lower: str,
    sentence: Sentence,
    word: re.Match[str],
    mentions: list[tuple[int, str]],
    events: dict[str, list[ObjectEvent]],
) -> str | None:
    """The object a state word is about: the nearest recorded id of its sentence (one
    before it on a tie); else, with no id-shaped token in the sentence, the turn's one
    recorded object when the sentence speaks of "the order"."""
    inside = [(at, i) for at, i in mentions if sentence.start <= at < sentence.end]
    if inside:
        return min(inside, key=lambda m: (abs(m[0] - word.start()), m[0] > word.start()))[1]
    recorded = [i for i, evs in events.items() if any(e.recorded for e in evs)]
    text = lower[sentence.start : sentence.end]
    if len(recorded) != 1 or _ID_SHAPE.search(text) or not _THE_OBJECT.search(text):
        return None
    return recorded[0]


def _latest(events: list[ObjectEvent]) -> list[ObjectEvent]:
    """The events of the latest call about the object, and the actions after its latest
    record (an action after a read moves the object on)."""
    last_record = max((e.position for e in events if e.recorded is not None), default=-1)
    return [e for e in events if e.position >= last_record]
