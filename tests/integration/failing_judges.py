"""A validator and a runner that raise on every turn, for the judging contract. A module of
its own: the judge worker process imports it to unpickle them."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, Turn, Verdict
from factledger.processors.runner import ValidationRunner


class CrashingValidator:
    """A validator with a bug: it raises on every turn."""

    name = "crashing"
    version = "1"
    kinds: frozenset[Kind] = frozenset()

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        raise RuntimeError("a validator bug")


class RaisingRunner(ValidationRunner):
    """A runner that raises outside every validator's own error handling."""

    def validate(self, turn: Turn) -> Verdict:
        raise RuntimeError("a runner bug")
