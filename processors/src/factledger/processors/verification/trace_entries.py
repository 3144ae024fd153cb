"""The entries of a directory listing, read from the shapes tools print them in.

A listing tool's result is one of: a JSON array of names or paths, or of objects with a
`name`/`path` (and `type`, `is_dir`, `children` for a tree such as MCP's
`directory_tree`); a JSON object holding such a list under `files`, `directories`,
`entries`, `items`, `children`, ... (or text under `content`/`output`); MCP filesystem
lines (`[FILE] a.py`, `[DIR] sub`); `ls -l` lines; `tree` output with its box-drawing
prefixes; `find` output (`./a/b.py`); or one name or path a line.

`Entries.understood` is False when some line or item was not read as an entry, a header
or a summary: the tool printed something this module does not know, so its output is
not taken as the whole listing. `Entries.paged` is True when the structure itself says
there is more (`has_more`, a non-empty cursor, a `total` above the count). Truncation
said in words (`...`, `(and 12 more)`) is `truncation_marked`'s, read on the raw text.
Nothing here does I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from factledger.processors.evidence.outcomes import structured_payload

MAX_ENTRIES = 20_000
"""Entries read from one result; a longer listing is read no further and not complete."""
MAX_NESTING = 32
"""Levels of a JSON tree or of wrappers that are followed."""


@dataclass
class Entries:
    """Entry paths as printed (`./` and a trailing `/` dropped), each with whether it is a
    directory (None: the output does not say)."""

    kinds: dict[str, bool | None] = field(default_factory=dict)
    understood: bool = True
    paged: bool = False

    def add(self, path: str, is_dir: bool | None) -> None:
        if len(self.kinds) >= MAX_ENTRIES:
            self.understood = False
            return
        cleaned = _clean(path)
        if is_dir is None and path.rstrip().endswith("/"):
            is_dir = True
        if not cleaned:
            return
        if self.kinds.get(cleaned) is None:
            self.kinds[cleaned] = is_dir


def parse_entries(text: str, *, classify_marks: bool = False) -> Entries:
    """The entries of a listing's result text. `classify_marks`: the output carries `ls
    -F` marks (`*`, `@`, `=`, `|` after a name) to drop."""
    entries = Entries()
    _read_text(text, entries, 0, classify_marks)
    return entries


def _clean(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return "" if path == "." else path.rstrip("/")


# --- structured results -------------------------------------------------------------------

_FILE_LISTS = ("files", "file_list", "filenames")
_DIR_LISTS = ("directories", "dirs", "folders", "subdirectories")
_ANY_LISTS = (
    "entries",
    "items",
    "children",
    "contents",
    "results",
    "paths",
    "listing",
    "tree",
    "matches",
)
_TEXT_KEYS = ("content", "output", "result", "text", "stdout", "data")
_NAME_KEYS = ("path", "name", "file", "filename", "file_path", "relative_path", "filepath")
_DIR_TYPES = frozenset({"dir", "directory", "folder", "tree", "d"})
_FILE_TYPES = frozenset({"file", "blob", "f", "symlink", "link"})
_DIR_FLAGS = ("is_dir", "isdir", "is_directory", "isdirectory", "directory")
_CURSOR_KEYS = (
    "next_page",
    "next_cursor",
    "nextcursor",
    "cursor",
    "next_page_token",
    "nextpagetoken",
    "next",
    "continuation_token",
)
_MORE_FLAGS = ("has_more", "hasmore", "truncated", "is_truncated", "istruncated", "incomplete")
_TOTAL_KEYS = ("total", "total_count", "totalcount", "total_entries", "count")
_METADATA_KEYS = frozenset(
    {*_CURSOR_KEYS, *_MORE_FLAGS, *_TOTAL_KEYS, "path", "directory", "root", "type", "ok"}
)
"""Keys beside a listing's list that describe the listing, not entries."""


def _read_text(text: str, entries: Entries, depth: int, marks: bool) -> None:
    payload = structured_payload(text)
    if payload is None:
        _read_lines(text, entries, marks)
    else:
        _read_value(payload, entries, "", depth)


def _read_value(value: Any, entries: Entries, parent: str, depth: int) -> None:
    if depth > MAX_NESTING:
        entries.understood = False
    elif isinstance(value, list):
        for item in value:
            _read_item(item, entries, parent, depth + 1, None)
    elif isinstance(value, dict):
        _read_object(value, entries, parent, depth)
    else:
        entries.understood = False


def _read_object(obj: dict[Any, Any], entries: Entries, parent: str, depth: int) -> None:
    lowered = {str(k).lower(): v for k, v in obj.items()}
    if any(lowered.get(k) is True for k in _MORE_FLAGS) or any(
        lowered.get(k) not in (None, "", False, 0) for k in _CURSOR_KEYS
    ):
        entries.paged = True
    read = 0
    for key, is_dir in (
        *((k, False) for k in _FILE_LISTS),
        *((k, True) for k in _DIR_LISTS),
        *((k, None) for k in _ANY_LISTS),
    ):
        items = lowered.get(key)
        if isinstance(items, list):
            read += 1
            for item in items:
                _read_item(item, entries, parent, depth + 1, is_dir)
    for key in _TEXT_KEYS:
        inner = lowered.get(key)
        if isinstance(inner, str):
            read += 1
            _read_text(inner, entries, depth + 1, False)
        elif isinstance(inner, list | dict):
            read += 1
            _read_value(inner, entries, parent, depth + 1)
    if not read:
        entries.understood = False
        return
    total = next((lowered[k] for k in _TOTAL_KEYS if isinstance(lowered.get(k), int)), None)
    if total is not None and total > len(entries.kinds):
        entries.paged = True


def _read_item(item: Any, entries: Entries, parent: str, depth: int, is_dir: bool | None) -> None:
    if isinstance(item, str):
        entries.add(_join(parent, item), is_dir)
        return
    if not isinstance(item, dict):
        entries.understood = False
        return
    lowered = {str(k).lower(): v for k, v in item.items()}
    if isinstance(lowered.get("type"), str) and "text" in lowered and not parent:
        # A content block (MCP, Anthropic): its text is the listing.
        text = lowered["text"]
        if isinstance(text, str):
            _read_text(text, entries, depth, False)
            return
    # Nested nodes are named relative to their parent; a top-level `path` is the whole path.
    keys = (*_NAME_KEYS[1:], "path") if parent else _NAME_KEYS
    name = next((lowered[k] for k in keys if isinstance(lowered.get(k), str)), None)
    if name is None:
        entries.understood = False
        return
    kind = _kind_of(lowered, is_dir)
    children = lowered.get("children")
    if isinstance(children, list):
        kind = True
    path = _join(parent, name)
    entries.add(path, kind)
    if isinstance(children, list) and depth <= MAX_NESTING:
        for child in children:
            _read_item(child, entries, _clean(path), depth + 1, None)


def _kind_of(lowered: dict[str, Any], default: bool | None) -> bool | None:
    for key in ("type", "kind", "entry_type"):
        value = lowered.get(key)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _DIR_TYPES:
                return True
            if word in _FILE_TYPES:
                return False
    for key in _DIR_FLAGS:
        flag = lowered.get(key)
        if isinstance(flag, bool):
            return flag
    if lowered.get("is_file") is True or lowered.get("isfile") is True:
        return False
    return default


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name.lstrip('/')}" if parent else name


# --- text results -------------------------------------------------------------------------

_MCP_LINE = re.compile(r"\[(FILE|DIR)\][ \t]+(.+?)(?:[ \t]{2,}.*)?$")
_LS_LONG = re.compile(
    r"([\-dlcbps])[rwxsStT\-]{9}[@+.]?[ \t]+\d+[ \t]+\S+[ \t]+\S+[ \t]+[\d,.]+[KMGT]?[ \t]+"
    r"\w{3}[ \t]+\d{1,2}[ \t]+(?:\d{1,2}:\d{2}|\d{4})[ \t]+(.+)$"
)
_NAME = re.compile(r"[^\s\"'<>|:*?]+/?")
_SUMMARY = re.compile(
    r"(?:total[ \t]+\d+|total:.*|combined size:.*|\d+ director(?:y|ies)(?:, \d+ files?)?|"
    r"\d+ files?|showing (?:the )?(?:first )?\d+ of \d+\b.*)$",
    re.IGNORECASE,
)
_TREE_BRANCH = re.compile(r"((?:[│|] {3}| {4})*)(?:[├└]──|[|`]--) (.*)$")


def _read_lines(text: str, entries: Entries, marks: bool) -> None:
    # `tree` pads its prefixes with no-break spaces in UTF-8 locales.
    text = text.replace("\u00a0", " ").replace("\r\n", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    lines = [line for line in lines if line.strip()]
    if lines and lines[0].endswith(":") and " " in lines[0].strip():
        lines = lines[1:]  # a header: "Contents of tests/:"
    if any(_TREE_BRANCH.match(line) for line in lines[:8]):
        _read_tree(lines, entries)
        return
    for line in lines:
        stripped = line.strip()
        if _SUMMARY.match(stripped):
            continue
        mcp = _MCP_LINE.match(stripped)
        if mcp is not None:
            entries.add(mcp.group(2), mcp.group(1) == "DIR")
            continue
        long = _LS_LONG.match(stripped)
        if long is not None:
            name = long.group(2).split(" -> ", 1)[0]
            entries.add(name, long.group(1) == "d")
            continue
        if marks:
            stripped = stripped.rstrip("*@=|")
        if _NAME.fullmatch(stripped):
            entries.add(stripped, None)
        else:
            entries.understood = False


def _read_tree(lines: list[str], entries: Entries) -> None:
    """`tree` output: the first unprefixed line is the listed directory; each branch's
    depth is its prefix's width over four."""
    stack: list[str] = []
    for number, line in enumerate(lines):
        branch = _TREE_BRANCH.match(line)
        if branch is None:
            if number == 0 or _SUMMARY.match(line.strip()):
                continue
            entries.understood = False
            continue
        level = len(branch.group(1)) // 4
        name = branch.group(2).split(" -> ", 1)[0].strip()
        if level > len(stack):
            entries.understood = False
            continue
        del stack[level:]
        # `tree -f` prints each entry's whole path.
        path = name if "/" in name.rstrip("/") else "/".join([*stack, _clean(name)])
        if stack:
            entries.kinds["/".join(stack)] = True
        entries.add(path, True if name.endswith("/") else None)
        stack.append(_clean(name))


# --- truncation said in words -------------------------------------------------------------

_TRUNCATION = re.compile(
    r"\.\.\.|…|truncat|\band \d+ more\b|\(\d+ more\)|\+\d+ more\b|\d+ more (?:files|entries|"
    r"items|results|lines|directories)|more files|more entries|limit reached|"
    r"(?:output|result|listing) (?:is )?too (?:long|large)|too many (?:files|entries|results)|"
    r"\bomitted\b|has_?more\W{0,3}true|"
    r"\b(?:next[_ ]?(?:page|cursor)(?:[_ ]?token)?|nextpagetoken|cursor)\b\W{0,3}"
    r"(?!(?:null|none|nil|false)\b)[\w\-]",
    re.IGNORECASE,
)
_SHOWING = re.compile(r"\bshowing (?:the )?(?:first )?(\d+) of (\d+)", re.IGNORECASE)


def truncation_marked(text: str) -> bool:
    """Whether the text says the listing was cut short (see the module docstring)."""
    if _TRUNCATION.search(text):
        return True
    return any(int(m.group(1)) < int(m.group(2)) for m in _SHOWING.finditer(text))
