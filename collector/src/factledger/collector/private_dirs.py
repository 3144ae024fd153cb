"""The service's files are private to its user: 0700 directories, 0600 files.

The data directory holds the embedded store and the write-ahead log, whose segments are
raw requests, secrets included, until they are stored. `PRIVATE_UMASK` is set for the
whole service process by `factledger serve` and `factledger up`, so that whatever is
created later (chDB's own parts, temporary files, the judge worker's) gets no group or
other bits; `private_directory` makes the directories themselves 0700 whatever the umask
and whoever created them first (`mkdir /data` in the image leaves 0755), so that what is
inside stays unreachable to other users even if some file escaped the umask.
"""

from __future__ import annotations

import os
from pathlib import Path

from factledger.processors.errors import ConfigError

PRIVATE_UMASK = 0o077
DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_directory(path: Path) -> Path:
    """Create `path` (with any missing parents) and make it 0700, also when it existed.

    Raises OSError when it cannot: a data directory the service cannot make private
    (another user's, say) is a start-up error, not something to run with."""
    path.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    path.chmod(DIRECTORY_MODE)  # mkdir's mode is filtered by the umask, and not applied
    return path  # to a directory that was there already


def usable_data_directory(path: Path) -> Path:
    """`private_directory(path)`, and a file written and removed in it, before the service
    starts. Raises ConfigError naming the directory and the reason in one line: read-only,
    below a regular file, another user's. (A check of the mode bits would pass for root,
    whom only the write itself stops.)"""
    try:
        private_directory(path)
        probe = path / f".write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"data directory {path} (--data-dir, FACTLEDGER_DATA_DIR) cannot be created or"
            f" written: {reason}"
        ) from None
    return path


def restrict_umask() -> int:
    """Set the process umask to `PRIVATE_UMASK`; returns the previous one."""
    return os.umask(PRIVATE_UMASK)
