"""Mirror drift (seed 000's "Spiegel-Drift"): something real reported as missing.

"`build_registry` is not defined in app.py" while the read_file result of this turn shows
`def build_registry(cfg):`. The opposite of a fabrication, invisible to token checks
because there is no fake token. Clean when the tool result itself says the name was not
found (a search that came back empty).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..codeish import code_names
from ..kinds import Kind
from ..limits import MAX_FINDINGS_PER_VALIDATOR, bounded_finditer
from ..model import Finding, Turn
from ..text import sentence_around
from .base import finding

# Both scan the lower-cased reply. "X does not exist", "X is not defined": the subject
# stands before the phrase.
_NEGATION_AFTER = re.compile(
    r"\b(?:does not|doesn't|did not|didn't|do not|don't)\s+(?:exist|appear|show up)|"
    r"\b(?:is|are|was|were)(?: not|n't)\s+(?:defined|present|there|found|declared|listed|"
    r"included|available|in\b)|\bcannot be found|\bcan't be found|\bcould not be found|"
    r"\bis missing|\bare missing|\bno longer exists|"
    r"\b(?:existiert|existieren|gibt es) (?:nicht|kein)|\bist nicht (?:definiert|vorhanden)|"
    r"\bwurde nicht gefunden|\bfehlt\b|不存在|未定义|没有定义|找不到|未找到",
)
# "There is no X", "I couldn't find X": the subject follows the phrase.
_NEGATION_BEFORE = re.compile(
    r"\b(?:there is no|there's no|there are no|no such|couldn't find|could not find|"
    r"can't find|cannot find|did not find|didn't find|found no|unable to find|"
    r"es gibt kein\w*|konnte \w+ nicht finden|kein\w* \w+ namens)\b|没有找到|没有",
)
_ANY_NEGATION = re.compile(f"{_NEGATION_AFTER.pattern}|{_NEGATION_BEFORE.pattern}")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_RESULT_NEGATION = re.compile(
    r"not found|no such|does not exist|doesn't exist|no match|no results|0 results|"
    r"not defined|undefined|unknown|missing|error|nicht gefunden|不存在|未找到",
)


class MirrorDriftValidator:
    name = "mirror"
    version = "1.0"
    kinds = frozenset({Kind.NEGATED_EXISTING_IDENTIFIER})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if not turn.tool_results_text:
            return ()
        evidence = ""
        out: list[Finding] = []
        seen: set[str] = set()
        examined: set[int] = set()
        for negation in bounded_finditer(_ANY_NEGATION, turn.reply_lower):
            if len(out) >= MAX_FINDINGS_PER_VALIDATOR:
                break
            sentence = sentence_around(turn.reply, negation.start())
            if sentence.start in examined:
                continue
            examined.add(sentence.start)
            lower = turn.reply_lower[sentence.start : sentence.end]
            subject = _negated_subject(sentence.text, lower)
            if subject is None:
                continue
            evidence = evidence or turn.tool_results_text.lower()
            name, start, end = subject
            key = name.lower()
            if key in seen or not _shown_by_tools(key, evidence):
                continue
            seen.add(key)
            out.append(
                finding(
                    self,
                    Kind.NEGATED_EXISTING_IDENTIFIER,
                    f"the reply says `{name}` does not exist, but a tool result of this turn "
                    "shows it",
                    token=name,
                    span=(sentence.start + start, sentence.start + end),
                    checked_against=tuple(
                        dict.fromkeys(
                            c.name for c in turn.tool_calls if c.result and key in c.result.lower()
                        )
                    ),
                )
            )
        return out


def _negated_subject(sentence: str, lower: str) -> tuple[str, int, int] | None:
    """The name a negation is about: the last name before "does not exist", or the first
    name after "there is no"."""
    boundary = 0
    for m in _NEGATION_AFTER.finditer(lower):
        before = code_names(sentence[boundary : m.start()], snake_case=True)
        if before:
            n = before[-1]
            return n.text, boundary + n.start, boundary + n.end
        if _CJK.match(m.group()):
            # Chinese puts the subject on either side: "不存在 X 函数" and "X 不存在".
            after = code_names(sentence[m.end() : m.end() + 60], snake_case=True)
            if after:
                n = after[0]
                return n.text, m.end() + n.start, m.end() + n.end
        boundary = m.end()
    for m in _NEGATION_BEFORE.finditer(lower):
        after = code_names(sentence[m.end() : m.end() + 80], snake_case=True)
        if after:
            n = after[0]
            return n.text, m.end() + n.start, m.end() + n.end
    return None


def _shown_by_tools(name: str, evidence: str) -> bool:
    """The name occurs in a tool result, and not merely inside a "not found" message."""
    position = evidence.find(name)
    while position != -1:
        window = evidence[max(0, position - 80) : position + len(name) + 80]
        if not _RESULT_NEGATION.search(window):
            return True
        position = evidence.find(name, position + 1)
    return False
