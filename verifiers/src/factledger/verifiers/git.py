"""Git repositories as a source of truth for commits, refs, paths and symbols.

What counts as evidence: the repository the turn's tool calls worked on (or the one
configured for its service or agent), asked with git's plumbing at the ref the calls
named (HEAD otherwise). A commit exists when a ref or HEAD reaches it; a ref is a branch,
tag or remote-tracking branch; a path is a tree entry at the ref (a trailing `/` asks for
a directory), from the root or under a sub-directory the calls worked in; a symbol is a
definition at the ref, or failing that a mention (said so in the answer).

A mirror is fetched before it is asked when its last fetch is older than
`min_fetch_interval_seconds` (so a rewritten history is seen: the commits it removed are
gone, the new ones found). When that fetch fails, what the mirror still holds may refute
a finding but never confirms one: the answer is `unreachable` (or `timeout`), retryable.
When the turn concerns several repositories, a name is absent only when absent from all.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
    existence_outcome,
)

from . import git_names
from .git_checks import (
    TIMEOUT,
    UNKNOWN_REF,
    Probe,
    bounded,
    check_commit,
    check_path,
    check_ref,
    check_symbol,
)
from .git_command import run_git
from .git_mirror import FetchResult, GitMirror
from .git_scope import GitScope, scopes
from .git_settings import GitRepository, GitSettings

UNREACHABLE = "unreachable"
MENTION_ONLY = "mention only"

_Name = str | git_names.RepoPath


@dataclass(frozen=True)
class _Asked:
    """One repository's probe."""

    repository: GitRepository
    probe: Probe


class GitVerifier:
    """A `Verifier` over the repositories of `GitSettings`. Thread-safe: verifications
    of one repository may run at once; its mirror fetches one at a time."""

    kinds = frozenset({SubjectKind.COMMIT, SubjectKind.REF, SubjectKind.PATH, SubjectKind.SYMBOL})

    def __init__(self, settings: GitSettings) -> None:
        self._settings = settings
        self._mirrors = {
            r.name: GitMirror(r, settings.mirror_dir, settings.min_fetch_interval_seconds)
            for r in settings.repositories
            if r.mirror
        }
        self._git_dirs: dict[str, str] = {}
        self._git_dirs_lock = threading.Lock()

    @property
    def name(self) -> str:
        return "git"

    def mirror(self, repository: str) -> GitMirror | None:
        """The mirror of a repository configured by URL (None for one asked in place)."""
        return self._mirrors.get(repository)

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        """The repositories' answer about `subject` within `timeout` seconds; None for a
        kind git does not hold or a turn no repository is configured for."""
        if subject.kind not in self.kinds:
            return None
        found = scopes(turn, self._settings)
        if not found:
            return None
        started = time.monotonic()
        checked_at = time.time()
        source = "git:" + ",".join(s.repository.name for s in found)
        try:
            name = _parse(subject)
        except ValueError as refused:
            return Verification(
                subject,
                VerificationOutcome.UNVERIFIABLE,
                source,
                answer=f"not passed to git: {bounded(subject.name, 80)!r}",
                checked_at=checked_at,
                reason=str(refused),
            )
        deadline = started + timeout
        asked = [_Asked(s.repository, self._ask(s, subject, name, deadline)) for s in found]
        # Existing in any repository settles it; else an undecided one leaves it open.
        chosen = next((a for a in asked if a.probe.exists), None) or next(
            (a for a in asked if a.probe.exists is None), asked[0]
        )
        probe = chosen.probe
        exists = probe.exists
        if exists is None:
            outcome = VerificationOutcome.UNVERIFIABLE
        elif probe.mention_only and subject.claimed_absent:
            # "foo is not defined" and git finds foo only used: that does not contradict it.
            outcome, probe = VerificationOutcome.UNVERIFIABLE, replace(probe, reason=MENTION_ONLY)
        else:
            outcome = existence_outcome(subject, exists)
        return Verification(
            subject,
            outcome,
            f"git:{chosen.repository.name}",
            query="; ".join(q for a in asked for q in a.probe.queries),
            answer=probe.answer,
            checked_at=checked_at,
            duration_ms=(time.monotonic() - started) * 1000,
            reason=probe.reason,
            retryable=probe.retryable,
        )

    def _ask(self, scope: GitScope, subject: Subject, name: _Name, deadline: float) -> Probe:
        mirror = self._mirrors.get(scope.repository.name)
        if mirror is None:
            git_dir = self._local_git_dir(scope.repository, deadline)
            if isinstance(git_dir, Probe):
                return git_dir
            return _check(git_dir, scope, subject.kind, name, deadline)
        ran: list[str] = []
        failed: FetchResult | None = None
        if mirror.stale:
            fetched = mirror.update(deadline)
            if fetched is not None:
                ran.append(fetched.result.query)
                if not fetched.ok:
                    failed = fetched
            if failed is not None and (not mirror.exists or time.monotonic() >= deadline):
                return _fetch_failed(failed, tuple(ran))
        probe = _check(str(mirror.git_dir), scope, subject.kind, name, deadline)
        ran.extend(probe.queries)
        would_confirm = probe.exists is not None and probe.exists == subject.claimed_absent
        if failed is not None and (would_confirm or probe.reason == UNKNOWN_REF):
            # What a mirror that could not be brought up to date still holds may refute
            # a finding, never confirm one.
            return _fetch_failed(failed, tuple(ran))
        return replace(probe, queries=tuple(ran))

    def _local_git_dir(self, repository: GitRepository, deadline: float) -> str | Probe:
        with self._git_dirs_lock:
            known = self._git_dirs.get(repository.name)
        if known is not None:
            return known
        found = run_git(
            ("rev-parse", "--absolute-git-dir"),
            git_dir=None,
            cwd=repository.location,
            timeout=deadline - time.monotonic(),
        )
        if found.timed_out:
            return Probe(
                None, (found.query,), "git did not answer in time", TIMEOUT, retryable=True
            )
        if not found.ok:
            answer = bounded(found.stderr) or f"{repository.location} is not a git repository"
            return Probe(None, (found.query,), answer, UNREACHABLE, retryable=True)
        git_dir = found.stdout.strip()
        with self._git_dirs_lock:
            self._git_dirs[repository.name] = git_dir
        return git_dir


def _parse(subject: Subject) -> _Name:
    """The subject's name in the shape its check takes; ValueError(reason) to refuse it."""
    if subject.kind is SubjectKind.COMMIT:
        return git_names.commit_prefix(subject.name)
    if subject.kind is SubjectKind.PATH:
        return git_names.repo_path(subject.name)
    if subject.kind is SubjectKind.SYMBOL:
        return git_names.symbol_name(subject.name)
    name = subject.name.strip()
    if git_names.is_unsafe(name):
        raise ValueError(git_names.UNSAFE)
    return name


def _check(git_dir: str, scope: GitScope, kind: SubjectKind, name: _Name, deadline: float) -> Probe:
    if isinstance(name, git_names.RepoPath):
        return check_path(git_dir, scope, name, deadline)
    if kind is SubjectKind.COMMIT:
        return check_commit(git_dir, name, deadline)
    if kind is SubjectKind.REF:
        return check_ref(git_dir, name, deadline)
    return check_symbol(git_dir, scope, name, deadline)


def _fetch_failed(fetched: FetchResult, queries: tuple[str, ...]) -> Probe:
    result = fetched.result
    if result.timed_out:
        return Probe(None, queries, "fetch did not finish in time", TIMEOUT, retryable=True)
    answer = bounded(result.stderr) or f"git exited with {result.returncode}"
    return Probe(None, queries, answer, UNREACHABLE, retryable=True)
