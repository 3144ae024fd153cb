"""Bounds on the work one turn may cost, so an adversarial reply cannot stall the pipeline.

Real replies stay far below these: a turn with more than a few dozen claims or
identifiers is already unusual. Past a bound the rest is not examined; the verdict
still stands on what was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

MAX_MATCHES_PER_PATTERN = 2_000
"""Candidates one pattern may yield per text (identifiers, claims, names, citations)."""

MAX_FINDINGS_PER_VALIDATOR = 50
"""Findings one validator may report for one turn; the runner keeps the first ones."""


def bounded_finditer(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, stopping after MAX_MATCHES_PER_PATTERN matches."""
    return islice(pattern.finditer(text), MAX_MATCHES_PER_PATTERN)
