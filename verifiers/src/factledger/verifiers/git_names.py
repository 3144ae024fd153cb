"""The names a reply gives, read as git would take them, or refused.

A name is data: it reaches git as one argument after `--end-of-options`/`--`, and only in
a shape it can have (hex for a commit, a ref name by git's own rules, a relative path, an
identifier). A token that starts with `-`, holds a NUL or a line break, or a path that
climbs out (`..`) or starts at `/` is refused before any command runs: `UNSAFE`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNSAFE = "unsafe name"
TOO_SHORT = "too short"

MIN_COMMIT_PREFIX = 7
_HEX = re.compile(r"[0-9a-fA-F]{1,64}")
# A revision the calls name (`main`, `v1.2`, `origin/dev`, a SHA, `HEAD~2`): what git
# reads as a tree-ish, without the syntax that names something else (`:path`, ranges).
_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/~^@{}+-]*")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Characters git forbids in a ref name (git-check-ref-format), controls aside.
_REF_FORBIDDEN = re.compile(r"[\s~^:?*\[\\\x00-\x1f\x7f]")


def is_unsafe(token: str) -> bool:
    return not token or token.startswith("-") or any(c in token for c in "\0\n\r")


def commit_prefix(token: str) -> str:
    """The lowercase hex of a commit name; ValueError(UNSAFE | TOO_SHORT) otherwise."""
    name = token.strip()
    if is_unsafe(name) or not _HEX.fullmatch(name):
        raise ValueError(UNSAFE)
    if len(name) < MIN_COMMIT_PREFIX:
        raise ValueError(TOO_SHORT)
    return name.lower()


def revision(token: str) -> str | None:
    """A revision named by a tool call's arguments, or None when it is not one."""
    name = token.strip()
    if is_unsafe(name) or ".." in name or not _REVISION.fullmatch(name):
        return None
    return name


def is_ref_name(name: str) -> bool:
    """Whether git could have a ref of this name (git-check-ref-format's rules)."""
    if _REF_FORBIDDEN.search(name) or ".." in name or "@{" in name or name == "@":
        return False
    if name.endswith(("/", ".")) or "//" in name:
        return False
    return all(
        part and not part.startswith(".") and not part.endswith(".lock") for part in name.split("/")
    )


@dataclass(frozen=True)
class RepoPath:
    """A path relative to the repository root; `directory` when written with a trailing `/`."""

    path: str
    directory: bool


def repo_path(token: str) -> RepoPath:
    """The path as the repository stores it; ValueError(UNSAFE) for one that would leave
    it (`..`, absolute) or read as an option."""
    name = token.strip()
    if is_unsafe(name) or name.startswith("/") or "\\" in name:
        raise ValueError(UNSAFE)
    directory = name.endswith("/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(UNSAFE)
    return RepoPath("/".join(parts), directory)


_CALL_ARGUMENTS = re.compile(r"\([^()]*\)$")


def symbol_name(token: str) -> str:
    """The identifier a symbol names: `build_registry(cfg)` -> `build_registry`,
    `Registry.load` or `tests/test_a.py::test_load` -> the last part. ValueError(UNSAFE)
    when what is left is no identifier (a regex or shell text would be)."""
    name = token.strip()
    if is_unsafe(name):
        raise ValueError(UNSAFE)
    name = _CALL_ARGUMENTS.sub("", name)
    name = re.split(r"::|[.#]", name)[-1]
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(UNSAFE)
    return name
