"""Stalls: the turn ends on a promise to act and calls nothing.

"One moment, let me check." with zero tool calls leaves the user waiting for work that
will never happen. A question back to the user is not a stall, nor is a promise that
waits on the user ("I'll deploy once you confirm").

In a group chat the reply is not the end of the conversation: it goes to the group, whose
next speaker (another agent, or the same one called again) picks the promise up. So when
the turn's agent is one of several agents speaking in the conversation
(`Turn.participants`), a closing promise is a hand-over, not a stall. An agent alone with
the user, or a lead whose helpers it only called as tools, still stalls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..kinds import Kind
from ..model import Finding, Turn
from ..text import Sentence, is_question, sentences
from .base import NO_TOOL_CALLS, finding

_PROMISE = re.compile(
    r"\b(?:one moment|just a moment|a moment, please|give me (?:a|one) (?:moment|second|sec|"
    r"minute)|hold on|bear with me|stand by|checking now|working on it|on it now|"
    r"let me (?:quickly |just )?(?:check|look|see|verify|find|pull|get|fetch|run|review|"
    r"investigate|take a look|confirm|search|dig|query|retrieve|look up)|"
    r"i(?:'ll| will) (?:now |quickly |just )?(?:check|look into|look up|look|get back|verify|"
    r"investigate|find out|pull|fetch|run|review|confirm|search|dig|query|retrieve)|"
    r"i'm (?:now )?(?:checking|looking|pulling|fetching|running|verifying|investigating|"
    r"searching|on it)|"
    r"einen moment|moment bitte|kleinen moment|ich (?:schaue|sehe|prüfe|überprüfe|checke|"
    r"kümmere mich|suche)|lass(?:en sie)? mich (?:kurz |schnell )?(?:nachsehen|prüfen|schauen|"
    r"nachschauen|suchen))\b"
    r"|稍等|请稍候|请稍等|稍后回复|稍后答复|马上去?(?:查|看|检查|处理)|"
    r"让我(?:查|看|检查|确认|核实|搜索)|我(?:来|去|先|这就|马上)去?(?:查|看|检查|确认|核实|搜索)",
    re.IGNORECASE,
)
_WAITS_ON_USER = re.compile(
    r"\b(?:if|once|when|after|as soon as) you\b|\bsobald sie\b|\bwenn sie\b|您确认|你确认",
    re.IGNORECASE,
)


_TAIL = 1_000


class StallValidator:
    name = "stall"
    version = "1.1"
    kinds = frozenset({Kind.STALL})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if turn.executed_calls or not turn.reply.strip() or _in_group_chat(turn):
            return ()
        # Only the end of the reply matters; splitting just its tail keeps long replies cheap.
        offset = max(0, len(turn.reply) - _TAIL)
        sents = [
            Sentence(s.text, s.start + offset, s.end + offset)
            for s in sentences(turn.reply[offset:])
        ]
        if not sents or is_question(sents[-1].text):
            return ()
        # The promise must close the reply: in the last sentence, or just before a short
        # courtesy line ("Thanks for your patience."). A promise followed by an answer is fine.
        closing = sents[-1:]
        if len(sents) >= 2 and len(sents[-1].text.strip()) < 60 and ":" not in sents[-1].text:
            closing = sents[-2:]
        for sentence in closing:
            m = _PROMISE.search(sentence.text)
            if m is None or _WAITS_ON_USER.search(sentence.text) or is_question(sentence.text):
                continue
            lead = len(sentence.text) - len(sentence.text.lstrip())
            return [
                finding(
                    self,
                    Kind.STALL,
                    "the turn ends with a promise to act but made no tool call",
                    token=sentence.text.strip()[:160],
                    span=(sentence.start + lead, sentence.end),
                    nothing_checked=NO_TOOL_CALLS,
                )
            ]
        return ()


def _in_group_chat(turn: Turn) -> bool:
    """The turn's agent is one of several agents that speak in its conversation."""
    return turn.agent in turn.participants and any(p != turn.agent for p in turn.participants)
