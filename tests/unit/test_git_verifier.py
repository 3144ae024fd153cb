"""GitVerifier against real repositories built with the git CLI in temporary directories:
a checkout asked in place, a bare remote mirrored over file://, a rewritten history, a
remote that is gone and one that never answers."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factledger.processors.model import ToolCall, Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
)
from factledger.verifiers.git import GitVerifier
from factledger.verifiers.git_settings import GitSettings, from_mapping

CONFIRMED = VerificationOutcome.CONFIRMED
REFUTED = VerificationOutcome.REFUTED
UNVERIFIABLE = VerificationOutcome.UNVERIFIABLE

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _IDENTITY
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


REGISTRY_PY = """\
MAX_SIZE = 10


def build_registry(cfg):
    return Registry(cfg)


class Registry:
    def load(self, name):
        return legacy_loader(name)
"""
TEST_PY = """\
from app.registry import build_registry


def test_build_registry():
    assert build_registry({})
"""
APP_JS = (
    "export function renderPage(props) {\n  return props;\n}\nconst fetchUser = async (id) => id;\n"
)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A working tree: three commits on main, a feature branch, a tag, a remote-tracking ref."""
    repo = tmp_path_factory.mktemp("site")
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, {"README.md": "# site\n"}, "readme")
    second = commit(
        repo, {"src/app/registry.py": REGISTRY_PY, "tests/test_registry.py": TEST_PY}, "registry"
    )
    git(repo, "tag", "v1.0")
    third = commit(repo, {"web/app.js": APP_JS}, "web")
    git(repo, "checkout", "-q", "-b", "feature/login")
    feature = commit(repo, {"src/app/login.py": "def login(user):\n    return user\n"}, "login")
    git(repo, "checkout", "-q", "main")
    git(repo, "update-ref", "refs/remotes/origin/release", second)
    return {"path": repo, "commits": (first, second, third), "feature": feature}


def settings(**repositories: str) -> GitSettings:
    return from_mapping(
        {"repositories": {k.replace("__", "/"): v for k, v in repositories.items()}}
    )


def turn(*arguments: dict[str, Any], service: str = "", agent: str = "") -> Turn:
    calls = tuple(
        ToolCall(name="git", call_id=f"c{i}", arguments=a) for i, a in enumerate(arguments)
    )
    return Turn(reply="done", tool_calls=calls, service=service, agent=agent)


def ask(
    verifier: GitVerifier,
    kind: SubjectKind,
    name: str,
    on: Turn | None = None,
    *,
    absent: bool = False,
    timeout: float = 10.0,
) -> Verification:
    found = verifier.verify(Subject(kind, name, claimed_absent=absent), on or turn(), timeout)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def site(checkout: dict[str, Any]) -> GitVerifier:
    return GitVerifier(settings(acme__site=str(checkout["path"])))


# -- commits -------------------------------------------------------------------------


def test_commits_real_and_invented(site: GitVerifier, checkout: dict[str, Any]) -> None:
    first, second, third = checkout["commits"]
    for real in (first, second[:7], third[:9], checkout["feature"][:12], third.upper()):
        found = ask(site, SubjectKind.COMMIT, real)
        assert found.outcome is REFUTED, (real, found)
    invented = ask(site, SubjectKind.COMMIT, "deadbee")
    assert invented.outcome is CONFIRMED
    assert invented.answer == "no such commit"
    assert invented.query == "git rev-parse --verify --end-of-options deadbee^{commit}"
    assert invented.source == "git:acme/site"
    assert ask(site, SubjectKind.COMMIT, "0" * 40).outcome is CONFIRMED


def test_a_commit_claimed_absent_that_exists_is_confirmed(
    site: GitVerifier, checkout: dict[str, Any]
) -> None:
    assert (
        ask(site, SubjectKind.COMMIT, checkout["commits"][0][:8], absent=True).outcome is CONFIRMED
    )
    assert ask(site, SubjectKind.COMMIT, "deadbeef", absent=True).outcome is REFUTED


def test_the_evidence_names_the_resolved_commit_and_its_timing(
    site: GitVerifier, checkout: dict[str, Any]
) -> None:
    before = time.time()
    found = ask(site, SubjectKind.COMMIT, checkout["commits"][1][:7])
    assert checkout["commits"][1] in found.answer
    assert found.query.startswith("git rev-parse --verify --end-of-options ")
    assert "git for-each-ref --count=1" in found.query
    assert before <= found.checked_at <= time.time()
    assert found.duration_ms > 0


def test_a_prefix_shorter_than_seven_is_refused(site: GitVerifier) -> None:
    found = ask(site, SubjectKind.COMMIT, "abcd")
    assert (found.outcome, found.reason, found.query) == (UNVERIFIABLE, "too short", "")


def _colliding_commits(tree: str) -> tuple[bytes, bytes]:
    """Two commit objects whose ids share their first 7 hex digits (a birthday search
    over messages: about 20 000 hashes)."""
    seen: dict[str, bytes] = {}
    for n in range(400_000):
        body = (
            f"tree {tree}\nauthor Ada <ada@example.com> 1700000000 +0000\n"
            f"committer Ada <ada@example.com> 1700000000 +0000\n\ncollision {n}\n"
        ).encode()
        prefix = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()[:7]
        if prefix in seen:
            return seen[prefix], body
        seen[prefix] = body
    raise AssertionError("no collision found")


def test_an_ambiguous_prefix_is_unverifiable(tmp_path: Path) -> None:
    repo = tmp_path / "amb"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"a.txt": "a\n"}, "a")
    ids = []
    for i, body in enumerate(_colliding_commits(git(repo, "rev-parse", "HEAD^{tree}"))):
        ids.append(git(repo, "hash-object", "-t", "commit", "-w", "--stdin", stdin=body.decode()))
        git(repo, "update-ref", f"refs/heads/c{i}", ids[-1])
    assert ids[0][:7] == ids[1][:7] and ids[0] != ids[1]
    verifier = GitVerifier(settings(acme__amb=str(repo)))
    found = ask(verifier, SubjectKind.COMMIT, ids[0][:7])
    assert (found.outcome, found.reason) == (UNVERIFIABLE, "ambiguous")
    assert ask(verifier, SubjectKind.COMMIT, ids[0][:12]).outcome is REFUTED


# -- refs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("main", REFUTED),
        ("feature/login", REFUTED),
        ("v1.0", REFUTED),
        ("refs/tags/v1.0", REFUTED),
        ("origin/release", REFUTED),
        ("release", REFUTED),
        ("feature/logout", CONFIRMED),
        ("v9.9", CONFIRMED),
        ("feature", CONFIRMED),
        ("login", CONFIRMED),
        ("bad..name", CONFIRMED),
    ],
    ids=lambda v: str(v),
)
def test_refs(site: GitVerifier, name: str, outcome: VerificationOutcome) -> None:
    assert ask(site, SubjectKind.REF, name).outcome is outcome


# -- paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "outcome", "answer"),
    [
        ("src/app/registry.py", REFUTED, "src/app/registry.py: blob"),
        ("./src/app/registry.py", REFUTED, "blob"),
        ("src/app", REFUTED, "src/app: tree"),
        ("src/app/", REFUTED, "tree"),
        ("web/app.js", REFUTED, "blob"),
        ("src/app/registry.py/", CONFIRMED, "no such directory"),
        ("src/app/models.py", CONFIRMED, "no such path at HEAD"),
        ("src/ap", CONFIRMED, "no such path"),
        ("src/app/login.py", CONFIRMED, "no such path"),
    ],
    ids=lambda v: str(v),
)
def test_paths_at_head(
    site: GitVerifier, name: str, outcome: VerificationOutcome, answer: str
) -> None:
    found = ask(site, SubjectKind.PATH, name)
    assert found.outcome is outcome
    assert answer in found.answer


def test_a_path_is_asked_at_the_ref_the_calls_named(site: GitVerifier) -> None:
    on_branch = turn({"repo": "acme/site", "branch": "feature/login"})
    assert ask(site, SubjectKind.PATH, "src/app/login.py", on_branch).outcome is REFUTED
    at_tag = turn({"ref": "v1.0"})
    assert ask(site, SubjectKind.PATH, "web/app.js", at_tag).outcome is CONFIRMED
    nowhere = ask(site, SubjectKind.PATH, "web/app.js", turn({"branch": "gone"}))
    assert (nowhere.outcome, nowhere.reason) == (UNVERIFIABLE, "unknown ref")


def test_a_path_relative_to_the_directory_the_calls_worked_in(
    site: GitVerifier, checkout: dict[str, Any]
) -> None:
    in_src = turn({"cwd": str(checkout["path"] / "src")})
    found = ask(site, SubjectKind.PATH, "app/registry.py", in_src)
    assert found.outcome is REFUTED and "src/app/registry.py" in found.answer
    relative = turn({"path": "src/app"})
    assert ask(site, SubjectKind.PATH, "registry.py", relative).outcome is REFUTED
    # A bare file name may be anywhere: the whole tree is read for it.
    anywhere = ask(site, SubjectKind.PATH, "registry.py")
    assert anywhere.outcome is REFUTED and "src/app/registry.py" in anywhere.answer
    assert "ls-tree -r -z --name-only --full-tree" in anywhere.query
    nowhere = ask(site, SubjectKind.PATH, "registry_v2.py")
    assert nowhere.outcome is CONFIRMED
    assert nowhere.answer == "no file named registry_v2.py anywhere at HEAD"


# -- symbols -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "outcome", "answer"),
    [
        ("build_registry", REFUTED, "defined at src/app/registry.py:4:"),
        ("build_registry(cfg)", REFUTED, "defined at"),
        ("Registry", REFUTED, "class Registry"),
        ("Registry.load", REFUTED, "def load"),
        ("MAX_SIZE", REFUTED, "MAX_SIZE = 10"),
        ("test_build_registry", REFUTED, "tests/test_registry.py"),
        ("tests/test_registry.py::test_build_registry", REFUTED, "def test_build_registry"),
        ("renderPage", REFUTED, "web/app.js"),
        ("fetchUser", REFUTED, "const fetchUser"),
        ("legacy_loader", REFUTED, "mentioned, no definition found: src/app/registry.py:10:"),
        ("build_registries", CONFIRMED, "no definition or mention"),
        ("RegistryLoader()", CONFIRMED, "no definition or mention"),
    ],
    ids=lambda v: str(v),
)
def test_symbols(site: GitVerifier, name: str, outcome: VerificationOutcome, answer: str) -> None:
    found = ask(site, SubjectKind.SYMBOL, name)
    assert found.outcome is outcome
    assert answer in found.answer


def test_a_symbol_claimed_absent(site: GitVerifier) -> None:
    assert ask(site, SubjectKind.SYMBOL, "build_registry", absent=True).outcome is CONFIRMED
    assert ask(site, SubjectKind.SYMBOL, "no_such_thing", absent=True).outcome is REFUTED
    mention = ask(site, SubjectKind.SYMBOL, "legacy_loader", absent=True)
    assert (mention.outcome, mention.reason) == (UNVERIFIABLE, "mention only")


def test_a_symbol_on_a_branch(site: GitVerifier) -> None:
    assert ask(site, SubjectKind.SYMBOL, "login").outcome is CONFIRMED
    assert (
        ask(site, SubjectKind.SYMBOL, "login", turn({"branch": "feature/login"})).outcome is REFUTED
    )


# -- which repository ----------------------------------------------------------------


@pytest.fixture(scope="module")
def two(checkout: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> GitVerifier:
    other = tmp_path_factory.mktemp("api")
    git(other, "init", "-q", "-b", "main")
    commit(other, {"api/server.go": "package api\n\nfunc Serve() {}\n"}, "api")
    return GitVerifier(
        from_mapping(
            {
                "repositories": {"acme/site": str(checkout["path"]), "acme/api": str(other)},
                "defaults": {"checkout": "acme/site", "api-agent": "acme/api"},
            }
        )
    )


@pytest.mark.parametrize(
    ("on", "source"),
    [
        (turn({"repo": "acme/site"}), "git:acme/site"),
        (turn({"repository": "ACME/API"}), "git:acme/api"),
        (turn({"owner": "acme", "repo": "api"}), "git:acme/api"),
        (turn({"url": "https://github.com/acme/api/blob/main/api/server.go"}), "git:acme/api"),
        (turn({"remote_url": "git@github.com:acme/site.git"}), "git:acme/site"),
        (turn({"input": {"repo_name": "acme/api"}}), "git:acme/api"),
        (turn(service="checkout"), "git:acme/site"),
        (turn(agent="api-agent"), "git:acme/api"),
    ],
    ids=[
        "repo",
        "repository-casefold",
        "owner+repo",
        "github-url",
        "scp-url",
        "nested",
        "service",
        "agent",
    ],
)
def test_the_repository_comes_from_the_calls_or_the_defaults(
    two: GitVerifier, on: Turn, source: str
) -> None:
    assert ask(two, SubjectKind.COMMIT, "deadbeef", on).source == source


def test_a_cwd_inside_a_checkout_names_it(two: GitVerifier, checkout: dict[str, Any]) -> None:
    on = turn({"cwd": str(checkout["path"] / "web")})
    found = ask(two, SubjectKind.PATH, "app.js", on)
    assert (found.source, found.outcome) == ("git:acme/site", REFUTED)


def test_a_name_in_any_of_the_named_repositories_exists(two: GitVerifier) -> None:
    both = turn({"repo": "acme/site"}, {"repo": "acme/api"})
    found = ask(two, SubjectKind.SYMBOL, "Serve", both)
    assert (found.outcome, found.source) == (REFUTED, "git:acme/api")
    assert found.query.count("git grep") == 3  # two in acme/site, one in acme/api
    assert ask(two, SubjectKind.SYMBOL, "Nowhere", both).outcome is CONFIRMED


def test_no_repository_for_the_turn_is_no_source(two: GitVerifier) -> None:
    assert two.verify(Subject(SubjectKind.COMMIT, "deadbeef"), turn({"repo": "other/x"}), 5) is None
    assert two.verify(Subject(SubjectKind.COMMIT, "deadbeef"), turn(service="billing"), 5) is None
    assert (
        two.verify(Subject(SubjectKind.URL, "https://x.test"), turn(service="checkout"), 5) is None
    )


# -- hostile names -------------------------------------------------------------------

HOSTILE = [
    "--upload-pack=touch {marker}",
    "--output={marker}",
    "$(touch {marker})",
    "`touch {marker}`",
    "; touch {marker}",
    "main; touch {marker}",
    "main\ntouch {marker}",
    "a\0b",
    "../../etc/passwd",
    "/etc/passwd",
    "src/../../{marker}",
]


@pytest.mark.parametrize(
    "kind", [SubjectKind.COMMIT, SubjectKind.REF, SubjectKind.PATH, SubjectKind.SYMBOL]
)
@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_names_run_nothing(
    site: GitVerifier, tmp_path: Path, kind: SubjectKind, template: str
) -> None:
    marker = tmp_path / "marker"
    name = template.format(marker=marker)
    found = ask(site, kind, name)
    assert not marker.exists()
    if found.outcome is UNVERIFIABLE:
        assert found.reason == "unsafe name"
    else:
        assert found.outcome is CONFIRMED


def test_a_hostile_ref_in_the_calls_is_ignored(site: GitVerifier, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    on = turn({"branch": f"--output={marker}"})
    assert ask(site, SubjectKind.SYMBOL, "build_registry", on).outcome is REFUTED
    assert not marker.exists()


# -- mirrors -------------------------------------------------------------------------


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A bare remote, a clone that pushes to it, and a mirror setting over file://."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    git(work, "checkout", "-q", "-b", "main")
    base = commit(work, {"lib/core.py": "def core():\n    pass\n"}, "core")
    tip = commit(work, {"lib/extra.py": "def extra():\n    pass\n"}, "extra")
    git(work, "push", "-q", "origin", "main")
    yield {"bare": bare, "work": work, "base": base, "tip": tip, "mirrors": tmp_path / "mirrors"}


def mirrored(remote: dict[str, Any], interval: float) -> GitVerifier:
    return GitVerifier(
        from_mapping(
            {
                "repositories": {"acme/lib": f"file://{remote['bare']}"},
                "mirror_dir": str(remote["mirrors"]),
                "min_fetch_interval_seconds": interval,
            }
        )
    )


def test_a_mirror_is_cloned_on_first_use(remote: dict[str, Any]) -> None:
    verifier = mirrored(remote, 30)
    found = ask(verifier, SubjectKind.COMMIT, remote["tip"][:7])
    assert found.outcome is REFUTED
    assert found.query.startswith("git clone --mirror --quiet -- file://")
    assert ask(verifier, SubjectKind.PATH, "lib/extra.py").outcome is REFUTED
    mirror = verifier.mirror("acme/lib")
    assert mirror is not None and mirror.fetches == 1 and mirror.git_dir.is_dir()


def test_a_rewritten_history_is_fetched_before_a_commit_is_confirmed_absent(
    remote: dict[str, Any],
) -> None:
    verifier = mirrored(remote, 0)
    assert ask(verifier, SubjectKind.COMMIT, remote["tip"]).outcome is REFUTED
    work = remote["work"]
    git(work, "reset", "-q", "--hard", remote["base"])
    rewritten = commit(work, {"lib/other.py": "def other():\n    pass\n"}, "rewrite")
    git(work, "push", "-q", "--force", "origin", "main")
    gone = ask(verifier, SubjectKind.COMMIT, remote["tip"][:10])
    assert gone.outcome is CONFIRMED, gone
    assert "git fetch --prune --quiet --end-of-options origin +refs/*:refs/*" in gone.query
    assert ask(verifier, SubjectKind.COMMIT, rewritten[:7]).outcome is REFUTED
    assert ask(verifier, SubjectKind.PATH, "lib/extra.py").outcome is CONFIRMED


def test_a_branch_pushed_after_the_clone_is_found_after_a_fetch(remote: dict[str, Any]) -> None:
    verifier = mirrored(remote, 0)
    assert ask(verifier, SubjectKind.REF, "topic").outcome is CONFIRMED
    git(remote["work"], "push", "-q", "origin", "main:refs/heads/topic")
    assert ask(verifier, SubjectKind.REF, "topic").outcome is REFUTED


def test_the_minimum_fetch_interval_is_respected(remote: dict[str, Any]) -> None:
    verifier = mirrored(remote, 3600)
    mirror = verifier.mirror("acme/lib")
    assert mirror is not None
    for name in ("deadbeef", "cafebabe", "feedface"):
        assert ask(verifier, SubjectKind.COMMIT, name).outcome is CONFIRMED
    assert mirror.fetches == 1  # the clone; fresh since, so absence is read from it
    eager = mirrored(remote, 0)
    for name in ("deadbeef", "cafebabe"):
        assert ask(eager, SubjectKind.COMMIT, name).outcome is CONFIRMED
    assert eager.mirror("acme/lib") is not None
    assert mirror.fetches == 1
    assert eager.mirror("acme/lib").fetches == 2  # type: ignore[union-attr]


def test_a_stale_mirror_fetches_once_for_concurrent_verifications(remote: dict[str, Any]) -> None:
    verifier = mirrored(remote, 3600)
    ask(verifier, SubjectKind.COMMIT, remote["tip"])
    mirror = verifier.mirror("acme/lib")
    assert mirror is not None
    stamp = mirror.git_dir / "factledger-fetched"
    os.utime(stamp, (time.time() - 7200, time.time() - 7200))
    results: list[Verification] = []
    threads = [
        threading.Thread(
            target=lambda n=n: results.append(ask(verifier, SubjectKind.COMMIT, f"{n:07x}"))
        )
        for n in (0xABCDEF0, 0xABCDEF1, 0xABCDEF2, 0xABCDEF3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.outcome for r in results] == [CONFIRMED] * 4
    assert mirror.fetches == 2


def test_a_mirror_whose_remote_is_gone_refutes_but_never_confirms(remote: dict[str, Any]) -> None:
    verifier = mirrored(remote, 0)
    assert ask(verifier, SubjectKind.COMMIT, remote["tip"]).outcome is REFUTED
    remote["bare"].rename(remote["bare"].with_name("moved.git"))
    still = ask(verifier, SubjectKind.COMMIT, remote["tip"])
    assert still.outcome is REFUTED and still.query.startswith("git fetch")
    absent = ask(verifier, SubjectKind.COMMIT, "deadbeef")
    assert (absent.outcome, absent.reason, absent.retryable) == (UNVERIFIABLE, "unreachable", True)
    assert absent.query.count("git fetch") == 1 and "rev-parse" in absent.query


def test_an_unreachable_remote_is_unverifiable_and_retryable(tmp_path: Path) -> None:
    verifier = GitVerifier(
        from_mapping(
            {
                "repositories": {"acme/gone": f"file://{tmp_path}/missing.git"},
                "mirror_dir": str(tmp_path / "mirrors"),
            }
        )
    )
    found = ask(verifier, SubjectKind.COMMIT, "deadbeef")
    assert (found.outcome, found.reason, found.retryable) == (UNVERIFIABLE, "unreachable", True)
    assert "missing.git" in found.answer
    assert not list((tmp_path / "mirrors").iterdir())  # no half-made mirror left


def test_a_failed_fetch_answers_the_next_names_at_once(tmp_path: Path) -> None:
    verifier = GitVerifier(
        from_mapping(
            {
                "repositories": {"acme/gone": f"file://{tmp_path}/missing.git"},
                "mirror_dir": str(tmp_path / "mirrors"),
            }
        )
    )
    for name in ("deadbeef", "cafebabe", "feedface"):
        found = ask(verifier, SubjectKind.COMMIT, name)
        assert (found.outcome, found.reason) == (UNVERIFIABLE, "unreachable")
        assert "missing.git" in found.answer
    mirror = verifier.mirror("acme/gone")
    assert mirror is not None and mirror.fetches == 1


def test_a_missing_checkout_is_unreachable(tmp_path: Path) -> None:
    verifier = GitVerifier(settings(acme__gone=str(tmp_path / "nowhere")))
    found = ask(verifier, SubjectKind.PATH, "README.md")
    assert (found.outcome, found.reason, found.retryable) == (UNVERIFIABLE, "unreachable", True)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback TCP server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def test_a_remote_that_never_answers_times_out(silent_server: int, tmp_path: Path) -> None:
    verifier = GitVerifier(
        from_mapping(
            {
                "repositories": {"acme/slow": f"http://127.0.0.1:{silent_server}/slow.git"},
                "mirror_dir": str(tmp_path / "mirrors"),
            }
        )
    )
    started = time.monotonic()
    found = ask(verifier, SubjectKind.COMMIT, "deadbeef", timeout=1.0)
    elapsed = time.monotonic() - started
    assert (found.outcome, found.reason, found.retryable) == (UNVERIFIABLE, "timeout", True)
    assert elapsed < 2.5
    assert found.query.startswith("git clone --mirror")


# -- settings ------------------------------------------------------------------------


def test_settings_from_plain_data(tmp_path: Path) -> None:
    built = from_mapping(
        {
            "repositories": {
                "acme/site": str(tmp_path),
                "acme/api": "https://github.com/acme/api",
                "acme/local": {"location": str(tmp_path / "bare.git"), "mirror": True},
            },
            "defaults": {"checkout": "acme/site"},
            "mirror_dir": str(tmp_path / "m"),
            "min_fetch_interval_seconds": 5,
        }
    )
    assert [(r.name, r.mirror) for r in built.repositories] == [
        ("acme/site", False),
        ("acme/api", True),
        ("acme/local", True),
    ]
    assert dict(built.defaults) == {"checkout": "acme/site"}
    assert (built.mirror_dir, built.min_fetch_interval_seconds) == (tmp_path / "m", 5.0)
    assert from_mapping({}).min_fetch_interval_seconds == 30.0


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"repository": {}}, "'repository'"),
        ({"repositories": ["a"]}, "verification.git.repositories"),
        ({"repositories": {"a/b": 3}}, "repositories.a/b"),
        ({"repositories": {"a/b": "--upload-pack=touch x"}}, "repositories.a/b"),
        ({"repositories": {"a/b": {"location": "/x", "mirror": "yes"}}}, "repositories.a/b.mirror"),
        (
            {"repositories": {"a/b": {"location": "https://x.test/r", "mirror": False}}},
            "a/b.mirror",
        ),
        ({"defaults": {"svc": "a/b"}}, "defaults.svc"),
        ({"defaults": ["a"]}, "verification.git.defaults"),
        ({"mirror_dir": 3}, "mirror_dir"),
        ({"min_fetch_interval_seconds": -1}, "min_fetch_interval_seconds"),
        ({"min_fetch_interval_seconds": "30"}, "min_fetch_interval_seconds"),
    ],
    ids=lambda v: str(v),
)
def test_bad_settings_name_the_key(data: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=key.replace(".", r"\.").replace("'", "'")):
        from_mapping(data)
