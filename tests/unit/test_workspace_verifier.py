"""WorkspaceVerifier against real files: paths inside the root, names that would leave it,
and the bounded definition search."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from factledger.processors.model import ToolCall, Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
)
from factledger.verifiers.workspace import WorkspaceSettings, WorkspaceVerifier

from .outcomes import CONFIRMED, REFUTED, UNVERIFIABLE


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / "src" / "app").mkdir(parents=True)
    (workspace / "src" / "app" / "main.py").write_text(
        "import os\n\n\nclass Server:\n    async def handle_request(self):\n        pass\n"
    )
    (workspace / "web").mkdir()
    (workspace / "web" / "client.ts").write_text("export function fetchOrders() {}\n")
    (workspace / "cmd.go").write_text("package main\n\nfunc (s *Server) ServeLedger() {}\n")
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_cache.py").write_text("def test_cache_expires():\n    pass\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "hidden.py").write_text("def only_in_git(): pass\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (outside / "lib.py").write_text("def outside_function(): pass\n")
    (workspace / "escape").symlink_to(outside)
    (workspace / "inner-link").symlink_to(workspace / "src")
    return workspace


def check(
    root: Path, kind: SubjectKind, name: str, turn: Turn | None = None, **subject: bool
) -> Verification:
    verifier = WorkspaceVerifier(WorkspaceSettings(root=str(root)))
    verification = verifier.verify(
        Subject(kind, name, claimed_absent=subject.get("claimed_absent", False)),
        turn or Turn(reply="done"),
        2.0,
    )
    assert verification is not None
    return verification


@pytest.mark.parametrize(
    ("name", "outcome", "answer"),
    [
        ("src/app/main.py", REFUTED, "file src/app/main.py"),
        ("src/app", REFUTED, "directory src/app"),
        ("src/app/", REFUTED, "directory src/app"),
        ("./tests/test_cache.py", REFUTED, "file tests/test_cache.py"),
        ("inner-link/app/main.py", REFUTED, "file src/app/main.py"),
        ("src/app/server.py", CONFIRMED, "absent"),
        ("docs", CONFIRMED, "absent"),
    ],
)
def test_paths_inside_the_root(root: Path, name: str, outcome, answer: str) -> None:
    verification = check(root, SubjectKind.PATH, name)
    assert (verification.outcome, verification.answer) == (outcome, answer)
    assert verification.source == "workspace"
    assert verification.query.startswith("stat ")


def test_the_query_names_the_resolved_relative_path(root: Path) -> None:
    assert check(root, SubjectKind.PATH, "inner-link/app/main.py").query == "stat src/app/main.py"


def test_an_absolute_path_inside_the_root_is_checked(root: Path) -> None:
    verification = check(root, SubjectKind.PATH, str(root / "src" / "app" / "main.py"))
    assert verification.outcome is REFUTED


@pytest.mark.parametrize(
    "name",
    [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "escape/secret.txt",
        "escape",
        "/etc/passwd",
        "src/app\x00.py",
        "",
    ],
    ids=[
        "dotdot",
        "dotdot-inside",
        "symlink-out",
        "symlink-dir",
        "absolute-outside",
        "nul",
        "empty",
    ],
)
def test_names_that_leave_the_root_are_unsafe(root: Path, name: str) -> None:
    verification = check(root, SubjectKind.PATH, name)
    assert (verification.outcome, verification.reason) == (UNVERIFIABLE, "unsafe name")
    assert verification.query == ""


def test_a_path_relative_to_the_directory_a_tool_call_worked_in(root: Path) -> None:
    turn = Turn(
        reply="main.py has the server",
        tool_calls=(
            ToolCall(name="list_files", arguments={"path": "src/app"}),
            ToolCall(name="shell", arguments={"cwd": str(root.parent / "outside")}),
        ),
    )
    verification = check(root, SubjectKind.PATH, "main.py", turn)
    assert (verification.outcome, verification.answer) == (REFUTED, "file src/app/main.py")
    assert verification.query == "stat main.py; stat src/app/main.py"
    # The call that worked outside the root adds no base: the name stays unknown there.
    assert check(root, SubjectKind.PATH, "secret.txt", turn).outcome is CONFIRMED


def test_a_claimed_absent_path_that_exists_is_confirmed(root: Path) -> None:
    assert check(root, SubjectKind.PATH, "src/app", claimed_absent=True).outcome is CONFIRMED


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("Server", "defined at src/app/main.py:4"),
        ("handle_request", "defined at src/app/main.py:5"),
        ("Server.handle_request", "defined at src/app/main.py:5"),
        ("fetchOrders()", "defined at web/client.ts:1"),
        ("ServeLedger", "defined at cmd.go:3"),
        ("test_cache_expires", "defined at tests/test_cache.py:1"),
    ],
)
def test_symbols_defined_under_the_root(root: Path, name: str, answer: str) -> None:
    verification = check(root, SubjectKind.SYMBOL, name)
    assert (verification.outcome, verification.answer) == (REFUTED, answer)


@pytest.mark.parametrize(
    "name",
    ["handle", "os", "only_in_git", "outside_function", "test_cache_expires_twice"],
    ids=["prefix", "imported-not-defined", "hidden-folder", "behind-symlink-out", "longer-name"],
)
def test_symbols_not_defined_are_confirmed(root: Path, name: str) -> None:
    verification = check(root, SubjectKind.SYMBOL, name)
    assert verification.outcome is CONFIRMED
    assert verification.answer.startswith("not defined in ")


def test_a_search_cut_short_is_not_a_confirmation(root: Path) -> None:
    verifier = WorkspaceVerifier(WorkspaceSettings(root=str(root), max_files=1))
    verification = verifier.verify(Subject(SubjectKind.SYMBOL, "nowhere"), Turn(reply=""), 2.0)
    assert verification is not None
    assert (verification.outcome, verification.reason) == (UNVERIFIABLE, "search incomplete")
    timed = verifier.verify(Subject(SubjectKind.SYMBOL, "nowhere"), Turn(reply=""), 0.0)
    assert timed is not None
    assert (timed.outcome, timed.reason, timed.retryable) == (UNVERIFIABLE, "timeout", True)


@pytest.mark.parametrize("name", ["rm -rf /", "a'b", "x" * 300, "(.*)"])
def test_a_symbol_that_is_no_name_is_unsafe(root: Path, name: str) -> None:
    assert check(root, SubjectKind.SYMBOL, name).reason == "unsafe name"


def test_other_subjects_are_left_to_others(root: Path) -> None:
    verifier = WorkspaceVerifier(WorkspaceSettings(root=str(root)))
    assert verifier.verify(Subject(SubjectKind.URL, "src/app"), Turn(reply=""), 1.0) is None


def test_settings_from_a_mapping(root: Path) -> None:
    settings = WorkspaceSettings.from_mapping({"root": str(root), "max_files": 10})
    assert (settings.root, settings.max_files) == (str(root), 10)
    with pytest.raises(ValueError, match="root"):
        WorkspaceSettings.from_mapping({"root": os.path.join(str(root), "nope")})
    with pytest.raises(ValueError, match="max_file"):
        WorkspaceSettings.from_mapping({"root": str(root), "max_file": 1})
