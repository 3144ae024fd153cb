"""Replies for benchmarks.verification: real and invented names, with the truth of each.

Each reply is shaped the way the validators read it, so its names become subjects:

    commits    full SHAs the tool results do not show (`fabricated_identifier`) and
               7-hex short SHAs (candidates), real or invented
    files      a set of paths and directories presented as existing (class 5)
    symbols    a module "defines" functions and classes (class 5)
    tests      "the existing tests are ..." (class 5), a pytest node id among them
    basenames  file names without their directory (class 5): a source must look for
               them anywhere, not at the root only
    negated    "X is not defined anywhere" (a candidate claimed absent)
    listing    the agent listed a directory; the reply names files there the listing
               does not show (the trace settles them) beside others elsewhere (git does)

About half of the names are real. A `Planted` name's key is the `Subject.key` a subject
for it has, so what subjects.py extracts is matched to what was planted.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from factledger.processors.model import ToolCall, Turn
from factledger.processors.verification.base import SubjectKind

from .verification_repo import Module, Truth, invented_sha

REPOSITORY = "bench/site"


@dataclass(frozen=True)
class Planted:
    """One name put in a reply: what it is, whether it exists, how the reply uses it."""

    kind: SubjectKind
    name: str
    exists: bool
    shape: str
    claimed_absent: bool = False

    @property
    def key(self) -> tuple[str, str, bool]:
        return (self.kind.value, self.name, self.claimed_absent)


@dataclass(frozen=True)
class Reply:
    turn: Turn
    planted: tuple[Planted, ...]


class _Names:
    """Real or invented names of each kind, drawn from one seeded generator."""

    def __init__(self, truth: Truth, rng: random.Random) -> None:
        self.truth = truth
        self.rng = rng
        self._next_invented = len(truth.modules)

    def real(self) -> bool:
        return self.rng.random() < 0.5

    def module(self, real: bool) -> Module:
        if real:
            return self.rng.choice(self.truth.modules)
        self._next_invented += self.rng.randint(1, 3)
        template = self.rng.choice(self.truth.modules)
        return Module(self._next_invented, template.packages)

    def commit(self, length: int, real: bool) -> str:
        if real:
            return self.rng.choice(self.truth.commits)[:length]
        return invented_sha(self.rng, self.truth, length)


def _call(name: str, result: str, **arguments: str) -> ToolCall:
    return ToolCall(
        name, call_id="call_1", arguments={"repo": REPOSITORY, **arguments}, result=result
    )


def _commits(names: _Names) -> Reply:
    real = [names.real() for _ in range(4)]
    full = [names.commit(40, r) for r in real[:2]]
    short = [names.commit(7, r) for r in real[2:]]
    reply = (
        f"Pushed the fix to main as {full[0]}. It builds on {short[0]} and {short[1]}, "
        f"and reverts {full[1]}."
    )
    planted = tuple(
        Planted(SubjectKind.COMMIT, sha, r, "full sha" if len(sha) == 40 else "short sha")
        for sha, r in zip([*full, *short], real, strict=True)
    )
    return Reply(_turn(reply, _call("git_push", "Everything up-to-date", branch="main")), planted)


def _files(names: _Names) -> Reply:
    planted = []
    for _ in range(3):
        real = names.real()
        planted.append(Planted(SubjectKind.PATH, names.module(real).source_path, real, "file"))
    real = names.real()
    directory = f"src/{names.module(True).directory}/" if real else "src/pkg_99/sub_7/"
    planted.append(Planted(SubjectKind.PATH, directory, real, "directory"))
    listed = ", ".join(p.name for p in planted[:-1])
    reply = f"The repository contains {listed} and {planted[-1].name}; all tests are passing."
    return Reply(_turn(reply, _call("search_code", "4 matches", query="cache")), tuple(planted))


def _symbols(names: _Names) -> Reply:
    home = names.module(True)
    picked = [(names.real(), names.real()) for _ in range(2)]
    planted = []
    for real_function, real_class in picked:
        function_owner, class_owner = names.module(real_function), names.module(real_class)
        planted.append(
            Planted(SubjectKind.SYMBOL, function_owner.function, real_function, "function")
        )
        planted.append(Planted(SubjectKind.SYMBOL, class_owner.class_name, real_class, "class"))
    package = f"src/{home.directory}/"
    planted.append(Planted(SubjectKind.PATH, package, True, "directory"))
    listed = ", ".join(f"`{p.name}`" for p in planted[:-1])
    reply = f"The package under {package} already defines {listed}."
    return Reply(_turn(reply, _call("search_code", "4 matches", query="def")), tuple(planted))


def _tests(names: _Names) -> Reply:
    planted = []
    for _ in range(3):
        real = names.real()
        owner = names.module(real)
        planted.append(Planted(SubjectKind.SYMBOL, names.rng.choice(owner.tests), real, "test"))
    real = names.real()
    owner = names.module(real)
    node = f"{owner.test_path}::{owner.tests[0]}"
    listed = ", ".join(p.name for p in planted)
    reply = f"The existing tests are {listed} and {node}; all of them are passing."
    planted.append(Planted(SubjectKind.PATH, owner.test_path, real, "test file"))
    planted.append(Planted(SubjectKind.SYMBOL, owner.tests[0], real, "test"))
    return Reply(_turn(reply, _call("run_tests", "collected 0 items")), _distinct(planted))


def _basenames(names: _Names) -> Reply:
    planted = []
    for _ in range(3):
        real = names.real()
        name = names.module(real).source_path.rsplit("/", 1)[1]
        planted.append(Planted(SubjectKind.PATH, name, real, "basename"))
    listed = ", ".join(p.name for p in planted)
    reply = f"The project already contains {listed}, each with its own tests."
    return Reply(_turn(reply, _call("search_code", "3 matches", query="import")), tuple(planted))


def _negated(names: _Names) -> Reply:
    real_symbol, real_path = names.real(), names.real()
    symbol = names.module(real_symbol).function
    path = names.module(real_path).source_path
    reply = f"The function `{symbol}` does not exist. There is no {path} in the repo."
    planted = (
        Planted(SubjectKind.SYMBOL, symbol, real_symbol, "negated", claimed_absent=True),
        Planted(SubjectKind.PATH, path, real_path, "negated", claimed_absent=True),
    )
    return Reply(_turn(reply, _call("run_shell", "done", command="make check")), planted)


def _listing(names: _Names) -> Reply:
    listed = names.module(True)
    beside = [m for m in names.truth.modules if m.directory == listed.directory]
    shown = "\n".join(m.source_path.rsplit("/", 1)[1] for m in beside)
    planted = []
    for _ in range(3):
        invented = names.module(False)
        path = f"src/{listed.directory}/{invented.stem}.py"
        planted.append(Planted(SubjectKind.PATH, path, False, "listed dir"))
    real = names.real()
    planted.append(Planted(SubjectKind.PATH, names.module(real).test_path, real, "file"))
    reply = "The repository contains " + ", ".join(p.name for p in planted) + "."
    call = ToolCall(
        "list_files", call_id="call_1", arguments={"path": f"src/{listed.directory}"}, result=shown
    )
    return Reply(_turn(reply, call), tuple(planted))


def _distinct(planted: list[Planted]) -> tuple[Planted, ...]:
    return tuple({p.key: p for p in planted}.values())


def _turn(reply: str, call: ToolCall) -> Turn:
    return Turn(
        reply=reply,
        user_message="Where do things stand?",
        tool_calls=(call,),
        service="bench",
    )


SHAPES: dict[str, Callable[[_Names], Reply]] = {
    "commits": _commits,
    "files": _files,
    "symbols": _symbols,
    "tests": _tests,
    "basenames": _basenames,
    "negated": _negated,
    "listing": _listing,
}


def replies(truth: Truth, count: int, seed: int = 7) -> list[Reply]:
    """`count` replies cycling through the shapes, names drawn with `seed`."""
    names = _Names(truth, random.Random(seed))
    shapes = list(SHAPES.values())
    return [shapes[i % len(shapes)](names) for i in range(count)]
