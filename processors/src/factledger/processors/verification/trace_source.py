"""The turn's own trace as a source of truth: what its listings, searches and reads showed.

The agent listed `tests/` and got three files; its reply names four others there. No
configured source is needed to prove those four invented: the listing already says they
are not there. `TraceVerifier` settles PATH subjects (and SYMBOL subjects a read shows)
from the calls of the turn (`processors.verification.trace_calls` reads them).

Which calls count. Only this turn's calls (`Turn.executed_calls`): an earlier turn's
listing may be stale, the files may have changed since. A call counts when it succeeded
(`processors.evidence.outcomes`) and returned text; a listing whose text says it failed
("No such file or directory", "permission denied", "not found") shows nothing. A call
that may have changed files (write, edit, move, delete tools; a shell command that is no
plain listing) voids every observation before it (and beside it in the same step).

What is a listing. A call of a listing tool (`ls`, `list_files`, `list_dir`,
`list_directory`, `directory_tree`, `get_file_tree`, `tree`, `glob`, `find_files`, MCP
filesystem's, ...) or a shell call whose command is one plain `ls`, `find` or `tree`. Its
directory is its `path`/`dir`/`directory`/`root`/`folder`/`cwd`/`relative_path`/
`target_directory` argument, or a glob pattern's fixed leading directories; with none it
is the working directory, taken as the repository root: the reply's relative paths are
relative to the same directory the agent's tools work in. Entries are read from the
shapes of `trace_entries` and made relative to the listed directory (`./` and a leading
copy of the directory dropped, a trailing `/` marks a directory).

What makes a listing complete (only a complete listing shows an absence). It has
entries, every line or item was understood, it was not cut short: no truncation marker
(`...`, `…`, `truncated`, `(and N more)`, `more files`, `showing N of M` with N < M,
`limit reached`, `output too long`, `has_more: true`, a non-empty `next_page`/
`next_cursor`/`cursor`/`nextPageToken`, a `total` above the count), no later page asked
(`page` > 1, an `offset`, a cursor) and fewer entries than a `limit`/`max_results`/
`head_limit`/`page_size` argument. Its reach:

- a non-recursive listing settles names directly in its directory; for a deeper name
  `sub/x.py` it shows the absence only when `sub` is absent (with `sub/` listed, the
  deeper name is not its to settle). A listing that shows entries with `/` without being
  asked to recurse reaches as deep as it shows (a two-level view says nothing of the
  third level);
- a recursive listing (`recursive=true`, `find`, `tree`, `directory_tree`) settles names
  at any depth under it, down to its `-maxdepth`/`-L`/`max_depth`;
- a glob (`tests/**/*.py`) or `find -name` settles only names its pattern matches (`*`
  stays within a directory, `**/` crosses any number; a pattern with braces or brackets
  settles nothing); glob tools answer with files, so they settle no directory's absence;
- names a listing may hide (a component starting with `.`, or `node_modules`,
  `__pycache__`, `dist`, `build`, `.venv`, ...) are settled absent only by a listing that
  shows such names: `ls -a`, `tree -a`, `find`, or one whose own entries include one;
- `find -type f` shows no empty directory, `-type d` and `tree -d` no file: a name of
  the kind not shown is not settled absent.

Searches and reads. A search (grep, `search_files`, `codebase_search`, shell `grep`/`rg`)
shows that the files it names exist, never that one does not. A read (read_file, cat,
`str_replace_editor` view) shows that its path exists. A SYMBOL is shown to exist when a
read or a search shows its definition (`def NAME`, `class NAME`, `function NAME`,
`NAME =`, ...; `Cls.meth` needs `class Cls` in the same text or a file named `Cls`);
the trace never shows a symbol absent: a repository has more files than were read.

Matching a reply's name. The name as the reply writes it, `./` dropped, case-sensitive,
a trailing `/` naming a directory, relative to the root (or absolute, matched against
absolute listings only). A name with no directory part (`test_cache.py`) is ambiguous
(which directory did the reply mean?): any call showing a file of that name anywhere
shows it exists, and only a complete recursive listing of the root shows it absent.

The answer. `existence_outcome` of what the calls showed (a claimed-absent name that a
listing shows is confirmed). A call showing the name exists outweighs a listing that
misses it (tools filter differently). None when no call of the turn speaks of the
subject, so the next verifier is asked.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
    existence_outcome,
)
from factledger.processors.verification.trace_calls import (
    Observation,
    normal_path,
    turn_observations,
)

QUERY_CHARS = 300
"""Characters of a call's `name(arguments)` kept as a verification's query."""

_OFTEN_IGNORED = frozenset(
    {
        "node_modules",
        "__pycache__",
        "dist",
        "build",
        "target",
        "venv",
        "env",
        "coverage",
        "htmlcov",
        "vendor",
        "out",
    }
)
"""Directory names listing tools that honour `.gitignore` commonly leave out."""


class TraceVerifier:
    """Settles paths and symbols from the turn's own complete listings, searches and
    reads (see the module docstring). Pure and fast: it reads the turn only, so it
    never waits on a source; it returns None when no call of the turn speaks of the
    subject."""

    def __init__(self) -> None:
        # The subjects of one turn are asked one after another: its calls are read once.
        # One slot, replaced whole, so concurrent callers at worst read a turn twice.
        self._last: tuple[Turn, tuple[Observation, ...]] | None = None

    @property
    def name(self) -> str:
        return "trace"

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        started = time.perf_counter()
        if subject.kind is SubjectKind.PATH:
            found = _path_evidence(subject.name, self._observations(turn))
        elif subject.kind is SubjectKind.SYMBOL:
            found = _symbol_evidence(subject.name, self._observations(turn))
        else:
            return None
        if found is None:
            return None
        observation, exists, answer = found
        duration = time.perf_counter() - started
        if duration > timeout:
            return Verification(
                subject=subject,
                outcome=VerificationOutcome.UNVERIFIABLE,
                source=_source(observation),
                query=_query(observation),
                checked_at=time.time(),
                duration_ms=duration * 1000.0,
                reason="timeout",
                retryable=True,
            )
        return Verification(
            subject=subject,
            outcome=existence_outcome(subject, exists),
            source=_source(observation),
            query=_query(observation),
            answer=answer,
            checked_at=time.time(),
            duration_ms=duration * 1000.0,
        )

    def _observations(self, turn: Turn) -> tuple[Observation, ...]:
        last = self._last
        if last is not None and last[0] is turn:
            return last[1]
        observations = turn_observations(turn)
        self._last = (turn, observations)
        return observations


_Evidence = tuple[Observation, bool, str]


def _source(observation: Observation) -> str:
    call = observation.call
    return f"trace:{call.name} ({call.call_id or 'no call id'})"


def _query(observation: Observation) -> str:
    call = observation.call
    arguments = call.arguments_text or json.dumps(dict(call.arguments), default=str)
    text = f"{call.name}({arguments})"
    return text if len(text) <= QUERY_CHARS else text[: QUERY_CHARS - 1] + "…"


# --- paths --------------------------------------------------------------------------------


def subject_path(name: str) -> tuple[str, bool] | None:
    """A PATH subject as the rules compare it, and whether it names a directory; None for
    one no listing can speak of (`..`, `~`). A trailing `:line` is dropped."""
    text = name.strip().strip("`'\"")
    text = re.sub(r"(?<=\w):\d+(?::\d+)?$", "", text)
    is_dir = text.endswith("/")
    path = normal_path(text)
    if not path:
        return None
    return path, is_dir


def _path_evidence(name: str, observations: Iterable[Observation]) -> _Evidence | None:
    parsed = subject_path(name)
    if parsed is None:
        return None
    path, is_dir = parsed
    observations = tuple(observations)
    bare = "/" not in path
    for observation in observations:
        shown = _shows(observation, path, bare=bare)
        if shown is not None:
            return observation, True, _shown_answer(observation, shown)
    for observation in observations:
        if observation.kind != "listing" or not observation.complete:
            continue
        if bare:
            if _root_listing(observation) and _may_list(observation, path, is_dir):
                return observation, False, _absent_answer(observation, path)
            continue
        relative = _under(path, observation.path)
        if relative and _absent(observation, relative, is_dir):
            return observation, False, _absent_answer(observation, relative)
    return None


def _shows(observation: Observation, path: str, *, bare: bool) -> str | None:
    """The path the observation shows that is the subject (or has it as a directory)."""
    if bare:
        return next((p for p in sorted(observation.shown) if p.rsplit("/", 1)[-1] == path), None)
    if path in observation.shown:
        return path
    prefix = path + "/"
    return next((p for p in sorted(observation.shown) if p.startswith(prefix)), None)


def _under(path: str, directory: str) -> str | None:
    """The path relative to the listed directory, or None when it is not under it."""
    if not directory:
        return None if path.startswith("/") else path
    if path.startswith(directory.rstrip("/") + "/"):
        return path[len(directory.rstrip("/")) + 1 :]
    return None


def _absent(observation: Observation, relative: str, is_dir: bool) -> bool:
    """Whether a complete listing shows `relative` absent (a shown one was handled)."""
    parts = relative.split("/")
    reaches = observation.depth is None or len(parts) <= observation.depth
    if observation.scope is not None:
        return reaches and observation.scope(relative) and _may_list(observation, relative, is_dir)
    entries = observation.entries
    for level in range(1, len(parts) + 1):
        if observation.depth is not None and level > observation.depth:
            return False  # deeper than the listing reaches
        prefix = "/".join(parts[:level])
        if level == len(parts):
            return prefix not in entries and _may_list(observation, relative, is_dir)
        if prefix not in entries:
            # An absent directory: it would be listed itself, or implied by the subject's
            # file under it (a files-only listing that reaches that deep).
            if observation.shows_dirs:
                return _may_list(observation, relative, True)
            return reaches and not is_dir and _may_list(observation, relative, False)
        if entries[prefix] is False:
            return True  # a file has nothing under it
    return False


def _may_list(observation: Observation, relative: str, is_dir: bool) -> bool:
    """Whether the listing would have shown this name: a kind it lists, and no name it may
    hide (unless it shows such names)."""
    if not (observation.shows_dirs if is_dir else observation.shows_files):
        return False
    if any(_may_hide(part) for part in relative.split("/")):
        return observation.unfiltered or any(
            _may_hide(part) for entry in observation.entries for part in entry.split("/")
        )
    return True


def _may_hide(component: str) -> bool:
    return component.startswith(".") or component in _OFTEN_IGNORED


def _root_listing(observation: Observation) -> bool:
    return observation.path == "" and observation.depth is None and observation.scope is None


def _shown_answer(observation: Observation, path: str) -> str:
    if observation.kind == "read":
        return f"read of {path} returned {len(observation.text.splitlines())} lines"
    if observation.kind == "search":
        return f"search results name {path}"
    return f"listing of {_dir_label(observation.path)} shows {path}"


def _absent_answer(observation: Observation, relative: str) -> str:
    depth = "recursive" if observation.depth is None else f"depth {observation.depth}"
    count = sum(1 for _ in observation.entries)
    entries = "1 entry" if count == 1 else f"{count} entries"
    return (
        f"listing of {_dir_label(observation.path)} ({entries}, {depth}, complete) "
        f"has no {relative}"
    )


def _dir_label(directory: str) -> str:
    return f"{directory.rstrip('/')}/" if directory else "the root (./)"


# --- symbols ------------------------------------------------------------------------------

_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_LINE_NUMBER = r"(?:[ \t]*\d+(?:[ \t]*(?:→|\||:)|\t))?"
"""A read tool's line-number gutter (`  12→`, `12:`, `12\t`)."""
_DEFINES = (
    r"(?:export[ \t]+)?(?:default[ \t]+)?(?:pub(?:\([\w:]+\))?[ \t]+)?(?:async[ \t]+)?"
    r"(?:def|class|function|fn|func|interface|struct|enum|trait|type|const|let|var|object)"
    r"[ \t]+(?:\([^)\n]*\)[ \t]*)?"
)


def _symbol_evidence(name: str, observations: Iterable[Observation]) -> _Evidence | None:
    """A read or search whose text defines the symbol: it exists (it is never shown
    absent). `tests/test_x.py::test_y` needs the definition in a read of that file."""
    text = name.strip().strip("`'\"")
    file_part, _, symbol_part = text.rpartition("::")
    match = _SYMBOL.match(symbol_part)
    if match is None:
        return None
    parts = match.group(0).split(".")
    symbol, qualifier = parts[-1], parts[-2] if len(parts) > 1 else None
    file_path = subject_path(file_part) if file_part else None
    if file_part and file_path is None:
        return None
    definition = _definition(symbol)
    for observation in observations:
        if observation.kind == "listing":
            continue
        if file_path is not None and observation.path != file_path[0]:
            continue
        if definition.search(observation.text) is None:
            continue
        if qualifier is not None and not _qualified(observation, qualifier):
            continue
        where = "read of " + observation.path if observation.kind == "read" else "search"
        return observation, True, f"{where} shows the definition of {match.group(0)}"
    return None


def _definition(symbol: str) -> re.Pattern[str]:
    name = re.escape(symbol)
    return re.compile(
        rf"^{_LINE_NUMBER}[ \t]*(?:{_DEFINES}{name}\b|{name}[ \t]*(?::[^=\n]+)?=(?!=))",
        re.MULTILINE,
    )


def _qualified(observation: Observation, qualifier: str) -> bool:
    """`Cls.meth`: the same text defines `Cls`, or it is the read of a file named so."""
    if observation.kind == "read":
        stem = observation.path.rsplit("/", 1)[-1].split(".", 1)[0]
        if stem == qualifier:
            return True
    return _definition(qualifier).search(observation.text) is not None
