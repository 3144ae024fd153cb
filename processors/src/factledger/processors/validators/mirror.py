"""Mirror drift: something real reported as missing.

"`build_registry` is not defined in app.py" while the read_file result of this turn shows
`def build_registry(cfg):`. The opposite of a fabrication, invisible to token checks
because there is no fake token.

What shows a name: a tool result of the turn that contains it, read per result. A
structured result (JSON or a Python literal) is read as its values and keys, at any depth
of its arrays and objects, so a `"errors": []` beside a listed name does not hide it;
values under error keys describe a failure, not what exists. What does not: a result that
reports the name missing. A not-found error in any common form (`FileNotFoundError`, "No
such file or directory", a `NameError`'s "is not defined", HTTP 404, "not found", "does
not exist") that names it makes its other mentions in that result the attempt (the code
line of the traceback, the requested URL), not evidence; a structured error payload that
is a not-found shows nothing. Such a result supports "X does not exist / is not
available".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..codeish import code_names
from ..evidence.outcomes import result_is_error, structured_payload
from ..identifiers import extract_identifiers
from ..kinds import Kind
from ..limits import MAX_FINDINGS_PER_VALIDATOR, MAX_MATCHES_PER_PATTERN
from ..model import Finding, Turn
from ..text import PhraseMatcher, sentence_around
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
    r"(?:has|have|had|contains?) no|hat kein\w*|enthält kein\w*|"
    r"can't find|cannot find|did not find|didn't find|found no|unable to find|"
    r"es gibt kein\w*|konnte \w+ nicht finden|kein\w* \w+ namens)\b|没有找到|没有",
)
# Words without which neither pattern can match: found by a cheap word scan, they point
# at the few sentences worth the full patterns.
_TRIGGERS = PhraseMatcher(
    [
        "not",
        "no",
        "never",
        "missing",
        "cannot",
        "couldn't",
        "can't",
        "didn't",
        "doesn't",
        "don't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "unable",
        "nicht",
        "kein",
        "keine",
        "keinen",
        "keiner",
        "keinem",
        "keines",
        "fehlt",
    ]
)
_CJK_TRIGGERS = ("不存在", "未定义", "没有", "找不到", "未找到")
_MAX_SENTENCES = 200
_CJK = re.compile(r"[\u4e00-\u9fff]")
_CLAUSE_EDGE = re.compile(r"[,;:，；：、]|\s(?:but|only|aber|nur)\s|只有|但是?|现有")
# A name introduced by its kind: "the table rechnungen", "Funktion foo", "load_user 函数".
# A generic noun after the kind is a compound ("file path", "table name"), not a name.
_KIND_NOUN = re.compile(
    r"\b(?:table|function|file|class|method|module|column|field|variable|key|index|branch|"
    r"tag|bucket|queue|topic|order|tabelle|funktion|datei|klasse|methode|spalte|feld|"
    r"schlüssel|zweig|bestellung)\s+[`'\"]?"
    r"(?!(?:paths?|names?|types?|formats?|contents?|size|system|extensions?|list|structure|"
    r"location|data|upload|viewer|reader|number|id|status|details?|pfad|namen?|inhalt)\b)"
    r"(?P<after>[\w.\-/#]+)"
    r"|(?P<before>[A-Za-z_][\w.\-/]*)\s*(?:表|函数|文件|类|方法|字段|列|分支)",
    re.IGNORECASE,
)
_RESULT_NEGATION = re.compile(
    r"not found|no such|does not exist|doesn't exist|no match|no results|0 results|"
    r"not defined|undefined|unknown|missing|error|nicht gefunden|不存在|未找到",
)


class MirrorDriftValidator:
    name = "mirror"
    version = "1.1"
    kinds = frozenset({Kind.NEGATED_EXISTING_IDENTIFIER})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if not turn.tool_results_text:
            return ()
        evidence: _Evidence | None = None
        out: list[Finding] = []
        seen: set[str] = set()
        examined: set[int] = set()
        for position in _negation_positions(turn.reply_lower):
            if len(out) >= MAX_FINDINGS_PER_VALIDATOR:
                break
            sentence = sentence_around(turn.reply, position)
            if sentence.start in examined:
                continue
            if len(examined) >= _MAX_SENTENCES:
                break  # each negated sentence costs a name scan; real replies have a few
            examined.add(sentence.start)
            lower = turn.reply_lower[sentence.start : sentence.end]
            evidence = evidence or _Evidence(turn)
            subject = next(
                (
                    s
                    for s in _negated_subjects(sentence.text, lower)
                    if s[0].lower() not in seen and evidence.shows(s[0].lower())
                ),
                None,
            )
            if subject is None:
                continue
            name, start, end = subject
            key = name.lower()
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


def negated_mentions(reply: str, reply_lower: str) -> Iterator[tuple[str, int, int]]:
    """The name each negated sentence of the reply is about (the nearest to its negation),
    as (text, start, end) in reply offsets, whether or not a tool result shows it: what a
    source of truth could settle (`processors.verification.subjects`)."""
    examined: set[int] = set()
    for position in _negation_positions(reply_lower):
        sentence = sentence_around(reply, position)
        if sentence.start in examined:
            continue
        if len(examined) >= _MAX_SENTENCES:
            return
        examined.add(sentence.start)
        lower = reply_lower[sentence.start : sentence.end]
        for name, start, end in _negated_subjects(sentence.text, lower)[:1]:
            yield name, sentence.start + start, sentence.start + end


def _negated_subjects(sentence: str, lower: str) -> list[tuple[str, int, int]]:
    """Names a negation may be about, nearest first, within the negation's own clause:
    before "does not exist", after "there is no", on either side in Chinese."""
    found: list[tuple[str, int, int]] = []
    for m in _NEGATION_AFTER.finditer(lower):
        start = _clause_start(lower, m.start())
        found.extend(reversed(_names(sentence, start, m.start())))
        if _CJK.match(m.group()):
            found.extend(_names(sentence, m.end(), _clause_end(lower, m.end())))
    for m in _NEGATION_BEFORE.finditer(lower):
        found.extend(_names(sentence, m.end(), _clause_end(lower, m.end())))
    return found


def _names(sentence: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """Code names, identifiers and nouns named by their kind ("the table rechnungen",
    "load_user 函数") in sentence[start:end], as (text, start, end) in sentence offsets."""
    part = sentence[start:end]
    spans = {(n.text, n.start, n.end) for n in code_names(part, snake_case=True)}
    spans.update((i.text, i.start, i.end) for i in extract_identifiers(part))
    for m in _KIND_NOUN.finditer(part):
        group = "after" if m.group("after") else "before"
        spans.add((m.group(group), m.start(group), m.end(group)))
    return [(text, start + s, start + e) for text, s, e in sorted(spans, key=lambda x: x[1])]


def _negation_positions(lower: str) -> Iterator[int]:
    for start, _, _ in _TRIGGERS.finditer(lower, MAX_MATCHES_PER_PATTERN):
        yield start
    for trigger in _CJK_TRIGGERS:
        at = lower.find(trigger)
        while at != -1:
            yield at
            at = lower.find(trigger, at + len(trigger))


def _clause_start(lower: str, position: int) -> int:
    breaks = list(_CLAUSE_EDGE.finditer(lower, 0, position))
    return breaks[-1].end() if breaks else 0


def _clause_end(lower: str, position: int) -> int:
    brk = _CLAUSE_EDGE.search(lower, position)
    return brk.start() if brk else len(lower)


_NOT_FOUND = re.compile(
    r"not found|no such|does not exist|doesn't exist|not defined|no module named|"
    r"filenotfounderror|modulenotfounderror|\b404\b|cannot find|could not find|"
    r"unable to find|no matches|nicht gefunden|existiert nicht|不存在|未找到|找不到",
)
"""A result's words for "that is missing": they name the thing the call failed to find."""
_ERROR_VALUE_KEYS = frozenset(
    {"error", "errors", "error_message", "exception", "fault", "detail", "traceback"}
)
_WINDOW = 80
MAX_RESULT_STRINGS = 20_000
"""Strings (values and keys) read from one structured result; past it the rest is unread."""


class _Evidence:
    """The turn's tool results as mirror drift reads them (built once per turn, lazily)."""

    def __init__(self, turn: Turn) -> None:
        self._results: list[tuple[str, list[str]]] = []
        for call in turn.tool_calls:
            if call.result is None or call.answer or not call.result.strip():
                continue
            lower = call.result.lower()
            payload = structured_payload(call.result)
            if payload is None:
                self._results.append((lower, [lower]))
            elif not (result_is_error(call.result) and _NOT_FOUND.search(lower)):
                self._results.append((lower, _strings(payload)))

    def shows(self, name: str) -> bool:
        """Some result shows the name and none of its mentions there reports it missing."""
        for lower, strings in self._results:
            if name not in lower:
                continue
            shown = False
            for window in _windows(strings, name):
                if _NOT_FOUND.search(window):
                    shown = False  # the result reports it missing
                    break
                shown = shown or not _RESULT_NEGATION.search(window)
            if shown:
                return True
        return False


MAX_MENTIONS = 200
"""Mentions of one name read per result: enough to meet its not-found message."""


def _windows(strings: list[str], name: str) -> Iterator[str]:
    """The text around each mention of the name, at most `MAX_MENTIONS`."""
    count = 0
    for text in strings:
        position = text.find(name)
        while position != -1 and count < MAX_MENTIONS:
            count += 1
            yield text[max(0, position - _WINDOW) : position + len(name) + _WINDOW]
            position = text.find(name, position + len(name))


def _strings(payload: object) -> list[str]:
    """Lower-cased keys and string values of a structured result at any depth, without the
    values under error keys (they describe a failure, not what exists)."""
    out: list[str] = []
    stack = [payload]
    while stack and len(out) < MAX_RESULT_STRINGS:
        value = stack.pop()
        if isinstance(value, str):
            out.append(value.lower())
        elif isinstance(value, dict):
            for key, item in value.items():
                key_text = str(key).lower()
                out.append(key_text)
                if key_text not in _ERROR_VALUE_KEYS:
                    stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(str(value))
    return out
