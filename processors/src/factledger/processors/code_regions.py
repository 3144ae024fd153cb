"""Where a reply holds code rather than prose: the regions a claim is never read in.

Code the model writes is tool input, not a report of what happened: `downloaded_files =
download(...)` inside a code block is no "I downloaded". A region is:

- a fenced block (``` or ~~~, to its closing fence or the end of the reply);
- an HTML `<code>` or `<pre>` element;
- an inline code span (`` `verified_rows` ``), within one line;
- an indented block: lines indented by four spaces or a tab after a blank line, unless
  the paragraph they continue is a list (nested list content is prose);
- a line that is one of the lines of the code a call of the turn was handed to run
  (`code_lines`): the reply quoting the code it handed to an executor.

Every scan is one linear pass; regions come back sorted and disjoint enough for
`inside`, which only needs their starts ordered.

Identifiers and citations read code more narrowly (`code_spans`): only fenced blocks
marked as a program or run by a call of the turn, since an unmarked block may be pasted
tool output whose identifiers the reply presents as existing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .limits import bounded_finditer
from .model import Turn

_FENCED = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.M | re.S)
_HTML = re.compile(r"<(code|pre)\b[^>]{0,200}>.*?(?:</\1>|\Z)", re.S | re.I)
_INLINE = re.compile(r"`[^`\n]{1,400}`")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•]|\d{1,3}[.)])\s")
_CODE_KEYS = ("code", "command", "cmd", "script", "source", "commands")
MIN_CODE_LINE = 8
"""Shorter lines (`else:`, `}`) say nothing about where they came from."""


def code_regions(text: str, code_lines: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """[start, end) offsets of the code in `text`, sorted by start."""
    regions: list[tuple[int, int]] = []
    if "```" in text or "~~~" in text:
        regions.extend(m.span() for m in bounded_finditer(_FENCED, text))
    if "<" in text:
        regions.extend(m.span() for m in bounded_finditer(_HTML, text))
    if "`" in text:
        regions.extend(m.span() for m in bounded_finditer(_INLINE, text))
    regions.extend(_indented(text, code_lines))
    regions.sort()
    return regions


def inside(regions: list[tuple[int, int]], starts: list[int], position: int) -> bool:
    """Whether `position` falls in one of `regions` (`starts` are their starts, in order).
    Regions may nest (inline code inside a fence), so the few before it are looked at."""
    at = bisect.bisect_right(starts, position)
    return any(regions[i][1] > position for i in range(max(0, at - 4), at))


def code_lines_of(calls: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The stripped lines of the code handed to calls (`code`, `command`, `script` …
    arguments), as a set to look reply lines up in."""
    lines: set[str] = set()
    for arguments in calls:
        for key in _CODE_KEYS:
            value = arguments.get(key)
            if isinstance(value, str):
                lines.update(
                    s
                    for s in (line.strip() for line in value.splitlines())
                    if len(s) >= MIN_CODE_LINE
                )
    return frozenset(lines)


def _indented(text: str, code_lines: frozenset[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    previous_blank = True
    in_list = False
    in_block = False
    position = 0
    for line in text.splitlines(keepends=True):
        start, position = position, position + len(line)
        body = line.rstrip("\r\n")
        stripped = body.strip()
        if not stripped:
            previous_blank = True
            continue
        indented = body.startswith(("    ", "\t"))
        if indented and (in_block or (previous_blank and not in_list)):
            in_block = True
            out.append((start, position))
        else:
            in_block = False
            if not indented:
                in_list = _LIST_ITEM.match(body) is not None
            if code_lines and len(stripped) >= MIN_CODE_LINE and stripped in code_lines:
                out.append((start, position))
        previous_blank = False
    return out


# --- code the reply hands to a tool (identifiers and citations) --------------------------

_BLOCK = re.compile(r"```[ \t]*([\w+#.\-]*)[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
CODE_LANGUAGES = frozenset(
    {
        *("python", "py", "python3", "ipython", "pycon", "sh", "bash", "shell", "zsh", "fish"),
        *("powershell", "ps1", "pwsh", "bat", "cmd", "javascript", "js", "jsx", "typescript"),
        *("ts", "tsx", "node", "go", "golang", "rust", "rs", "java", "kotlin", "kt", "scala"),
        *("c", "cpp", "c++", "cc", "h", "hpp", "cs", "csharp", "swift", "ruby", "rb", "php"),
        *("perl", "pl", "lua", "r", "julia", "matlab", "sql", "psql", "mysql", "sqlite"),
        *("plsql", "dockerfile", "makefile", "make", "groovy", "dart", "haskell", "elixir"),
        *("erlang", "clojure"),
    }
)
"""Info strings that mark a fenced block as code: a program, a command or a query."""


def code_spans(text: str, ran: Sequence[str] = ()) -> list[tuple[int, int]]:
    """(start, end) of each fenced block of `text` that is code a tool is given to run.

    A block is code when its info string names a language of `CODE_LANGUAGES`, or when
    its body is in `ran`, the string arguments of the turn's tool calls (a code executor
    that runs the reply's blocks). A block with no language that nothing ran, or one
    marked `text`, `output`, `json` …, may be pasted tool output: it is not code here.
    """
    if "```" not in text:
        return []
    out: list[tuple[int, int]] = []
    for m in bounded_finditer(_BLOCK, text):
        language = m.group(1).lower()
        if language in CODE_LANGUAGES or (not language and _was_run(m.group(2), ran)):
            out.append((m.start(), m.end()))
    return out


def _was_run(body: str, ran: Sequence[str]) -> bool:
    head = body.strip()[:200]
    return bool(head) and any(head in argument for argument in ran)


def in_spans(spans: Sequence[tuple[int, int]], position: int) -> bool:
    """True when `position` falls in one of the sorted, disjoint `spans`."""
    at = bisect.bisect_right(spans, position, key=lambda span: span[0]) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


def reply_code_spans(turn: Turn) -> list[tuple[int, int]]:
    """`code_spans` of the reply, with the string arguments of the turn's calls as `ran`."""
    if "```" not in turn.reply:
        return []
    ran = [
        value
        for call in turn.tool_calls
        for value in call.arguments.values()
        if isinstance(value, str) and value
    ]
    return code_spans(turn.reply, ran)
