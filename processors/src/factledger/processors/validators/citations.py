"""Citations: of tools and of sources.

- `citation_unregistered_tool`: "(via NAME)", "I used NAME", "my NAME call" for a tool the
  agent was not offered.
- `citation_uncalled_tool`: the cited tool was offered but not called in this turn.
- `unfetched_citation`: a source (URL or source id) cited as evidence that no fetch-type
  tool of the session retrieved (`processors.evidence.fetches`). Search results are not evidence:
  a URL seen only in a search result's snippet was never read. A plain link list relays
  what a tool showed: a URL in it is backed by any tool result of the session that holds
  it. URLs in code and URLs given as a place to go ("Go to …") are not cited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..claims import BLOCKS_CLAIM
from ..code_regions import in_spans, reply_code_spans
from ..evidence.fetches import fetched_text, session_fetches
from ..identifiers import Shape, is_place_to_go
from ..kinds import Kind
from ..limits import bounded_finditer
from ..model import Finding, Turn
from ..text import clause_prefix, is_list_item, list_header
from .base import NO_FETCH, NO_TOOL_CALLS, NO_TOOLS_OFFERED, finding

# Tool citations, matched on the lower-cased reply (names are then cut from the original).
# A leading word is written as its first letter and a lookbehind for the word start
# ("m(?<!\wm)y" for "\bmy"): the pattern then opens on a character, so `re` skips ahead to
# it instead of trying every position of the reply.
_NAME = r"`?(?P<name>[a-z_][\w.\-:/]*[\w])`?"
_TOOL_CITATIONS = [
    re.compile(rf"\(\s*via\s+{_NAME}(?:[^()\n]{{0,80}})\)"),
    re.compile(
        rf"(?:i(?<!\wi)|w(?<!\ww)e)\s+(?:have\s+|just\s+|then\s+)?(?:used|called|invoked|ran|queried|"
        rf"consulted)\s+(?:the\s+)?{_NAME}(?P<tool>\s+(?:tool|function|api|command|endpoint))?"
    ),
    re.compile(rf"m(?<!\wm)y\s+{_NAME}\s+(?:tool\s+)?(?:call|query|lookup|request|invocation)\b"),
    re.compile(rf"u(?<!\wu)sing\s+(?:the\s+)?{_NAME}(?P<tool>\s+(?:tool|function))\b"),
    re.compile(
        rf"(?:m(?<!\wm)it|ü(?<!\wü)ber|p(?<!\wp)er)\s+(?:dem\s+)?{_NAME}"
        r"(?P<tool>[- ](?:tool|werkzeug))\b"
    ),
    re.compile(rf"m(?<!\wm)ein(?:em|en)?\s+{_NAME}[- ]?(?:aufruf|call|tool-call)\b"),
    re.compile(rf"(?:使用|调用)了?\s*{_NAME}\s*(?P<tool>工具|接口|函数)?"),
]
# Words each citation pattern cannot match without, in the same order.
_NEEDLES = [
    ("via",),
    ("used", "called", "invoked", "ran", "queried", "consulted"),
    ("my",),
    ("using",),
    ("tool", "werkzeug"),
    ("mein",),
    ("使用", "调用"),
]
_GENERIC_NAMES = frozenset(
    {
        "tool",
        "tools",
        "api",
        "function",
        "the",
        "it",
        "this",
        "that",
        "them",
        "email",
        "e-mail",
        "phone",
        "chat",
        "slack",
        "web",
        "search",
        "python",
        "bash",
        "git",
        "a",
        "an",
    }
)
# Contrast or advice right before a cited name: it says the agent did not use it.
_NOT_USED = re.compile(
    r"(?:\binstead\s+of|\brather\s+than|\bwithout|\bin\s+place\s+of|\bavoid|\banstatt|"
    r"\bstatt|\bohne|而不是|不用|不要)\s+(?:\w+\s+){0,2}\W{0,2}$"
)
# A "Sources:" section: every URL after it is cited. Scans the lower-cased reply.
_SOURCES_SECTION = re.compile(
    r"^[^\w\n]*(?:sources?|references?|citations?|quellen?|belege?|literatur|来源|"
    r"参考(?:资料|文献)?|引用)\s*[:：]",
    re.MULTILINE,
)
# A cue right before a URL ("according to https://..."); read only in front of candidates.
_CITATION_CUE = re.compile(
    r"\baccording to\b|\bsource:|\bcited?\b|\bsee\b|\bper\b|\blaut\b|\bgemäß\b|\bsiehe\b"
    r"|根据|参见|见"
)
_CUE_WINDOW = 40
# A footnote line ("[2] https://…"); a numbered line ("2. https://…") is one when the text
# before it carries its marker "[2]", else it is an item of a link list.
_FOOTNOTE = re.compile(r"\s*\[\d+\]")
_NUMBERED = re.compile(r"\s*(\d+)[.)]\s")
_SOURCE_ID = re.compile(r"src_(?<![\w-]src_)\d{2,}(?![\w-])")
# Words that list a source as something to look up ("Sources to consult:", "check …",
# "zu prüfen"), read on the URL's line before it and in its list's header.
_TO_LOOK_UP = re.compile(
    r"\b(?:look(?:ed)?\s+up|to\s+(?:consult|check|use|visit|search|browse|verify|open|read)|"
    r"consult|check|use|visit|search|browse|verify|open|nachschlagen|nachsehen|"
    r"prüf\w*|nutze\w*|verwende\w*|besuche\w*)\b|查阅|查看|访问"
)


@dataclass(frozen=True)
class _Cited:
    name: str
    start: int
    end: int
    explicit_tool: bool
    via: bool
    library: bool = False
    """Cited as "using the NAME function": a library function unless NAME is offered."""


class CitationValidator:
    name = "citations"
    version = "1.0"
    kinds = frozenset(
        {Kind.CITATION_UNREGISTERED_TOOL, Kind.CITATION_UNCALLED_TOOL, Kind.UNFETCHED_CITATION}
    )

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        return [*self._tool_citations(turn), *self._source_citations(turn)]

    def _tool_citations(self, turn: Turn) -> list[Finding]:
        offered = {n.lower(): n for n in turn.offered_tool_names or ()}
        called = {c.name.lower() for c in turn.executed_calls}
        # A member of the conversation that is no tool spoke in it: its messages are the
        # source "(via WebSurfer)" cites, not a call the trace lacks.
        members = {n.lower() for n in (*turn.participants, turn.agent) if n}
        out: list[Finding] = []
        seen: set[str] = set()
        code = reply_code_spans(turn)
        for cited in _cited_tools(turn.reply, turn.reply_lower):
            if in_spans(code, cited.start):
                continue  # a name in code the reply hands to a tool is code
            prefix = clause_prefix(turn.reply_lower, cited.start)
            if not cited.via and BLOCKS_CLAIM.search(prefix):
                continue  # "I'll check it using the run_tests tool" names a plan, not a source
            if _NOT_USED.search(prefix):
                continue  # "instead of using X" says X was not the source
            name = _resolve(cited.name, offered)
            key = name.lower()
            if key in seen or key in _GENERIC_NAMES:
                continue
            if cited.library and key not in offered:
                continue  # "using the geodesic function": a function the code called
            if not (cited.explicit_tool or key in offered or _tool_shaped(cited.name)):
                continue
            seen.add(key)
            if key in called or (key in members and key not in offered):
                continue
            span = (cited.start, cited.end)
            if turn.tools is not None and key not in offered:
                out.append(
                    finding(
                        self,
                        Kind.CITATION_UNREGISTERED_TOOL,
                        f"the reply cites tool `{name}`, which was not offered to the agent",
                        token=name,
                        span=span,
                        checked_against=sorted(offered.values()),
                        nothing_checked=NO_TOOLS_OFFERED,
                    )
                )
            else:
                out.append(
                    finding(
                        self,
                        Kind.CITATION_UNCALLED_TOOL,
                        f"the reply cites tool `{name}`, which was not called in this turn",
                        token=name,
                        span=span,
                        checked_against=sorted({c.name for c in turn.executed_calls}),
                        nothing_checked=NO_TOOL_CALLS,
                    )
                )
        return out

    def _source_citations(self, turn: Turn) -> list[Finding]:
        cited = cited_sources(turn)
        if not cited:
            return []
        fetches = session_fetches(turn)
        read = fetched_text(fetches)
        out = []
        for token, start, end, relayed in cited:
            needle = token.lower().rstrip("/")
            if needle in read:
                continue
            if relayed and needle in turn.evidence_lower:
                continue  # a link list relays what a tool of the session showed
            out.append(
                finding(
                    self,
                    Kind.UNFETCHED_CITATION,
                    f"the reply cites `{token}` as a source, but no fetch of this session "
                    "retrieved it",
                    token=token,
                    span=(start, end),
                    checked_against=(c.name for c in fetches),
                    nothing_checked=NO_FETCH,
                )
            )
        return out


def _cited_tools(reply: str, lower: str) -> list[_Cited]:
    found = []
    for pattern, needles in zip(_TOOL_CITATIONS, _NEEDLES, strict=True):
        if not any(n in lower for n in needles):
            continue  # a substring test is far cheaper than a regex scan of a long reply
        for m in bounded_finditer(pattern, lower):
            explicit = "tool" in m.groupdict() and m.group("tool") is not None
            explicit = explicit or m.group().lstrip().startswith("(") or "`" in m.group()
            start, end = m.start("name"), m.end("name")
            via = pattern is _TOOL_CITATIONS[0]
            library = pattern is _TOOL_CITATIONS[3] and m.group("tool").strip() == "function"
            found.append(_Cited(reply[start:end], start, end, explicit, via, library))
    found.sort(key=lambda c: c.start)
    return found


def _resolve(name: str, offered: dict[str, str]) -> str:
    """Match `functions.gh_read_file` or `gh_read_file:` to the offered `gh_read_file`."""
    stripped = name.strip(":/.")
    if stripped.lower() in offered:
        return offered[stripped.lower()]
    tail = re.split(r"[.:/]", stripped)[-1]
    return offered.get(tail.lower(), stripped)


def _tool_shaped(name: str) -> bool:
    return "_" in name or "." in name.strip(".") or re.search(r"[a-z][A-Z]", name) is not None


def _prescribed_to_look_up(turn: Turn, url: str, start: int) -> bool:
    """A source the request prescribed, listed as something to look up ("Sources to
    consult: <url>", "1. Look up the figures on <url>"): the agent repeats its brief, it
    cites nothing. The same URL cited as the source of a statement ("according to <url>")
    has no such words before it and stays a citation."""
    if url.lower().rstrip("/") not in turn.given_lower:
        return False
    lower = turn.reply_lower
    line_start = lower.rfind("\n", 0, start) + 1
    if _CITATION_CUE.search(lower, max(line_start, start - _CUE_WINDOW), start) and not (
        _TO_LOOK_UP.search(lower, max(line_start, start - _CUE_WINDOW), start)
    ):
        return False  # "…, according to <url>": the statement's source
    if _TO_LOOK_UP.search(lower, line_start, start):
        return True
    header = list_header(lower, start) if is_list_item(lower, start) else None
    return header is not None and _TO_LOOK_UP.search(header) is not None


def cited_sources(turn: Turn) -> tuple[tuple[str, int, int, bool], ...]:
    """URLs and source ids that the reply offers as evidence: (token, start, end, relayed),
    `relayed` for a URL that only a plain list item offers (a link list, not a citation
    of a page's content). Found once per turn: the evidence rows back the same ones."""
    return turn.derived(_cited_sources)


def _cited_sources(turn: Turn) -> tuple[tuple[str, int, int, bool], ...]:
    reply, lower = turn.reply, turn.reply_lower
    urls = [i for i in turn.reply_identifiers if i.shape is Shape.URL]
    candidates = [(m.group(), m.start(), m.end()) for m in bounded_finditer(_SOURCE_ID, reply)]
    if urls:
        code = reply_code_spans(turn)
        candidates += [
            (i.text, i.start, i.end)
            for i in urls
            if not in_spans(code, i.start)
            and not is_place_to_go(lower, i)
            and not _prescribed_to_look_up(turn, i.text, i.start)
        ]
    if not candidates:
        return ()
    section = _SOURCES_SECTION.search(lower)
    out = []
    for token, start, end in candidates:
        line_start = reply.rfind("\n", 0, start) + 1
        in_section = section is not None and start > section.start()
        numbered = _NUMBERED.match(reply, line_start)
        footnote = _FOOTNOTE.match(reply, line_start) is not None or (
            numbered is not None and f"[{numbered.group(1)}]" in reply[:line_start]
        )
        near_cue = _CITATION_CUE.search(lower, max(0, start - _CUE_WINDOW), start) is not None
        if in_section or footnote or near_cue or token.startswith("src_"):
            out.append((token, start, end, False))
        elif numbered is not None:
            out.append((token, start, end, True))
    return tuple(out)
