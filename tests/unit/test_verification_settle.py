"""Answers of sources of truth applied to a verdict, the chain that asks them, and the
judging core's verified versions (processors.verification, processors.judging.core)."""

from __future__ import annotations

import time
from collections.abc import Callable

from factledger.collector import otlp
from factledger.processors.judging.core import JudgingCore, Settlement
from factledger.processors.kinds import Kind, Outcome, Severity
from factledger.processors.model import Finding, TextRange, Turn, Verdict
from factledger.processors.runner import ValidationRunner, default_runner
from factledger.processors.settings import ValidationSettings
from factledger.processors.spans import SpanRecord
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
    existence_outcome,
)
from factledger.processors.verification.chain import NO_SOURCE, verify_subjects
from factledger.processors.verification.settle import VALIDATOR, settled_verdict
from factledger.processors.verification.subjects import finding_subject
from tests.integration.otlp_turns import turn_request

CONFIRMED = VerificationOutcome.CONFIRMED
REFUTED = VerificationOutcome.REFUTED
UNVERIFIABLE = VerificationOutcome.UNVERIFIABLE


class Answering:
    """A verifier that answers from a table of names (exists or not), slowly if told."""

    def __init__(self, name: str, exists: dict[str, bool], delay: float = 0.0) -> None:
        self._name = name
        self._exists = exists
        self._delay = delay
        self.asked: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        self.asked.append(subject.name)
        if subject.name not in self._exists:
            return None
        if self._delay > timeout:
            time.sleep(timeout)
            return Verification(subject, UNVERIFIABLE, self._name, reason="timeout", retryable=True)
        time.sleep(self._delay)
        outcome = existence_outcome(subject, self._exists[subject.name])
        return Verification(subject, outcome, self._name, query=f"has {subject.name}")


class Raising:
    name = "broken"

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        raise RuntimeError("the source is broken")


def _flag_set(*names: str) -> Verdict:
    findings = tuple(
        Finding(Kind.CONFABULATED_IDENTIFIER_SET, f"`{n}` ...", token=n, score=0.8) for n in names
    )
    return Verdict(Outcome.FLAG, findings, ("confabulation@1.1",))


def _answers(
    verdict: Verdict, outcomes: dict[str, VerificationOutcome]
) -> dict[tuple[str, str, bool], Verification]:
    answers = {}
    for index, f in enumerate(verdict.findings):
        subject = finding_subject(f, index)
        assert subject is not None
        if f.token in outcomes:
            answers[subject.key] = Verification(subject, outcomes[f.token], "git:acme/site")
    return answers


def test_a_confirmed_flag_becomes_a_reject_with_its_evidence() -> None:
    verdict = _flag_set("tests/test_a.py", "tests/test_b.py")
    settled = settled_verdict(verdict, _answers(verdict, {"tests/test_a.py": CONFIRMED}))
    assert settled.outcome is Outcome.REJECT
    assert [f.effective_severity for f in settled.findings] == [Severity.REJECT, Severity.FLAG]
    assert settled.findings[0].checked_note == "confirmed by git:acme/site"
    assert VALIDATOR in settled.validators


def test_refuted_findings_are_withdrawn_and_a_turn_with_none_left_passes() -> None:
    verdict = _flag_set("tests/test_a.py", "tests/test_b.py")
    both = {"tests/test_a.py": REFUTED, "tests/test_b.py": REFUTED}
    settled = settled_verdict(verdict, _answers(verdict, both))
    assert settled.outcome is Outcome.PASS
    assert settled.findings == ()


def test_unverifiable_answers_change_nothing_but_the_validators() -> None:
    verdict = _flag_set("tests/test_a.py")
    settled = settled_verdict(verdict, _answers(verdict, {"tests/test_a.py": UNVERIFIABLE}))
    assert settled.findings == verdict.findings
    assert settled.outcome is Outcome.FLAG


def test_an_unfetched_citation_that_exists_is_still_unfetched() -> None:
    citation = Finding(Kind.UNFETCHED_CITATION, "not fetched", token="https://example.com/a")
    verdict = Verdict(Outcome.REJECT, (citation,))
    subject = finding_subject(citation, 0)
    assert subject is not None
    answers = {subject.key: Verification(subject, REFUTED, "link")}
    assert settled_verdict(verdict, answers).findings == (citation,)


def test_a_confirmed_short_sha_becomes_a_fabricated_identifier_reject() -> None:
    candidate = Subject(SubjectKind.COMMIT, "9d22a7c", span=TextRange(14, 21))
    answer = Verification(candidate, CONFIRMED, "git:acme/site", answer="no such commit")
    settled = settled_verdict(Verdict(Outcome.PASS), {candidate.key: answer})
    assert settled.outcome is Outcome.REJECT
    (made,) = settled.findings
    assert (made.kind, made.token, made.span) == (
        Kind.FABRICATED_IDENTIFIER,
        "9d22a7c",
        TextRange(14, 21),
    )
    assert made.checked_note == "confirmed by git:acme/site: no such commit"


def test_a_refuted_short_sha_is_nothing() -> None:
    candidate = Subject(SubjectKind.COMMIT, "9d22a7c")
    answer = Verification(candidate, REFUTED, "git:acme/site")
    assert settled_verdict(Verdict(Outcome.PASS), {candidate.key: answer}).findings == ()


def test_a_name_said_absent_that_exists_is_mirror_drift() -> None:
    candidate = Subject(SubjectKind.SYMBOL, "load_user", claimed_absent=True)
    assert existence_outcome(candidate, exists=True) is CONFIRMED
    answer = Verification(candidate, CONFIRMED, "git:acme/site")
    (made,) = settled_verdict(Verdict(Outcome.PASS), {candidate.key: answer}).findings
    assert made.kind is Kind.NEGATED_EXISTING_IDENTIFIER


def test_the_settings_switch_off_what_verification_would_make() -> None:
    runner = ValidationRunner.from_settings(
        ValidationSettings(disabled_kinds=frozenset({Kind.FABRICATED_IDENTIFIER}))
    )
    candidate = Subject(SubjectKind.COMMIT, "9d22a7c")
    answer = Verification(candidate, CONFIRMED, "git:acme/site")
    settled = settled_verdict(Verdict(Outcome.PASS), {candidate.key: answer}, runner.graded)
    assert settled.findings == ()


# --- the chain ------------------------------------------------------------------------


def test_the_first_source_that_settles_answers_and_later_ones_are_not_asked() -> None:
    trace = Answering("trace", {"tests/a.py": False})
    git = Answering("git", {"tests/a.py": True, "tests/b.py": True})
    subjects = [Subject(SubjectKind.PATH, "tests/a.py"), Subject(SubjectKind.PATH, "tests/b.py")]
    answers = verify_subjects(subjects, Turn(reply=""), [trace, git], budget_seconds=5)
    assert [(a.source, a.outcome) for a in answers] == [("trace", CONFIRMED), ("git", REFUTED)]
    assert git.asked == ["tests/b.py"]


def test_a_raising_source_is_unverifiable_and_the_next_is_asked() -> None:
    subject = Subject(SubjectKind.PATH, "a.py")
    (answer,) = verify_subjects(
        [subject], Turn(reply=""), [Raising(), Answering("git", {"a.py": True})], budget_seconds=5
    )
    assert (answer.source, answer.outcome) == ("git", REFUTED)
    (alone,) = verify_subjects([subject], Turn(reply=""), [Raising()], budget_seconds=5)
    assert (alone.outcome, alone.reason) == (UNVERIFIABLE, "verifier error")
    assert "the source is broken" in alone.answer


def test_no_source_for_a_name_says_so() -> None:
    (answer,) = verify_subjects(
        [Subject(SubjectKind.URL, "https://x.invalid/")], Turn(reply=""), [], budget_seconds=1
    )
    assert (answer.outcome, answer.reason) == (UNVERIFIABLE, NO_SOURCE)


def test_the_budget_bounds_every_source_together() -> None:
    slow = Answering("slow", {f"f{i}.py": True for i in range(5)}, delay=0.3)
    subjects = [Subject(SubjectKind.PATH, f"f{i}.py") for i in range(5)]
    started = time.monotonic()
    answers = verify_subjects(subjects, Turn(reply=""), [slow], budget_seconds=0.5)
    assert time.monotonic() - started < 1.2
    assert answers[0].outcome is REFUTED
    assert answers[-1].outcome is UNVERIFIABLE
    assert answers[-1].retryable


# --- the judging core -------------------------------------------------------------------


def _core(clock: Callable[[], float]) -> JudgingCore:
    return JudgingCore(
        default_runner(),
        grace_seconds=0.0,
        max_wait_seconds=1.0,
        clock=clock,
        verify=True,
        grade=default_runner().graded,
    )


def _spans(reply: str = "Order #W0000001 has shipped, fixed in 9d22a7c.") -> list[SpanRecord]:
    body, _ = turn_request(1, hallucinate=False, reply=reply)
    return list(otlp.decode_request(body, otlp.JSON).spans)


def test_the_core_asks_judges_the_answers_as_the_next_version_and_keeps_them() -> None:
    now = [0.0]
    core = _core(lambda: now[0])
    core.add(_spans())
    now[0] = 5.0
    (first,) = core.judge().turns
    assert first.assembled.version == 1
    assert first.request is not None
    (subject,) = first.request.subjects
    assert subject.name == "9d22a7c"
    answer = Verification(subject, CONFIRMED, "git:acme/site")
    (settled,) = core.settle([Settlement(first.request, (answer,))]).turns
    assert settled.assembled.version == 2
    assert settled.verdict.outcome is Outcome.REJECT
    assert settled.verifications == (answer,)
    # A stale settlement (its version was replaced) judges nothing.
    assert core.settle([Settlement(first.request, (answer,))]).turns == ()


def test_a_later_version_keeps_what_verification_settled() -> None:
    now = [0.0]
    core = _core(lambda: now[0])
    spans = _spans()
    late = next(s for s in spans if s.name.startswith("execute_tool"))
    core.add([s for s in spans if s is not late])
    now[0] = 5.0
    (first,) = core.judge(flush=True).turns
    assert first.request is not None
    (subject,) = first.request.subjects
    answer = Verification(subject, CONFIRMED, "git:acme/site")
    (second,) = core.settle([Settlement(first.request, (answer,))]).turns
    assert second.assembled.version == 2
    core.add([late])  # a late span: the turn is judged again, the answer applied
    now[0] = 10.0
    (third,) = core.judge(flush=True).turns
    assert third.assembled.version == 3
    assert third.request is None  # nothing left to ask
    assert Kind.FABRICATED_IDENTIFIER in [f.kind for f in third.verdict.findings]
    assert third.verifications == (answer,)


def test_without_verify_the_core_asks_nothing() -> None:
    core = JudgingCore(default_runner(), grace_seconds=0.0, max_wait_seconds=1.0)
    core.add(_spans())
    (judged,) = core.judge(flush=True).turns
    assert (judged.request, judged.verifications) == (None, ())
