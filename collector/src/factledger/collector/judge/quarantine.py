"""Turns that stopped the judge worker are not judged again.

A validator stuck inside C code (a regular expression backtracking on client text, say)
holds the worker's GIL: neither the turn time limit nor the heartbeat runs, and the
service kills the silent worker. Its open turns are read back from the store and handed
to the next worker, the stuck one among them, which would stop that worker too, and the
next, for as long as the turn stays in the recovery window.

So the worker notes the turn it is validating in a small file both processes hold (one
`pwrite` before and after each turn; no message, no lock). The service reads the note of
a worker it kills for silence and gives the next workers that turn id as quarantined:
they store the turn with a `validator_error` finding saying why, without validating it.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from factledger.processors.judging.core import TurnValidator
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, Turn, Verdict
from factledger.processors.runner import outcome_of

NOTE_BYTES = 256
"""Room for a turn id (hex digests: 32 to 64 characters) with a wide margin."""

MAX_QUARANTINED = 1_000
"""Turn ids the service keeps quarantined (the most recent ones)."""


class TurnNote:
    """The id of the turn being validated, in the first `NOTE_BYTES` of an open file."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, turn_id: str) -> None:
        os.pwrite(self._fd, turn_id.encode()[:NOTE_BYTES].ljust(NOTE_BYTES, b"\0"), 0)

    def clear(self) -> None:
        os.pwrite(self._fd, bytes(NOTE_BYTES), 0)

    def read(self) -> str:
        """The noted turn id; empty when no turn is being validated."""
        return os.pread(self._fd, NOTE_BYTES, 0).rstrip(b"\0").decode(errors="replace")


class QuarantiningRunner:
    """Validates through `runner`, noting each turn in `note`; turns whose id is in
    `quarantined` get a `validator_error` verdict instead of a second chance to hang."""

    def __init__(
        self, runner: TurnValidator, note: TurnNote, quarantined: Collection[str] = ()
    ) -> None:
        self._runner = runner
        self._note = note
        self._quarantined = frozenset(quarantined)

    def validate(self, turn: Turn) -> Verdict:
        if turn.turn_id in self._quarantined:
            return quarantined_verdict()
        self._note.write(turn.turn_id)
        try:
            return self._runner.validate(turn)
        finally:
            self._note.clear()


def quarantined_verdict() -> Verdict:
    finding = Finding(
        kind=Kind.VALIDATOR_ERROR,
        message="validating this turn stopped the judge worker; it was not validated again",
    )
    return Verdict(outcome_of((finding,)), (finding,))
