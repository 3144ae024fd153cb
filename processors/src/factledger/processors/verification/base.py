"""What verification checks and what it answers: subjects, verifications, the verifier seam.

Validators judge a turn from its own trace; some suspicions only a source of truth can
settle: does this commit, file, function, link or ticket exist? A `Subject` is one such
checkable name the reply uses, tied to the finding it could settle (or to none: a short
SHA the identifier check leaves alone). A `Verifier` answers a subject with a
`Verification`:

    confirmed     the reply's claim about it is false at the source: the hallucination is
                  proven (the name does not exist; for a "does not exist" claim, it does)
    refuted       the source agrees with the reply: the finding is withdrawn
    unverifiable  no source for it, or the source was unreachable, slow or ambiguous

A verifier returns None for a subject it has no source for (no repository configured for
the turn, a URL when it checks paths), so the next one is asked. Nothing here does I/O:
the verifiers that ask git, HTTP or a workspace live in `factledger.verifiers`; the
turn's own listings are `processors.verification.trace_source`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ..kinds import Kind
from ..model import TextRange, Turn


class SubjectKind(StrEnum):
    """What kind of thing a subject names."""

    COMMIT = "commit"
    """A commit SHA, full or a prefix of at least 7 hex digits."""
    REF = "ref"
    """A branch or tag."""
    PATH = "path"
    """A file or directory path."""
    SYMBOL = "symbol"
    """A function, class, method or test name."""
    URL = "url"
    RECORD = "record"
    """A record key of the user's own systems: a ticket, order or ledger id."""


class VerificationOutcome(StrEnum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNVERIFIABLE = "unverifiable"


@dataclass(frozen=True)
class Subject:
    """One checkable name of a reply.

    `finding` is the index, in the verdict, of the finding it could settle, `finding_kind`
    that finding's kind; None for a candidate no finding names yet (a 7-9 hex short SHA:
    confirmed absent, it becomes a `fabricated_identifier` reject). `claimed_absent` is
    True when the reply says the thing does not exist (mirror drift): then it existing is
    what confirms the hallucination.
    """

    kind: SubjectKind
    name: str
    finding: int | None = None
    span: TextRange | None = None
    claimed_absent: bool = False
    finding_kind: Kind | None = None

    @property
    def key(self) -> tuple[str, str, bool]:
        """The same name checked twice is one check (the turn's findings may repeat it)."""
        return (self.kind.value, self.name, self.claimed_absent)


@dataclass(frozen=True)
class Verification:
    """A source's answer about one subject, with its evidence.

    `source` names where it was asked (`trace:list_files (call_2)`, `git:acme/site`,
    `link`, `workspace`, `plugin:tickets`), `query` the exact question (a git command's
    arguments, `HEAD https://...`), `answer` what came back (bounded). `checked_at` is unix
    seconds, `duration_ms` how long the asking took. `reason` says why an unverifiable
    answer is one (`timeout`, `unreachable`, `no source`, `ambiguous`, ...); `retryable`
    marks one worth asking again later (the source was down or slow).
    """

    subject: Subject
    outcome: VerificationOutcome
    source: str
    query: str = ""
    answer: str = ""
    checked_at: float = 0.0
    duration_ms: float = 0.0
    reason: str = ""
    retryable: bool = False

    @property
    def settled(self) -> bool:
        return self.outcome is not VerificationOutcome.UNVERIFIABLE


def existence_outcome(subject: Subject, exists: bool) -> VerificationOutcome:
    """Confirmed when the source contradicts the reply: a claimed name that does not
    exist, or a name claimed absent that does."""
    contradicted = exists if subject.claimed_absent else not exists
    return VerificationOutcome.CONFIRMED if contradicted else VerificationOutcome.REFUTED


class Verifier(Protocol):
    """A source of truth for some subjects. `verify` must return within `timeout`
    seconds (give `unverifiable`, `retryable`, when the source is slower) and never raise
    for a bad name: a token is data, never a command or a path outside the source."""

    @property
    def name(self) -> str:
        """The source's name, as `Verification.source` begins (`git`, `link`, ...)."""
        ...

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        """The answer about `subject`, or None when this verifier has no source for it."""
        ...
