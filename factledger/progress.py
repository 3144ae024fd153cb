"""Progress on stderr for the commands that work through many records (`eval`, `replay`,
`demo`): a bar that appears only once a run has taken PROGRESS_DELAY_SECONDS, so a short
run prints nothing but its result."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

PROGRESS_DELAY_SECONDS = 1.0


def progress_bar(*, total: int | None, unit: str, enabled: bool = True) -> tqdm[Any]:
    """A tqdm bar on stderr, shown after PROGRESS_DELAY_SECONDS (never when `enabled` is
    False); use it as a context manager and call `update()` per record."""
    return tqdm(
        total=total,
        unit=unit,
        file=sys.stderr,
        delay=PROGRESS_DELAY_SECONDS,
        disable=not enabled,
    )
