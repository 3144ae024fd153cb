"""Which names of a judged turn a source of truth could settle.

From the verdict's findings (each subject tied to the finding it could settle):

    fabricated_identifier        a SHA -> commit, a URL -> url, a ticket or record key -> record
    confabulated_identifier_set  a path (has `/` or a file extension) -> path, else -> symbol
    unfetched_citation           the URL -> url (a 404 proves the link invented; a 200 does
                                 not withdraw the finding: existing is not having read it)

And candidates no finding names yet, which become findings only when confirmed:

- short SHAs: 7 to 9 hex characters with a digit and a letter, outside every longer
  identifier, in no tool result and not in the conversation. Outside a commit's context
  the identifier check needs 10 (shorter runs collide with prose too often to reject on
  shape alone); a repository tells a real short SHA from an invented one for certain.
  Confirmed -> `fabricated_identifier`. One the identifier check rejected already is its
  finding's subject, not a candidate.
- names the reply says do not exist ("`load_user` is not defined") that no tool result of
  the turn shows (when one does, the mirror validator rejects already). Confirmed (the
  source has it) -> `negated_existing_identifier`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..codeish import code_names
from ..identifiers import Shape, is_grounded
from ..kinds import Kind
from ..model import Finding, TextRange, Turn, Verdict
from ..validators.mirror import negated_mentions
from .base import Subject, SubjectKind

MAX_SUBJECTS = 100
"""Subjects per turn: a reply that names thousands of things is checked on its first."""

_FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_CALL_ARGUMENTS = re.compile(r"\(.*\)$")

_BY_SHAPE = {
    Shape.SHA: SubjectKind.COMMIT,
    Shape.URL: SubjectKind.URL,
    Shape.KEY: SubjectKind.RECORD,
    Shape.RECORD: SubjectKind.RECORD,
    Shape.UUID: SubjectKind.RECORD,
}

CANDIDATE_KINDS: dict[bool, Kind] = {
    False: Kind.FABRICATED_IDENTIFIER,
    True: Kind.NEGATED_EXISTING_IDENTIFIER,
}
"""The finding a confirmed candidate becomes, by `Subject.claimed_absent`."""

NEVER_WITHDRAWN = frozenset({Kind.UNFETCHED_CITATION})
"""Kinds a refuting answer does not withdraw: the finding is about what the turn did."""


def subjects(turn: Turn, verdict: Verdict) -> tuple[Subject, ...]:
    """Every checkable name of the turn, findings' first, each (kind, name) once."""
    found: dict[tuple[str, str, bool], Subject] = {}
    for index, f in enumerate(verdict.findings):
        subject = finding_subject(f, index)
        if subject is not None:
            found.setdefault(subject.key, subject)
    named = {f.token.lower() for f in verdict.findings if f.token}
    for subject in _candidates(turn, named):
        found.setdefault(subject.key, subject)
    return tuple(found.values())[:MAX_SUBJECTS]


def finding_subject(f: Finding, index: int) -> Subject | None:
    """The subject a finding names, or None when no source could settle it."""
    if not f.token:
        return None
    if f.kind in (Kind.FABRICATED_IDENTIFIER, Kind.UNFETCHED_CITATION):
        kind = _identifier_kind(f.token)
        if kind is None:
            return None
        return Subject(kind, _bare(f.token, kind), finding=index, span=f.span, finding_kind=f.kind)
    if f.kind is Kind.CONFABULATED_IDENTIFIER_SET:
        kind = code_name_kind(f.token)
        return Subject(kind, _bare(f.token, kind), finding=index, span=f.span, finding_kind=f.kind)
    return None


def code_name_kind(name: str) -> SubjectKind:
    """A path when it has a directory or a file extension, else a symbol."""
    bare = _CALL_ARGUMENTS.sub("", name)
    if "/" in bare or _FILE_SUFFIX.search(bare):
        return SubjectKind.PATH
    return SubjectKind.SYMBOL


def _identifier_kind(token: str) -> SubjectKind | None:
    if token.startswith(("http://", "https://")):
        return SubjectKind.URL
    if re.fullmatch(r"[0-9a-fA-F]{7,64}", token):
        return SubjectKind.COMMIT
    if "@" in token:
        return None  # an e-mail address: no source answers whether a mailbox exists
    return SubjectKind.RECORD


def _bare(token: str, kind: SubjectKind) -> str:
    """The name a source is asked about: `build_registry(cfg)` -> `build_registry`."""
    token = token.strip().strip("`")
    if kind is SubjectKind.SYMBOL:
        return _CALL_ARGUMENTS.sub("", token)
    if kind is SubjectKind.PATH:
        return token.removeprefix("./")
    return token


def _candidates(turn: Turn, named: set[str]) -> Iterator[Subject]:
    haystack = turn.evidence_lower + "\n" + turn.named_lower
    yield from _short_shas(turn, haystack, named)
    for name, start, end in negated_mentions(turn.reply, turn.reply_lower):
        if name.lower() in named or name.lower() in turn.evidence_lower:
            continue
        kind = _negated_kind(name)
        if kind is not None:
            yield Subject(kind, _bare(name, kind), span=TextRange(start, end), claimed_absent=True)


def _short_shas(turn: Turn, haystack: str, named: set[str]) -> Iterator[Subject]:
    for sha in turn.reply_short_shas:
        if sha.text.lower() in named or is_grounded(sha, haystack):
            continue
        yield Subject(SubjectKind.COMMIT, sha.text, span=TextRange(sha.start, sha.end))


def _negated_kind(name: str) -> SubjectKind | None:
    """Negated names worth a source: code names (paths, functions, classes) and SHAs;
    prose words ("no errors") and record keys (no source knows a missing ticket better
    than the agent's own tool) are not."""
    if re.fullmatch(r"[0-9a-fA-F]{7,64}", name) and not name.isdigit() and not name.isalpha():
        return SubjectKind.COMMIT
    if code_names(name, snake_case=True) or "/" in name:
        return code_name_kind(name)
    return None
