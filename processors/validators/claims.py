"""Claims against the ledger: what the reply says was done vs what ran.

- `claim_without_tool`: a completion claim that no successful tool call of the session backs.
- `error_reported_as_success`: the matching tool call of the turn failed, yet the reply
  claims success (class 3). It replaces `claim_without_tool` for that claim.
- `summary_without_action`: a recap of work ("Summary of changes") in a turn with no call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..claim_rules import ClaimRules
from ..claims import BLOCKS_CLAIM as _BLOCKS_CLAIM
from ..claims import Claim, ClaimMatcher
from ..kinds import Kind
from ..limits import MAX_FINDINGS_PER_VALIDATOR, bounded_finditer
from ..model import Finding, ToolCall, Turn
from ..outcomes import call_failed, call_succeeded
from ..text import claim_scope, clause_prefix, is_question, sentence_around
from .base import finding

# These scan the lower-cased reply (Turn.reply_lower), so their literals are lower case.
_FAILURE_WORDS = re.compile(
    r"\b(?:fail\w*|error\w*|unable|couldn't|could not|can't|cannot|did not|didn't|wasn't|"
    r"weren't|not able|denied|rejected|forbidden|unauthori[sz]ed|problem|issue|unsuccessful|"
    r"fehlgeschlagen|fehler\w*|nicht|konnte|leider)\b|失败|错误|未能|无法|没有成功|出错"
)
_GENERIC_SUCCESS = re.compile(
    r"\b(?:successfully|succeeded|success|done|completed|all set|erfolgreich|erledigt|"
    r"geschafft|abgeschlossen)\b|成功|完成|搞定"
)
_SUMMARY_HEADING = re.compile(
    r"^[^\w\n]*(?:summary of (?:the )?(?:changes|work)|changes made|what i did|what i've done|"
    r"what i have done|what was done|work completed|completed (?:tasks|work)|"
    r"zusammenfassung der (?:änderungen|arbeit)|was ich (?:gemacht|getan) habe|"
    r"durchgeführte (?:änderungen|arbeiten)|vorgenommene änderungen|"
    r"变更摘要|修改摘要|变更总结|完成的工作|工作总结|我做了什么)",
    re.MULTILINE,
)
_COMPLETION_STATEMENT = re.compile(
    r"\b(?:i|we)(?:'ve| have)\s+(?:now\s+|successfully\s+)?(?:completed|finished|wrapped up)\b"
    r"|\bich habe\b[^.!?\n]{0,40}\b(?:abgeschlossen|fertiggestellt|erledigt)\b"
    r"|我已(?:经)?完成|已完成以下|已全部完成"
)


class ClaimValidator:
    name = "claims"
    version = "1.0"
    kinds = frozenset(
        {Kind.CLAIM_WITHOUT_TOOL, Kind.ERROR_REPORTED_AS_SUCCESS, Kind.SUMMARY_WITHOUT_ACTION}
    )

    def __init__(self, rules: ClaimRules) -> None:
        self._matcher = ClaimMatcher(rules)

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        out: list[Finding] = []
        succeeded = [
            c for c in (*turn.history_tool_calls, *turn.executed_calls) if call_succeeded(c)
        ]
        failed = [c for c in turn.executed_calls if _ran_and_failed(c)]
        seen: set[tuple[str, int]] = set()
        reported_states: dict[str, bool] = {}
        for claim in self._matcher.find(turn.reply, turn.reply_lower):
            if len(out) >= MAX_FINDINGS_PER_VALIDATOR:
                break
            key = (claim.rule.capability, claim.sentence.start)
            if key in seen or _backed(claim, succeeded, turn, reported_states):
                continue
            seen.add(key)
            scope_start, scope_end = claim_scope(turn.reply, claim.start, claim.end)
            if _FAILURE_WORDS.search(turn.reply_lower, scope_start, scope_end):
                continue  # the claim's own clause reports trouble: not a success claim
            failed_matching = [c for c in failed if claim.rule.backed_by(c.name)]
            out.append(_claim_finding(self, claim, failed_matching, succeeded))
        if failed and not any(f.kind is Kind.ERROR_REPORTED_AS_SUCCESS for f in out):
            generic = _generic_success(turn, failed)
            if generic is not None:
                out.append(_generic_finding(self, turn.reply, generic, failed))
        summary = _summary_without_action(turn)
        if summary is not None:
            out.append(
                finding(
                    self,
                    Kind.SUMMARY_WITHOUT_ACTION,
                    "the reply recaps work done, but this turn called no tool",
                    token=turn.reply[summary[0] : summary[1]].strip(),
                    span=summary,
                    checked_against=("no tool calls in this turn",),
                )
            )
        return out


def _ran_and_failed(call: ToolCall) -> bool:
    return (
        call.origin == "structured"
        and (call.result is not None or call.error)
        and call_failed(call)
    )


def _backed(
    claim: Claim, succeeded: list[ToolCall], turn: Turn, reported_states: dict[str, bool]
) -> bool:
    reading_counts = not claim.first_person
    if any(claim.rule.backed_by(c.name, reading_counts=reading_counts) for c in succeeded):
        return True
    if claim.first_person:
        return False
    # "The order has been cancelled" after a lookup that returned "cancelled" reports a
    # state the system recorded; it is not the agent claiming an act of its own.
    word = claim.phrase.lower()
    if word not in reported_states:
        reported_states[word] = _word_in(word, turn.evidence_lower)
    return reported_states[word]


def _word_in(word: str, haystack: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", haystack) is not None


def _claim_finding(
    validator: ClaimValidator, claim: Claim, failed: list[ToolCall], succeeded: list[ToolCall]
) -> Finding:
    sentence = claim.sentence
    token = claim.phrase
    span = (sentence.start + _lead(sentence.text), sentence.end)
    if failed:
        names = tuple(dict.fromkeys(c.name for c in failed))
        return finding(
            validator,
            Kind.ERROR_REPORTED_AS_SUCCESS,
            f"the reply claims '{claim.phrase}' ({claim.rule.capability}) but "
            f"{', '.join(names)} failed in this turn",
            token=token,
            span=span,
            checked_against=names,
            call_id=failed[0].call_id or None,
        )
    ran = tuple(dict.fromkeys(c.name for c in succeeded)) or ("no successful tool call",)
    return finding(
        validator,
        Kind.CLAIM_WITHOUT_TOOL,
        f"the reply claims '{claim.phrase}' ({claim.rule.capability}) but no successful "
        "tool call of this session can back it",
        token=token,
        span=span,
        checked_against=ran,
    )


def _generic_success(turn: Turn, failed: list[ToolCall]) -> tuple[int, int] | None:
    """A bare "Done!"/"erfolgreich"/"成功" after a failed call that nothing retried."""
    retried = {c.name for c in turn.executed_calls if call_succeeded(c)}
    if all(c.name in retried for c in failed) or _FAILURE_WORDS.search(turn.reply_lower):
        return None
    for m in bounded_finditer(_GENERIC_SUCCESS, turn.reply_lower):
        sentence = sentence_around(turn.reply, m.start())
        if not is_question(sentence.text):
            return (sentence.start + _lead(sentence.text), sentence.end)
    return None


def _generic_finding(
    validator: ClaimValidator, reply: str, span: tuple[int, int], failed: list[ToolCall]
) -> Finding:
    names = tuple(dict.fromkeys(c.name for c in failed))
    return finding(
        validator,
        Kind.ERROR_REPORTED_AS_SUCCESS,
        f"the reply reports success but {', '.join(names)} failed and the reply does not say so",
        token=reply[span[0] : span[1]].strip()[:160],
        span=span,
        checked_against=names,
        call_id=failed[0].call_id or None,
    )


def _summary_without_action(turn: Turn) -> tuple[int, int] | None:
    if turn.executed_calls:
        return None
    m = _SUMMARY_HEADING.search(turn.reply_lower) or _completion_statement(turn.reply_lower)
    if m is None:
        return None
    line_end = turn.reply.find("\n", m.end())
    return (m.start() + _lead(m.group()), len(turn.reply) if line_end == -1 else line_end)


def _completion_statement(reply: str) -> re.Match[str] | None:
    """ "I've completed ..." as an assertion, not inside "Once I've completed ..."."""
    for m in bounded_finditer(_COMPLETION_STATEMENT, reply):
        if not _BLOCKS_CLAIM.search(clause_prefix(reply, m.start())):
            return m
    return None


def _lead(text: str) -> int:
    return len(text) - len(text.lstrip())
