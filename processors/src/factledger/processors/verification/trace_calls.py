"""What a turn's own calls showed of its files: listings, searches and reads.

Each call of the turn that listed a directory, searched files or read one becomes an
`Observation` (see `processors.verification.trace_source` for the rules that say what
one settles). Tools are known by name (the part after an MCP server's prefix, camelCase
read as snake_case: `mcp__fs__list_directory`, `LS`, `Glob`), and a shell tool by its
command when that is one plain `ls`, `find`, `tree`, `cat` or `grep`/`rg` (no pipe, no
`;`, `&&`, redirection or substitution: what else ran could have changed the output).

A call that may have changed files (a write, edit, move or delete tool, a shell command
that is no plain listing) is a `change`: observations made before it are not used.
Nothing here does I/O.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from factledger.processors.evidence.call_reach import call_kind
from factledger.processors.evidence.failure_text import opens_with_error
from factledger.processors.evidence.outcomes import call_succeeded
from factledger.processors.model import ToolCall, Turn
from factledger.processors.verification.trace_entries import (
    Entries,
    parse_entries,
    truncation_marked,
)

ObservationKind = Literal["listing", "search", "read"]


@dataclass(frozen=True)
class Observation:
    """What one successful call showed. Paths are relative to the repository root (the
    agent's working directory), "" being the root itself; absolute when the call named
    absolute ones. `path` is the directory listed or searched, or the file read.
    `entries` are a listing's, relative to `path`, with the directories their paths
    imply; each says whether it is a directory (None: the output does not say).
    """

    call: ToolCall
    kind: ObservationKind
    path: str
    entries: Mapping[str, bool | None]
    shown: frozenset[str]
    """Root-relative paths the call shows to exist."""
    complete: bool
    """A listing that shows every entry in its scope (see the rules)."""
    depth: int | None = None
    """Levels below `directory` the listing reaches; None: every level."""
    scope: Callable[[str], bool] | None = None
    """A glob or `find -name` listing: the relative paths it speaks about."""
    shows_files: bool = True
    shows_dirs: bool = True
    unfiltered: bool = False
    """Hidden and commonly ignored names would be listed (`ls -a`, `find`, `tree -a`)."""
    text: str = ""
    """A read's or a search's result: the file text definitions are looked for in."""


def turn_observations(turn: Turn) -> tuple[Observation, ...]:
    """The observations of this turn's calls that no later call may have invalidated.
    Calls of earlier turns are not read: files may have changed since."""
    calls = turn.executed_calls
    found: list[tuple[int, Observation]] = []
    last_change = -1
    change_steps: set[int] = set()
    for index, call in enumerate(calls):
        observation = observe(call)
        if observation is not None:
            found.append((index, observation))
        elif changes_files(call):
            last_change = index
            change_steps.add(call.step)
    steps_known = bool(turn.steps)
    return tuple(
        o
        for index, o in found
        if index > last_change and not (steps_known and o.call.step in change_steps)
    )


def observe(call: ToolCall) -> Observation | None:
    """What the call shows, or None when it is no listing, search or read, or failed."""
    if not call_succeeded(call) or not (call.result or "").strip():
        return None
    tool = tool_name(call.name)
    if tool in _EDITOR_TOOLS:  # its `command` argument is a verb, no shell command
        view = call.arguments.get("command") == "view"
        return _observe_read(call, _argument(call.arguments, _FILE_KEYS)) if view else None
    command = _shell_command(call)
    if command is not None:
        return _observe_command(call, command)
    if tool in _LISTING_TOOLS:
        return _observe_listing(call, tool)
    if tool in _SEARCH_TOOLS:
        return _observe_search(call, _argument(call.arguments, _DIR_KEYS) or "")
    if tool in _READ_TOOLS:
        return _observe_read(call, _argument(call.arguments, _FILE_KEYS))
    return None


def changes_files(call: ToolCall) -> bool:
    """A call that may have changed the files (see the module docstring)."""
    if observe(call) is not None:
        return False
    if call_kind(call, None) == "executor":
        return True
    return _CHANGING.search(tool_name(call.name)) is not None


def tool_name(name: str) -> str:
    """`mcp__filesystem__list_directory` → `list_directory`, `ListFiles` → `list_files`."""
    tail = re.split(r"__|[.:/]", name)[-1]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tail).lower().replace("-", "_")


# --- by tool name ------------------------------------------------------------------------

_LISTING_TOOLS = frozenset(
    {
        "ls",
        "tree",
        "glob",
        "glob_files",
        "glob_search",
        "find_files",
        "list_files",
        "list_dir",
        "list_dirs",
        "list_directory",
        "list_directories",
        "list_directory_with_sizes",
        "list_directory_contents",
        "list_folder",
        "list_folder_contents",
        "directory_tree",
        "dir_tree",
        "file_tree",
        "get_file_tree",
        "get_directory_tree",
    }
)
_TREE_TOOLS = frozenset(
    {"tree", "directory_tree", "dir_tree", "file_tree", "get_file_tree", "get_directory_tree"}
)
_GLOB_TOOLS = frozenset({"glob", "glob_files", "glob_search", "find_files"})
_SEARCH_TOOLS = frozenset(
    {
        "grep",
        "rg",
        "ripgrep",
        "grep_search",
        "search_files",
        "search_code",
        "code_search",
        "codebase_search",
        "find_in_files",
        "search_in_files",
        "search_text",
        "text_search",
        "file_search",
    }
)
_READ_TOOLS = frozenset(
    {
        "read",
        "read_file",
        "read_text_file",
        "read_file_content",
        "file_read",
        "readfile",
        "view_file",
        "open_file",
        "get_file",
        "get_file_contents",
        "show_file",
        "cat",
    }
)
_EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
_CHANGING = re.compile(
    r"write|edit|creat|delet|remov|move|renam|mkdir|patch|apply|save|touch|replace|insert|"
    r"upload|append|updat|modif|generat|checkout|commit|reset|restor|clone|pull|merge|revert|"
    r"stash|extract|unzip|copy|^(?:rm|mv|cp|git)$"
)

_DIR_KEYS = (
    "path",
    "dir",
    "directory",
    "root",
    "folder",
    "cwd",
    "relative_path",
    "target_directory",
    "relative_workspace_path",
    "dir_path",
    "directory_path",
    "base_path",
)
_FILE_KEYS = ("path", "file_path", "filepath", "file", "filename", "target_file", "relative_path")
_PATTERN_KEYS = ("pattern", "glob", "glob_pattern", "name_pattern")
_RECURSIVE_KEYS = ("recursive", "recursion", "recurse")
_DEPTH_KEYS = ("max_depth", "maxdepth", "depth", "level", "levels")
_LIMIT_KEYS = (
    "limit",
    "max_results",
    "head_limit",
    "max_entries",
    "max_files",
    "max_items",
    "page_size",
    "per_page",
)
_PAGE_KEYS = ("page", "offset", "skip", "cursor", "page_token", "start")


def _argument(arguments: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _number(arguments: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
    return None


def _observe_listing(call: ToolCall, tool: str) -> Observation | None:
    arguments = call.arguments
    directory = _argument(arguments, _DIR_KEYS) or "."
    pattern = _argument(arguments, _PATTERN_KEYS)
    scope: Callable[[str], bool] | None = None
    if tool in _GLOB_TOOLS:
        if pattern is None:
            return _observe_search(call, directory)  # a fuzzy name search, no listing
        base, rest = _glob_base(pattern)
        if base:
            directory = base if base.startswith("/") else _join(directory, base)
        scope = glob_scope(rest)
        if scope is None:
            return _observe_search(call, directory)
    recursive = any(arguments.get(k) is True for k in _RECURSIVE_KEYS) or tool in _TREE_TOOLS
    depth = _number(arguments, _DEPTH_KEYS)
    entries = parse_entries(call.result or "")
    complete = _complete(call, entries) and not _paged_by_arguments(arguments, entries)
    if depth is None and not recursive and scope is None:
        # Without a recursive request a listing reaches as deep as it shows, at least one
        # level: a two-level view must not speak for the third.
        depth = max((k.count("/") + 1 for k in entries.kinds), default=1)
    return _listing(
        call,
        directory,
        entries,
        complete,
        depth=depth or None,
        scope=scope,
        shows_dirs=scope is None,  # glob tools answer with files
    )


def _complete(call: ToolCall, entries: Entries) -> bool:
    text = call.result or ""
    return (
        bool(entries.kinds)
        and entries.understood
        and not entries.paged
        and not truncation_marked(text)
        and _FAILED_LISTING.search(text) is None
    )


def _paged_by_arguments(arguments: Mapping[str, Any], entries: Entries) -> bool:
    limit = _number(arguments, _LIMIT_KEYS)
    if limit is not None and len(entries.kinds) >= limit:
        return True
    page = _number(arguments, ("page",))
    if page is not None and page > 1:
        return True
    offset = _number(arguments, ("offset", "skip", "start"))
    if offset is not None and offset > 0:
        return True
    return any(
        isinstance(arguments.get(k), str) and arguments[k].strip() for k in ("cursor", "page_token")
    )


_FAILED_LISTING = re.compile(
    r"no such file or directory|cannot access|cannot open|permission denied|access denied|"
    r"access is denied|not a directory|does not exist|doesn't exist|not found|\benoent\b|"
    r"\beacces\b|\berrno\b|operation not permitted|outside (?:of )?(?:the )?allowed",
    re.IGNORECASE,
)


def _listing(
    call: ToolCall,
    directory: str,
    entries: Entries,
    complete: bool,
    *,
    depth: int | None,
    scope: Callable[[str], bool] | None = None,
    shows_files: bool = True,
    shows_dirs: bool = True,
    unfiltered: bool = False,
) -> Observation | None:
    base = normal_path(directory)
    if base is None:
        return None
    placed = _relative_entries(entries.kinds, base)
    if placed is None:
        return None  # entries that cannot be placed under the directory: nothing to say
    relative, sure = placed
    shown = frozenset({base, *(_join(base, e) for e in relative)})
    return Observation(
        call=call,
        kind="listing",
        path=base,
        entries=relative,
        shown=shown,
        complete=complete and sure,
        depth=depth,
        scope=scope,
        shows_files=shows_files,
        shows_dirs=shows_dirs,
        unfiltered=unfiltered,
    )


def _relative_entries(
    kinds: Mapping[str, bool | None], base: str
) -> tuple[dict[str, bool | None], bool] | None:
    """Entries relative to the listed directory, with the directories they imply, and
    whether they could be placed for sure. A leading copy of the directory is dropped
    (`tests/a.py` in a listing of `tests`); when only some entries have it, they are read
    so but the placement is not sure (`tests/x` could be `tests/tests/x`). None when an
    entry cannot be placed at all (absolute elsewhere, `..`)."""
    prefix = base + "/" if base else ""
    copied = [k == base or k.startswith(prefix) for k in kinds] if prefix else []
    sure = all(copied) or not any(copied)
    out: dict[str, bool | None] = {}
    for key, is_dir in kinds.items():
        entry = key[len(prefix) :] if prefix and key.startswith(prefix) else key
        if not entry or entry == base:
            continue
        if entry.startswith("/") or ".." in entry.split("/"):
            return None
        parts = entry.split("/")
        for i in range(1, len(parts)):
            out["/".join(parts[:i])] = True
        if out.get(entry) is None:
            out[entry] = is_dir
    return out, sure


def normal_path(path: str) -> str | None:
    """A path as the rules compare it: `./` and a trailing `/` dropped, `.` the root "";
    None for one that leaves the root or depends on the environment (`..`, `~`, `$HOME`)."""
    path = path.strip().strip("`'\"").replace("\\", "/")
    path = re.sub(r"/{2,}", "/", path)
    while path.startswith("./"):
        path = path[2:]
    if path in (".", ""):
        return ""
    if path.startswith(("~", "$")) or ".." in path.split("/"):
        return None
    return path.rstrip("/") or "/"


def _join(base: str, entry: str) -> str:
    normal = normal_path(base)
    if not normal:
        return entry
    return f"{normal}/{entry}" if normal != "/" else f"/{entry}"


# --- globs --------------------------------------------------------------------------------

_WILD = re.compile(r"[*?\[{]")


def _glob_base(pattern: str) -> tuple[str, str]:
    """The fixed directories a glob starts with, and the rest: `tests/**/*.py` →
    (`tests`, `**/*.py`)."""
    parts = pattern.split("/")
    fixed: list[str] = []
    while len(parts) > 1 and not _WILD.search(parts[0]):
        fixed.append(parts.pop(0))
    base = "/".join(fixed)
    if pattern.startswith("/") and not base:
        base = "/"
    return base, "/".join(parts)


def glob_scope(pattern: str) -> Callable[[str], bool] | None:
    """A glob as a test of relative paths: `*` and `?` stay within one directory, `**/`
    crosses any number. None for a brace or a character class (read as not settling)."""
    if "{" in pattern or "[" in pattern:
        return None
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    compiled = re.compile("".join(out))
    return lambda path: compiled.fullmatch(path) is not None


# --- searches and reads -------------------------------------------------------------------

_GREP_PATH = re.compile(r"([^\s:\"'<>|*?]+):")
"""The file of a `grep`/`rg` match line (`tests/a.py:12:def f`); context lines are skipped."""
_PATH_LIKE = re.compile(r"[^\s:\"'<>|*?]*(?:/[^\s:\"'<>|*?]+|\.\w{1,10})")


def _observe_search(call: ToolCall, directory: str) -> Observation | None:
    """Files a search named: they exist. A search never shows that something is absent."""
    text = call.result or ""
    if opens_with_error(text):
        return None
    base = normal_path(directory)
    if base is None:
        return None
    paths: set[str] = set()
    entries = parse_entries(text)
    candidates = list(entries.kinds) if entries.understood else []
    if not candidates:
        for line in text.splitlines()[:5_000]:
            line = line.strip()
            if _PATH_LIKE.fullmatch(line):
                candidates.append(line)
                continue
            match = _GREP_PATH.match(line)
            if match is not None and _PATH_LIKE.fullmatch(match.group(1)):
                candidates.append(match.group(1))
    prefix = base + "/" if base else ""
    for candidate in candidates:
        path = normal_path(candidate)
        if not path or (path.startswith("/") and not base.startswith("/")):
            continue
        if prefix and not path.startswith(prefix) and not path.startswith("/"):
            path = prefix + path  # printed relative to the searched directory
        paths.add(path)
    if not paths:
        return None
    return Observation(call, "search", base, {}, frozenset(paths), complete=False, text=text)


def _observe_read(call: ToolCall, path: str | None) -> Observation | None:
    """A read of a file shows that it exists, and its text what it defines: a partial
    read (a line range) as well as a whole one, as it never shows an absence."""
    text = call.result or ""
    if path is None or opens_with_error(text):
        return None
    normal = normal_path(path)
    if not normal:
        return None
    return Observation(call, "read", normal, {}, frozenset({normal}), complete=False, text=text)


# --- shell commands -----------------------------------------------------------------------

_SHELL_KEYS = ("command", "cmd", "script", "commands")
_SHELL_SPECIAL = re.compile(r"[|;&<>`\n]|\$\(")


def _shell_command(call: ToolCall) -> list[str] | None:
    """The argv of a shell call's one plain command; None for no shell call."""
    if call_kind(call, None) != "executor":
        return None
    raw = next((call.arguments[k] for k in _SHELL_KEYS if k in call.arguments), None)
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        raw = " ".join(shlex.quote(p) for p in raw)
    if not isinstance(raw, str) or _SHELL_SPECIAL.search(raw):
        return None
    try:
        argv = shlex.split(raw)
    except ValueError:
        return None
    return argv or None


def _observe_command(call: ToolCall, argv: list[str]) -> Observation | None:
    program = argv[0].rsplit("/", 1)[-1]
    if program == "ls":
        return _observe_ls(call, argv[1:])
    if program == "find":
        return _observe_find(call, argv[1:])
    if program == "tree":
        return _observe_tree(call, argv[1:])
    if program in ("cat", "head", "tail", "nl") and len(argv) == 2 and not argv[1].startswith("-"):
        return _observe_read(call, argv[1])
    if program in ("grep", "rg", "egrep"):
        operands = [a for a in argv[1:] if not a.startswith("-")]
        return _observe_search(call, operands[1] if len(operands) == 2 else "")
    return None


_LS_FLAGS = frozenset("aAl1FphtrSGgon")


def _observe_ls(call: ToolCall, args: list[str]) -> Observation | None:
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    long_flags = [a for a in args if a.startswith("--")]
    operands = [a for a in args if not a.startswith("-")]
    if not set(flags) <= _LS_FLAGS or long_flags or len(operands) > 1:
        return None  # -R, -d, --ignore and several directories print other shapes
    if operands and _WILD.search(operands[0]):
        return None
    entries = parse_entries(call.result or "", classify_marks="F" in flags)
    return _listing(
        call,
        operands[0] if operands else ".",
        entries,
        _complete(call, entries),
        depth=1,
        unfiltered="a" in flags or "A" in flags,
    )


def _observe_find(call: ToolCall, args: list[str]) -> Observation | None:
    start: list[str] = []
    while args and not args[0].startswith(("-", "(", "!")):
        start.append(args.pop(0))
    if len(start) > 1:
        return None
    depth: int | None = None
    kind = ""
    name: str | None = None
    while args:
        option = args.pop(0)
        value = args.pop(0) if option in ("-maxdepth", "-type", "-name") and args else None
        if option == "-maxdepth" and value is not None and value.isdigit():
            depth = int(value)
        elif option == "-type" and value in ("f", "d"):
            kind = value
        elif option == "-name" and value is not None:
            name = value
        elif option != "-print":
            return None  # -path, -not, -o, -prune, -exec ...: a scope not modelled
    if depth == 0:
        return None
    pattern = name

    def scope(path: str) -> bool:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern or "*")

    entries = parse_entries(call.result or "")
    return _listing(
        call,
        start[0] if start else ".",
        entries,
        _complete(call, entries),
        depth=depth,
        scope=scope if name is not None else None,
        shows_files=kind != "d",
        shows_dirs=kind != "f",
        unfiltered=True,
    )


def _observe_tree(call: ToolCall, args: list[str]) -> Observation | None:
    depth: int | None = None
    operands: list[str] = []
    flags = ""
    while args:
        arg = args.pop(0)
        if arg == "-L" and args and args[0].isdigit():
            depth = int(args.pop(0))
        elif arg.startswith("-") and set(arg[1:]) <= set("adfFC"):
            flags += arg[1:]
        elif arg in ("--noreport",):
            continue
        elif not arg.startswith("-"):
            operands.append(arg)
        else:
            return None  # -I, -P, --gitignore: a filtered listing
    if len(operands) > 1:
        return None
    entries = parse_entries(call.result or "")
    return _listing(
        call,
        operands[0] if operands else ".",
        entries,
        _complete(call, entries),
        depth=depth,
        shows_files="d" not in flags,
        unfiltered="a" in flags,
    )
