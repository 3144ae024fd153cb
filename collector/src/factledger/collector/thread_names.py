"""Service threads named in the operating system too.

CPython 3.11 leaves every thread's OS name (`comm`) as "python", so `top -H`, `ps -L` and
`/proc/<pid>/task/*/comm` cannot tell the span writer from the turn processor; the
ingest benchmark's CPU-per-thread table reads those names.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

_PR_SET_NAME = 15
_MAX_BYTES = 15
"""The kernel keeps 16 bytes of a thread's name, the last one a NUL."""


def set_os_thread_name(name: str) -> None:
    """Name the calling thread `name` (cut to 15 bytes) on Linux; elsewhere, or when the
    C library refuses, nothing happens: a name is an aid, never a condition."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:_MAX_BYTES]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def named(name: str, target: Callable[[], None]) -> Callable[[], None]:
    """`target`, run in a thread that first takes `name` as its OS name."""

    def run() -> None:
        set_os_thread_name(name)
        target()

    return run
