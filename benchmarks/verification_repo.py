"""A synthetic repository for benchmarks.verification, and what is true of it.

Python modules and their tests in nested directories (`src/pkg_3/sub_1/ledger_cache_17.py`,
`tests/pkg_3/sub_1/test_ledger_cache_17.py`), each defining a function, a class and test
functions whose names carry the module's number. Commit k creates module k while there
are modules left to create, then edits module k mod files (a revision line), so every
commit is reachable from `main`. The history is written in one `git fast-import` stream:
thousands of commits in a second or two, where one `git commit` each would take minutes.

`Truth` answers what exists without asking git: the commits, every file and directory,
every defined name. Invented names take numbers just above the last module's (so they
look like the real ones), and occur nowhere in the repository, not even as a mention.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

WORDS = (
    "ledger", "cache", "router", "parser", "session", "invoice", "report", "queue",
    "token", "schema", "buffer", "policy", "budget", "metric", "tenant", "export",
)  # fmt: skip
VERBS = ("parse", "load", "flush", "build", "merge", "render", "resolve", "settle")

_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


@dataclass(frozen=True)
class Module:
    """One source module and its test module, named from its number."""

    number: int
    packages: int

    @property
    def stem(self) -> str:
        n = self.number
        return f"{WORDS[n % len(WORDS)]}_{WORDS[(n // len(WORDS)) % len(WORDS)]}_{n}"

    @property
    def directory(self) -> str:
        n = self.number
        return f"pkg_{n % self.packages}/sub_{(n // self.packages) % 4}"

    @property
    def source_path(self) -> str:
        return f"src/{self.directory}/{self.stem}.py"

    @property
    def test_path(self) -> str:
        return f"tests/{self.directory}/test_{self.stem}.py"

    @property
    def function(self) -> str:
        return f"{VERBS[self.number % len(VERBS)]}_{WORDS[self.number % len(WORDS)]}_{self.number}"

    @property
    def class_name(self) -> str:
        n = self.number
        return f"{WORDS[n % len(WORDS)].title()}{VERBS[n % len(VERBS)].title()}{n}"

    @property
    def tests(self) -> tuple[str, str]:
        return (f"test_{self.function}", f"test_{self.stem}_round_trip")

    def source(self, revision: int) -> str:
        return (
            f'"""The {self.stem.replace("_", " ")} module."""\n\n'
            f"# revision {revision}\n\n"
            f"def {self.function}(value: str) -> str:\n"
            f"    return value.strip()\n\n\n"
            f"class {self.class_name}:\n"
            f"    def __init__(self) -> None:\n"
            f"        self.items: list[str] = []\n"
        )

    def test_source(self) -> str:
        first, second = self.tests
        module = self.source_path.removeprefix("src/").removesuffix(".py").replace("/", ".")
        return (
            f"from {module} import {self.class_name}, {self.function}\n\n\n"
            f"def {first}() -> None:\n"
            f"    assert {self.function}(' a ') == 'a'\n\n\n"
            f"def {second}() -> None:\n"
            f"    assert {self.class_name}().items == []\n"
        )


@dataclass(frozen=True)
class Truth:
    """What exists in the built repository."""

    commits: tuple[str, ...]
    files: frozenset[str]
    directories: frozenset[str]
    symbols: frozenset[str]
    modules: tuple[Module, ...]

    def commit_exists(self, prefix: str) -> bool:
        prefix = prefix.lower()
        return any(sha.startswith(prefix) for sha in self.commits)

    def path_exists(self, path: str) -> bool:
        if path.endswith("/"):
            return path.rstrip("/") in self.directories
        return path in self.files or path in self.directories


def modules(files: int) -> tuple[Module, ...]:
    """Enough modules for `files` files: each is a source file and a test file."""
    count = max(1, files // 2)
    packages = max(1, min(12, count // 8))
    return tuple(Module(n, packages) for n in range(count))


def build(folder: Path, *, commits: int, files: int) -> tuple[Path, Truth]:
    """A bare repository under `folder` with `commits` commits on `main`, and its truth."""
    repo = folder / "site.git"
    _git("init", "--quiet", "--bare", "--initial-branch=main", str(repo))
    made = modules(files)
    marks = folder / "marks"
    stream = b"".join(_stream(made, commits))
    subprocess.run(
        ["git", "--git-dir", str(repo), "fast-import", "--quiet", f"--export-marks={marks}"],
        input=stream,
        check=True,
        env=_ENV,
    )
    shas = tuple(line.split()[1] for line in marks.read_text().splitlines())
    present = made[: min(len(made), commits)]
    paths = frozenset(p for m in present for p in (m.source_path, m.test_path))
    directories = frozenset(
        "/".join(parts[:i]) for p in paths for parts in [p.split("/")] for i in range(1, len(parts))
    )
    symbols = frozenset(s for m in present for s in (m.function, m.class_name, *m.tests))
    return repo, Truth(shas, paths, directories, symbols, present)


def _stream(made: tuple[Module, ...], commits: int) -> Iterator[bytes]:
    for k in range(commits):
        module = made[k % len(made)]
        created = k < len(made)
        message = f"{'Add' if created else 'Revise'} {module.stem} ({k})\n"
        yield f"commit refs/heads/main\nmark :{k + 1}\n".encode()
        yield f"committer Bench <bench@example.com> {1_700_000_000 + k * 60} +0000\n".encode()
        yield _data(message)
        if k:
            yield f"from :{k}\n".encode()
        yield f"M 100644 inline {module.source_path}\n".encode()
        yield _data(module.source(k))
        if created:
            yield f"M 100644 inline {module.test_path}\n".encode()
            yield _data(module.test_source())
        yield b"\n"


def _data(text: str) -> bytes:
    raw = text.encode()
    return f"data {len(raw)}\n".encode() + raw + b"\n"


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, env=_ENV, capture_output=True)


def invented_sha(rng: random.Random, truth: Truth, length: int) -> str:
    """Hex of `length` that prefixes no commit, with a digit and a letter (a 7-hex run
    of digits only reads as a number, and no reply would call it a commit)."""
    while True:
        token = "".join(rng.choice("0123456789abcdef") for _ in range(length))
        mixed = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if mixed and not truth.commit_exists(token):
            return token
