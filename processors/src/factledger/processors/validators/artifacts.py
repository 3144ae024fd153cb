"""A presupposed artefact (`presupposed_artifact`): the reply refers to a file the session
never made.

"Let's examine the downloaded PDF", "the saved report shows", "the file I saved": each
presupposes a download or a save. The system's record must hold one, in this turn or in
the session's history (`Turn.history_tool_calls`). Evidence that it happened, from a call
of this turn (failed or not: the reply speaks of what its own call was to make) or a
successful call of the history, any of:

- a tool whose name says it downloads, saves, writes or exports;
- a result that records a file ("saved to", "downloaded to", "written to", a path or a
  file name with an extension);
- code the call ran that downloads or writes a file (`urlretrieve`, `to_csv`,
  `open(…, "w")`, `wget`, `curl -o`, `.save(`, a `download` function);

or a file the user or the system prompt gave (an attachment, a path with an extension).

Not a finding: the words inside code, a download still to come or supposed ("once
downloaded", "the file to be saved", "for example, the saved report would …"), a negated
one ("I haven't downloaded the PDF"), a question, and files the user downloaded ("the
file you downloaded").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..code_regions import code_lines_of, code_regions, inside
from ..kinds import Kind
from ..model import Finding, ToolCall, Turn
from ..text import sentence_around
from .base import finding

_NOUN = (
    r"(?:pdfs?|files?|reports?|images?|pictures?|photos?|documents?|csvs?|spreadsheets?|"
    r"datasets?|data\s+set|videos?|audio|recordings?|transcripts?|web\s*pages?|pages?|"
    r"archives?|zip|screenshots?|workbooks?|copy|copies)"
)
_DE_NOUN = r"(?:datei\w*|pdfs?|bericht\w*|dokument\w*|bild\w*|tabelle\w*|csv|report\w*|video\w*)"
_ACTED = r"(?:downloaded|saved|stored|exported|written|fetched)"
_PRESUPPOSED = re.compile(
    rf"\b(?:the|this|that|these|those|my|our)\s+(?:(?:just|previously|already|recently|newly)\s+)?"
    rf"{_ACTED}\s+(?:[\w-]+\s+){{0,2}}?{_NOUN}\b"
    rf"|\b{_NOUN}\s+(?:that\s+|which\s+)?(?:i|we)(?:'ve|\s+have|\s+had)?\s+(?:just\s+|already\s+)?"
    r"(?:downloaded|saved|stored|exported|wrote|written)\b"
    r"|\b(?:die|der|das|den|dem|meine[nrm]?|unsere[nrm]?)\s+(?:bereits\s+|soeben\s+|zuvor\s+)?"
    rf"(?:heruntergeladen|gespeichert|exportiert|abgelegt)en?\s+(?:\w+\s+)?{_DE_NOUN}"
    rf"|\b{_DE_NOUN},?\s+(?:die|den|das)\s+(?:ich|wir)\s+(?:\w+\s+)?"
    r"(?:heruntergeladen|gespeichert|abgelegt|exportiert)\s+(?:habe|haben)\b",
    re.IGNORECASE,
)
_STEMS = ("download", "saved", "stored", "exported", "written", "wrote", "fetched")
_STEMS_DE = ("heruntergeladen", "gespeichert", "exportiert", "abgelegt")
# The download is still to come, hypothetical, denied, or was the user's.
_NOT_DONE = re.compile(
    r"\b(?:once|after|when|if|as\s+soon\s+as|until|before|sobald|nachdem|wenn|falls)\b"
    r"|\b(?:to\s+be|will\s+be|would\s+be|must\s+be|needs?\s+to\s+be|should\s+be|soll|wird)\s+"
    r"(?:\w+\s+)?(?:downloaded|saved|stored|exported|written|heruntergeladen|gespeichert)"
    r"|\b(?:would|could|might|for\s+example|for\s+instance|e\.g\.|würde\w*|könnte\w*|"
    r"zum\s+beispiel|z\.\s?b\.)"
    r"|\b(?:no|not|never|haven't|hasn't|didn't|wasn't|weren't|without|kein\w*|nicht|nie)\b"
    r"|\byou(?:'ve|\s+have)?\s+(?:\w+\s+)?(?:downloaded|saved)|\b(?:sie|du)\s+(?:\w+\s+)?"
    r"(?:heruntergeladen|gespeichert)",
    re.IGNORECASE,
)
_SAVING_TOOL = re.compile(
    r"download|save|write|export|store|upload|wget|curl|fetch_file|create_file|put_file|"
    r"write_file|screenshot|record",
    re.IGNORECASE,
)
_FILE_RECORD = re.compile(
    r"\b(?:saved|downloaded|written|stored|exported|wrote)\s+(?:to|as|in|at|into)\b"
    r"|\bdownload(?:ed)?\s+(?:complete|completed|successful|finished|succeeded)\b"
    r"|\bgespeichert\b|\bheruntergeladen\b"
    r"|[\w\-./\\]+\.(?:pdf|csv|tsv|xlsx?|json|txt|md|html?|png|jpe?g|gif|svg|mp[34]|wav|"
    r"webm|docx?|pptx?|zip|tar|gz|parquet|xml)\b",
    re.IGNORECASE,
)
_SAVING_CODE = re.compile(
    r"download|urlretrieve|to_(?:csv|excel|json|parquet|pickle)\(|savefig\(|\.save\(|"
    r"\.write(?:_text|_bytes)?\(|open\([^)]*['\"][wax]b?\+?['\"]|\bwget\b|\bcurl\b[^\n]*\s-[oO]\b|"
    r"shutil\.copy|\bcp\s|\bmv\s",
    re.IGNORECASE,
)


class ArtifactValidator:
    name = "artifacts"
    version = "1.0"
    kinds = frozenset({Kind.PRESUPPOSED_ARTIFACT})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        lower = turn.reply_lower
        if not any(stem in lower for stem in (*_STEMS, *_STEMS_DE)):
            return ()  # a substring test spares the scans of a reply that presupposes nothing
        mention = _presupposed(turn.reply)
        if mention is None or _recorded(turn):
            return ()
        start, end = mention
        calls = [c.name for c in (*turn.history_tool_calls, *turn.tool_calls) if not c.answer]
        return (
            finding(
                self,
                Kind.PRESUPPOSED_ARTIFACT,
                f"the reply refers to `{turn.reply[start:end]}`, but no tool of the session "
                "recorded a download or a save",
                token=turn.reply[start:end],
                span=(start, end),
                checked_against=calls,
                nothing_checked="no tool calls in this session",
            ),
        )


def _presupposed(reply: str) -> tuple[int, int] | None:
    """The first mention, in prose, of a file the reply takes as downloaded or saved."""
    regions = code_regions(reply)
    starts = [start for start, _ in regions]
    for m in _PRESUPPOSED.finditer(reply):
        if inside(regions, starts, m.start()):
            continue
        sentence = sentence_around(reply, m.start())
        if sentence.text.rstrip().endswith("?"):
            continue
        if _NOT_DONE.search(reply, sentence.start, sentence.end) is None:
            return m.start(), m.end()
    return None


def _recorded(turn: Turn) -> bool:
    """Whether the session's record or what others gave holds a file. A failed call of
    this turn counts: a failure reported as success is class 3's finding, not this one."""
    if _FILE_RECORD.search(turn.given_lower):
        return True
    if any(_records_file(c) for c in turn.executed_calls):
        return True
    return any(_records_file(c) for c in _successful(turn.history_tool_calls))


def _successful(calls: Iterable[ToolCall]) -> Iterable[ToolCall]:
    for call in calls:
        if call.origin == "structured" and not call.answer and not call.error:
            yield call


def _records_file(call: ToolCall) -> bool:
    if _SAVING_TOOL.search(call.name):
        return True
    if call.result is not None and _FILE_RECORD.search(call.result):
        return True
    return any(_SAVING_CODE.search(line) for line in code_lines_of([call.arguments]))
