"""A workspace: do the files, directories and definitions a reply names exist on disk?

For agents that work on the same host as the verifier: a directory root (the checkout
the agent edits) is the source of truth.

PATH subjects are looked up relative to the root and to each directory a tool call of
the turn worked in (its `path`, `cwd`, `directory`, ... argument, when inside the root;
a file argument counts by its directory). A name is never followed outside the root: a
NUL byte, a `..` segment, an absolute path outside the root, or a symlink whose target
leaves the root gives unverifiable `unsafe name`. Exists: refuted; absent from every
base: confirmed (`query` `stat src/app.py`, one per base; `answer` `file src/app.py`).

SYMBOL subjects (a function, class, method or test name) are searched for as a
definition (`def NAME`, `class NAME`, `function NAME`, `func NAME`, `fn NAME`, `struct`,
`interface`, `enum`, `trait`, `type`, `module`) in the source files under the root, with
hidden folders and dependency folders left out. The search is bounded by a file count,
bytes per file and in all, and the timeout: a search cut short without a match is
unverifiable (`search incomplete`), never a confirmation. Found: refuted (`answer`
`defined at src/app.py:12`); a complete search without it: confirmed. For `Class.method`
the last part is searched.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
    existence_outcome,
)

from .settings_values import read_int, read_str, reject_unknown

# Tool-call arguments that name where the call worked.
_WORK_DIR_ARGUMENTS = ("path", "cwd", "directory", "dir", "workdir", "working_directory")
_MAX_BASES = 16
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})
_SOURCE_SUFFIXES = frozenset(
    [
        ".py",
        ".pyi",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".rb",
        ".php",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".swift",
        ".m",
        ".lua",
        ".pl",
        ".pm",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".sh",
        ".sql",
        ".vue",
        ".svelte",
    ]
)
_DEFINITION_WORDS = "def|class|function|func|fn|struct|interface|enum|trait|type|module"
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]{0,199}")
_SYMBOL_SEPARATORS = re.compile(r"\.|::|#")


@dataclass(frozen=True)
class WorkspaceSettings:
    root: str
    max_files: int = 5000
    max_file_bytes: int = 1024 * 1024
    max_total_bytes: int = 64 * 1024 * 1024

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> WorkspaceSettings:
        """Settings from a `[verification.workspace]`-like table; ValueError names a bad key."""
        reject_unknown(
            data, ("root", "max_files", "max_file_bytes", "max_total_bytes"), "workspace"
        )
        root = read_str(data, "root", "")
        if not root or not os.path.isdir(root):
            raise ValueError(f"root: not a directory: {root!r}")
        return cls(
            root=root,
            max_files=read_int(data, "max_files", 5000, minimum=1),
            max_file_bytes=read_int(data, "max_file_bytes", 1024 * 1024, minimum=1),
            max_total_bytes=read_int(data, "max_total_bytes", 64 * 1024 * 1024, minimum=1),
        )


class _Unsafe(Exception):
    """A name that would leave the root."""


class WorkspaceVerifier:
    """Checks PATH and SYMBOL subjects against the files under one root directory."""

    def __init__(self, settings: WorkspaceSettings) -> None:
        self.settings = settings
        self._root = os.path.realpath(settings.root)

    @property
    def name(self) -> str:
        return "workspace"

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        checked_at = time.time()
        started = time.monotonic()
        if subject.kind is SubjectKind.PATH:
            exists, query, answer, reason = self._stat(subject.name, turn)
        elif subject.kind is SubjectKind.SYMBOL:
            exists, query, answer, reason = self._search(subject.name, started + timeout)
        else:
            return None
        return Verification(
            subject=subject,
            outcome=(
                VerificationOutcome.UNVERIFIABLE
                if exists is None
                else existence_outcome(subject, exists)
            ),
            source="workspace",
            query=query,
            answer=answer,
            checked_at=checked_at,
            duration_ms=(time.monotonic() - started) * 1000.0,
            reason=reason,
            retryable=reason == "timeout",
        )

    # Paths ---------------------------------------------------------------------------

    def _stat(self, name: str, turn: Turn) -> tuple[bool | None, str, str, str]:
        """Exists, query, answer, reason for a path name."""
        try:
            candidates = self._candidates(name.strip(), turn)
        except _Unsafe as why:
            return None, "", str(why), "unsafe name"
        queries: list[str] = []
        for real in candidates:
            shown = self._relative(real)
            queries.append(f"stat {shown}")
            if os.path.isdir(real):
                return True, "; ".join(queries), f"directory {shown}", ""
            if os.path.exists(real):
                return True, "; ".join(queries), f"file {shown}", ""
        return False, "; ".join(queries), "absent", ""

    def _candidates(self, name: str, turn: Turn) -> list[str]:
        """The resolved places `name` may be, each inside the root; `_Unsafe` otherwise."""
        if not name or "\x00" in name:
            raise _Unsafe("empty name or NUL byte")
        if ".." in re.split(r"[/\\]", name):
            raise _Unsafe("a '..' segment")
        if os.path.isabs(name):
            places = [name]
        else:
            places = [os.path.join(base, name) for base in self._bases(turn)]
        resolved: list[str] = []
        for place in places:
            real = os.path.realpath(place)
            if not self._inside(real):
                raise _Unsafe("outside the workspace")
            if real not in resolved:
                resolved.append(real)
        return resolved

    def _bases(self, turn: Turn) -> list[str]:
        bases = [self._root]
        for call in turn.tool_calls:
            for key in _WORK_DIR_ARGUMENTS:
                value = call.arguments.get(key)
                if not isinstance(value, str) or not value or "\x00" in value:
                    continue
                real = os.path.realpath(os.path.join(self._root, value))
                if os.path.isfile(real):
                    real = os.path.dirname(real)
                if self._inside(real) and os.path.isdir(real) and real not in bases:
                    bases.append(real)
        return bases[:_MAX_BASES]

    def _inside(self, real: str) -> bool:
        return os.path.commonpath([self._root, real]) == self._root

    def _relative(self, real: str) -> str:
        return os.path.relpath(real, self._root).replace(os.sep, "/")

    # Symbols -------------------------------------------------------------------------

    def _search(self, name: str, deadline: float) -> tuple[bool | None, str, str, str]:
        parts = [part for part in _SYMBOL_SEPARATORS.split(name.strip().removesuffix("()")) if part]
        symbol = parts[-1] if parts else ""
        if not _SYMBOL.fullmatch(symbol):
            return None, "", "not a symbol name", "unsafe name"
        pattern = re.compile(
            rb"(?:^|[^\w$])(?:" + _DEFINITION_WORDS.encode() + rb")\s+"
            rb"(?:\([^)\n]*\)\s*)?"  # a Go method's receiver: func (s *Server) Name
             + re.escape(symbol.encode()) + rb"(?![\w$])",
            re.MULTILINE,
        )
        query = f"find definition of {symbol} under the workspace"
        files = 0
        total = 0
        for path in self._source_files():
            if time.monotonic() >= deadline:
                return None, query, f"stopped after {files} files", "timeout"
            if files >= self.settings.max_files or total >= self.settings.max_total_bytes:
                return None, query, f"stopped after {files} files", "search incomplete"
            try:
                if os.path.getsize(path) > self.settings.max_file_bytes:
                    continue
                with open(path, "rb") as handle:
                    text = handle.read(self.settings.max_file_bytes)
            except OSError:
                continue
            files += 1
            total += len(text)
            found = pattern.search(text)
            if found is not None:
                line = text.count(b"\n", 0, found.end()) + 1
                return True, query, f"defined at {self._relative(path)}:{line}", ""
        return False, query, f"not defined in {files} files", ""

    def _source_files(self) -> Iterator[str]:
        for folder, dirs, files in os.walk(self._root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
            for file in sorted(files):
                if os.path.splitext(file)[1] not in _SOURCE_SUFFIXES:
                    continue
                path = os.path.join(folder, file)
                # A symlinked file is read only when it points inside the root.
                if os.path.islink(path) and not self._inside(os.path.realpath(path)):
                    continue
                yield path
