"""Running git as a tool of verification: argument lists, a clean environment, a deadline.

Every token a reply names reaches git as one element of an argument list (never through
a shell) and after `--end-of-options` or `--`; the callers refuse tokens that would still
read as options. What the environment and the configuration could make git do beyond
reading objects is switched off here, once: no prompts for credentials, no hooks, no
fsmonitor, no `ext::` transport, no replace refs, no `GIT_DIR` of the calling process.

A command that outlives its deadline is killed with its whole process group (`git fetch`
runs `git-remote-https` as a child) and comes back `timed_out`; output beyond a bound
is cut and the command stopped, `truncated`, so a search with many hits stays small.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

OUTPUT_LIMIT = 64 * 1024
"""Bytes of stdout (and of stderr) kept from one command."""

# Transports a configured location may use; `ext::` would run a command.
_ALLOWED_PROTOCOLS = ("file", "git", "http", "https", "ssh")

SAFETY_OPTIONS: tuple[str, ...] = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "protocol.allow=never",
    *(item for p in _ALLOWED_PROTOCOLS for item in ("-c", f"protocol.{p}.allow=always")),
    "-c",
    "credential.interactive=false",
    # Mirrors are written by fetch alone; a gc started under a deadline would be killed.
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "--no-replace-objects",
    "--literal-pathspecs",
)
"""Options before every subcommand; `Verification.query` leaves them out (they never vary)."""


def git_environment() -> dict[str, str]:
    """The process's environment without its GIT_* variables, plus what keeps git
    non-interactive and its messages stable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        GIT_SSH_COMMAND="ssh -o BatchMode=yes",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PROTOCOL_FROM_USER="0",
        LC_ALL="C",
    )
    return env


@dataclass(frozen=True)
class GitResult:
    """What one git command did. `query` is its subcommand and arguments as run."""

    query: str
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def run_git(
    args: Sequence[str],
    *,
    git_dir: str | None,
    timeout: float,
    cwd: str | None = None,
    output_limit: int = OUTPUT_LIMIT,
) -> GitResult:
    """Run `git [safety options] [--git-dir=...] args` within `timeout` seconds.

    Never raises for a failing command: a missing git binary is returncode 127, a
    command out of time is `timed_out`.
    """
    query = " ".join(("git", *args))
    if timeout <= 0:
        return GitResult(query, -1, "", "", timed_out=True)
    argv = ["git", *SAFETY_OPTIONS]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    argv.extend(args)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_environment(),
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as error:
        return GitResult(query, 127, "", str(error))
    stop = threading.Event()
    out = _BoundedReader(process.stdout, stop, output_limit)
    err = _BoundedReader(process.stderr, None, OUTPUT_LIMIT)
    timed_out = False
    try:
        deadline = started + timeout
        while process.poll() is None:
            if stop.is_set():
                _kill(process)
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                _kill(process)
                break
            try:
                process.wait(min(remaining, 0.05))
            except subprocess.TimeoutExpired:
                continue
    finally:
        process.wait()
        out.join()
        err.join()
    return GitResult(
        query,
        process.returncode,
        out.text(),
        err.text(),
        timed_out=timed_out,
        truncated=out.full,
        duration_ms=(time.monotonic() - started) * 1000,
    )


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()


class _BoundedReader:
    """Drains one pipe on a thread, keeping its first `limit` bytes; sets `stop` (when
    given) once that much came, so the command can be ended early."""

    def __init__(self, pipe: IO[bytes] | None, stop: threading.Event | None, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = limit
        self.full = False
        self._thread = threading.Thread(target=self._drain, args=(pipe, stop), daemon=True)
        self._thread.start()

    def _drain(self, pipe: IO[bytes] | None, stop: threading.Event | None) -> None:
        if pipe is None:
            return
        with pipe:
            while chunk := os.read(pipe.fileno(), 8192):
                room = self._limit - self._size
                if room > 0:
                    self._chunks.append(chunk[:room])
                    self._size += min(len(chunk), room)
                if self._size >= self._limit and not self.full:
                    self.full = True
                    if stop is not None:
                        stop.set()

    def join(self) -> None:
        # Bounded: a process git left behind could hold the pipe open.
        self._thread.join(1.0)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")
