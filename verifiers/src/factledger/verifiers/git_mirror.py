"""A bare mirror of a remote repository, fetched on demand and not more often than needed.

The first use clones it (`git clone --mirror` into a temporary directory, renamed into
place when complete, so a clone cut off by its deadline leaves nothing half made). Later
fetches take every ref as the remote has it, `+refs/*:refs/*` with `--prune`: a rewritten
history replaces the old refs, and branches deleted upstream go. A fetch happens at most
once per `min_interval` seconds per mirror (the time of the last one is a file's mtime
in the mirror, so it holds across restarts); one lock per mirror means two verifications
never fetch the same repository at once: the second waits and finds it fresh.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .git_command import GitResult, run_git
from .git_settings import GitRepository

_FETCHED_MARK = "factledger-fetched"
FAILED_FETCH_SECONDS = 30.0
"""How long a failed fetch stands for the next ones: a remote that is down answers every
name of a turn at once instead of costing each its whole timeout again."""


@dataclass(frozen=True)
class FetchResult:
    """A fetch (or first clone) that ran; `result` is git's own account of it."""

    result: GitResult

    @property
    def ok(self) -> bool:
        return self.result.ok


def mirror_directory(mirror_dir: Path, repository: GitRepository) -> Path:
    """One directory per name and location: a changed location is a new mirror."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", repository.name).strip("._") or "repo"
    digest = hashlib.sha256(repository.location.encode()).hexdigest()[:12]
    return mirror_dir / f"{slug}-{digest}.git"


class GitMirror:
    """The mirror of one repository. Thread-safe."""

    def __init__(
        self,
        repository: GitRepository,
        mirror_dir: Path,
        min_interval: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repository = repository
        self.git_dir = mirror_directory(mirror_dir, repository)
        self._mirror_dir = mirror_dir
        self._min_interval = min_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._failed: tuple[float, GitResult] | None = None
        self.fetches = 0
        """Fetches and clones started, for metrics and tests."""

    @property
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def fetched_ago(self) -> float | None:
        """Seconds since the last successful fetch; None when it never succeeded."""
        try:
            return self._clock() - (self.git_dir / _FETCHED_MARK).stat().st_mtime
        except OSError:
            return None

    @property
    def stale(self) -> bool:
        ago = self.fetched_ago()
        return ago is None or ago >= self._min_interval

    def update(self, deadline: float, *, only_if_stale: bool = True) -> FetchResult | None:
        """Clone or fetch before `deadline` (time.monotonic()); None when no fetch was
        needed (fresh, or another thread fetched while this one waited)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not self._lock.acquire(timeout=remaining):
            query = "git fetch --prune --quiet --end-of-options origin +refs/*:refs/*"
            return FetchResult(GitResult(query, -1, "", "", timed_out=True))
        try:
            if only_if_stale and self.exists and not self.stale:
                return None
            failed = self._failed
            if only_if_stale and failed is not None and time.monotonic() < failed[0]:
                return FetchResult(failed[1])
            self.fetches += 1
            result = self._fetch(deadline) if self.exists else self._clone(deadline)
            if result.ok:
                (self.git_dir / _FETCHED_MARK).touch()
                self._failed = None
            else:
                wait = min(self._min_interval, FAILED_FETCH_SECONDS)
                self._failed = (time.monotonic() + wait, result)
            return FetchResult(result)
        finally:
            self._lock.release()

    def _fetch(self, deadline: float) -> GitResult:
        args = ("fetch", "--prune", "--quiet", "--end-of-options", "origin", "+refs/*:refs/*")
        return run_git(args, git_dir=str(self.git_dir), timeout=deadline - time.monotonic())

    def _clone(self, deadline: float) -> GitResult:
        self._mirror_dir.mkdir(parents=True, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".clone-", dir=self._mirror_dir)
        target = os.path.join(staging, "repo.git")
        try:
            args = ("clone", "--mirror", "--quiet", "--", self.repository.location, target)
            result = run_git(args, git_dir=None, timeout=deadline - time.monotonic())
            if result.ok:
                try:
                    os.replace(target, self.git_dir)
                except OSError as error:
                    # Another process put its clone there first; that one serves.
                    if not self.exists:
                        return GitResult(result.query, 1, "", str(error))
            return result
        finally:
            shutil.rmtree(staging, ignore_errors=True)
