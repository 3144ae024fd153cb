"""The four questions asked of a repository, each with git's plumbing, as a `Probe`.

    commit   `rev-parse --verify <prefix>^{commit}`, then whether a ref (or HEAD) reaches
             it: a commit a rewrite removed lingers in the object store until gc, and a
             mirror keeps it; unreachable, it no longer exists in the repository
    ref      `show-ref -- <name>`: a branch, a tag, or a remote-tracking branch of that name
    path     `ls-tree <ref> -- <path>`, from the root and under each sub-directory the
             calls worked in; a trailing `/` asks for a directory
    symbol   `grep -E` for a definition in the common languages; failing that `grep -F -w`
             for a mention, which says the name is used, not that it is defined

A probe says whether the thing exists (None: git could not tell, with a reason), which
commands ran and what they answered, bounded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .git_command import OUTPUT_LIMIT, GitResult, run_git
from .git_names import RepoPath, is_ref_name
from .git_scope import GitScope

ANSWER_LIMIT = 300
TIMEOUT = "timeout"
AMBIGUOUS = "ambiguous"
UNKNOWN_REF = "unknown ref"
SHALLOW = "shallow repository"


@dataclass(frozen=True)
class Probe:
    exists: bool | None
    queries: tuple[str, ...]
    answer: str
    reason: str = ""
    retryable: bool = False
    mention_only: bool = False
    """A symbol found only where it is used, not where it is defined."""


def bounded(text: str, limit: int = ANSWER_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Asker:
    """Runs one probe's commands against one git dir before one deadline, keeping the
    queries; a command out of time ends the probe as `timeout`."""

    def __init__(self, git_dir: str, deadline: float) -> None:
        self.git_dir = git_dir
        self.deadline = deadline
        self.queries: list[str] = []

    def run(self, *args: str, output_limit: int = OUTPUT_LIMIT) -> GitResult:
        remaining = self.deadline - time.monotonic()
        result = run_git(args, git_dir=self.git_dir, timeout=remaining, output_limit=output_limit)
        self.queries.append(result.query)
        return result

    def probe(self, exists: bool | None, answer: str, reason: str = "", **kw: bool) -> Probe:
        return Probe(exists, tuple(self.queries), bounded(answer), reason, **kw)

    def timed_out(self) -> Probe:
        return self.probe(None, "git did not answer in time", TIMEOUT, retryable=True)


def check_commit(git_dir: str, prefix: str, deadline: float) -> Probe:
    ask = _Asker(git_dir, deadline)
    # Without --quiet: git then says "is ambiguous" on stderr for a prefix of two commits.
    resolved = ask.run("rev-parse", "--verify", "--end-of-options", f"{prefix}^{{commit}}")
    if resolved.timed_out:
        return ask.timed_out()
    if not resolved.ok:
        if "ambiguous" in resolved.stderr:
            candidates = [
                line.split("hint:", 1)[1]
                for line in resolved.stderr.splitlines()
                if "hint:   " in line
            ]
            return ask.probe(None, "ambiguous prefix: " + ";".join(candidates), AMBIGUOUS)
        if _is_shallow(git_dir):
            return ask.probe(None, "no such commit in a shallow clone", SHALLOW)
        return ask.probe(False, "no such commit")
    sha = resolved.stdout.strip()
    on_ref = ask.run("for-each-ref", "--count=1", "--format=%(refname)", f"--contains={sha}")
    if on_ref.timed_out:
        return ask.timed_out()
    if on_ref.ok and on_ref.stdout.strip():
        return ask.probe(True, f"{sha} on {on_ref.stdout.strip()}")
    on_head = ask.run("merge-base", "--is-ancestor", "--end-of-options", sha, "HEAD")
    if on_head.timed_out:
        return ask.timed_out()
    if on_head.ok:
        return ask.probe(True, f"{sha} on HEAD")
    return ask.probe(False, f"{sha} is on no ref (a commit rewritten away)")


def check_ref(git_dir: str, name: str, deadline: float) -> Probe:
    if not is_ref_name(name):
        return Probe(False, (), f"{name!r} is not a valid ref name")
    ask = _Asker(git_dir, deadline)
    listed = ask.run("show-ref", "--", name)
    if listed.timed_out:
        return ask.timed_out()
    refs = [line.split(" ", 1) for line in listed.stdout.splitlines() if " " in line]
    matches = [(sha, ref) for sha, ref in refs if _names_ref(ref, name)]
    if not matches:
        return ask.probe(False, "no such branch or tag")
    return ask.probe(True, ", ".join(f"{ref} {sha}" for sha, ref in matches[:3]))


def _names_ref(ref: str, name: str) -> bool:
    if name.startswith("refs/"):
        return ref == name
    if ref in (f"refs/heads/{name}", f"refs/tags/{name}", f"refs/remotes/{name}"):
        return True
    # refs/remotes/<remote>/<name>: a branch as a working tree's remote has it.
    return (
        ref.startswith("refs/remotes/")
        and ref.endswith(f"/{name}")
        and ref.count("/") == name.count("/") + 3
    )


def check_path(git_dir: str, scope: GitScope, path: RepoPath, deadline: float) -> Probe:
    ask = _Asker(git_dir, deadline)
    candidates = dict.fromkeys([path.path, *(f"{p}/{path.path}" for p in scope.prefixes)])
    for candidate in candidates:
        listed = ask.run(
            "ls-tree", "-z", "--full-tree", "--end-of-options", scope.ref, "--", candidate
        )
        if listed.timed_out:
            return ask.timed_out()
        if listed.returncode == 128:
            return ask.probe(None, bounded(listed.stderr) or f"no ref {scope.ref}", UNKNOWN_REF)
        for entry in listed.stdout.split("\0"):
            meta, _, entry_path = entry.partition("\t")
            fields = meta.split()
            if entry_path != candidate or len(fields) != 3:
                continue
            kind = fields[1]
            if path.directory and kind != "tree":
                continue
            return ask.probe(True, f"{candidate}: {kind} {fields[2][:12]} at {scope.ref}")
    if "/" not in path.path:
        return _bare_name(ask, scope, path)
    wanted = "directory" if path.directory else "path"
    return ask.probe(False, f"no such {wanted} at {scope.ref}: " + ", ".join(candidates))


def _bare_name(ask: _Asker, scope: GitScope, path: RepoPath) -> Probe:
    """A name given without its directory (`registry.py`) may be anywhere: it exists when
    any file (or, written `name/`, directory) of the tree has that name; absent only when
    the whole tree was read."""
    args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree"]
    if path.directory:
        args.append("-t")  # trees too, so a directory's own name is listed
    listed = ask.run(*args, "--end-of-options", scope.ref, output_limit=TREE_LISTING_LIMIT)
    if listed.timed_out:
        return ask.timed_out()
    if not listed.ok:
        return ask.probe(None, bounded(listed.stderr) or f"no ref {scope.ref}", UNKNOWN_REF)
    for entry in listed.stdout.split("\0"):
        if entry.rsplit("/", 1)[-1] == path.path:
            return ask.probe(True, f"{entry} at {scope.ref}")
    if listed.truncated:
        return ask.probe(None, f"the tree at {scope.ref} is too large to read whole", AMBIGUOUS)
    return ask.probe(False, f"no file named {path.path} anywhere at {scope.ref}")


TREE_LISTING_LIMIT = 32 * 1024 * 1024
"""Bytes of a whole tree's listing read for a bare file name (about 400,000 paths)."""


def _boundary_escaped(name: str) -> str:
    return name.replace("$", "[$]")


def definition_patterns(name: str) -> tuple[str, ...]:
    """POSIX extended regexes (git grep -E) for a definition of `name`: Python, JS/TS,
    Go, Rust, Ruby, Kotlin, PHP functions; classes, types and traits; module-level and
    `const`/`let` bindings; JS methods and object-literal functions."""
    n = _boundary_escaped(name)
    s = "[[:space:]]"
    end = "([^A-Za-z0-9_$]|$)"
    start = "(^|[^A-Za-z0-9_$.])"
    return (
        f"{start}(def|fn|fun|func|function)({s}*[*])?{s}+(self[.])?{n}{end}",
        f"{start}func{s}*[(][^)]*[)]{s}*{n}{end}",
        f"{start}(class|struct|enum|trait|interface|type|record|object|module|mod|protocol){s}+{n}{end}",
        f"^{s}*(export{s}+)?((const|let|var|val){s}+)?{n}{s}*(:[^=]*)?=([^=]|$)",
        f"^{s}*(async{s}+)?(static{s}+)?{n}{s}*[(][^)]*[)]{s}*[{{]",
        f"{start}{n}{s}*:{s}*(async{s}+)?(function|[(])",
    )


def check_symbol(git_dir: str, scope: GitScope, name: str, deadline: float) -> Probe:
    ask = _Asker(git_dir, deadline)
    patterns = [arg for p in definition_patterns(name) for arg in ("-e", p)]
    # git grep reads --end-of-options as a revision: each pattern is behind -e and the
    # ref passed git_names.revision (no leading "-"), so neither can read as an option.
    defined = ask.run("grep", "-I", "-n", "-E", *patterns, scope.ref, "--")
    if defined.timed_out:
        return ask.timed_out()
    if defined.returncode == 128:
        return ask.probe(None, bounded(defined.stderr) or f"no ref {scope.ref}", UNKNOWN_REF)
    if defined.ok or defined.truncated:
        return ask.probe(True, "defined at " + _first_hit(defined.stdout, scope.ref))
    mentioned = ask.run("grep", "-I", "-n", "-F", "-w", "-e", name, scope.ref, "--")
    if mentioned.timed_out:
        return ask.timed_out()
    if mentioned.ok or mentioned.truncated:
        hit = _first_hit(mentioned.stdout, scope.ref)
        return ask.probe(True, "mentioned, no definition found: " + hit, mention_only=True)
    return ask.probe(False, f"no definition or mention of {name} at {scope.ref}")


def _first_hit(stdout: str, ref: str) -> str:
    line = stdout.split("\n", 1)[0]
    return line.removeprefix(f"{ref}:")


def _is_shallow(git_dir: str) -> bool:
    return (Path(git_dir) / "shallow").exists()
