"""Which names of a judged turn verification asks about (processors.verification.subjects)."""

from __future__ import annotations

import pytest

from factledger.processors.kinds import Kind, Outcome
from factledger.processors.model import Finding, TextRange, ToolCall, Turn, Verdict
from factledger.processors.runner import default_runner
from factledger.processors.verification.base import SubjectKind
from factledger.processors.verification.subjects import code_name_kind, subjects


def _subjects(reply: str, result: str = "ok", user: str = "push it") -> list[tuple[str, str]]:
    turn = Turn(
        reply=reply,
        user_message=user,
        tool_calls=(ToolCall("git_push", call_id="c1", result=result),),
    )
    return [(s.kind.value, s.name) for s in subjects(turn, Verdict(Outcome.PASS))]


@pytest.mark.parametrize(
    "reply",
    [
        "Pushed commit {sha} to main.",
        "Done: {sha}.",
        "The fix is in `{sha}`.",
        "Commit ({sha}) is on main",
        "Committed as {sha}\nAll good.",
        "已推送提交 {sha}。",
        "Ich habe {sha} gepusht.",
    ],
)
@pytest.mark.parametrize("sha", ["9d22a7c", "9D22A7C", "9d22a7c1", "7f3e91b04"])
def test_a_short_sha_no_tool_showed_is_a_candidate(reply: str, sha: str) -> None:
    assert ("commit", sha) in _subjects(reply.format(sha=sha))


@pytest.mark.parametrize(
    ("reply", "result", "user"),
    [
        ("Pushed 9d22a7c.", "To github.com:acme/site.git\n   1f0e2d3..9d22a7c  main -> main", ""),
        ("Pushed 9d22a7c.", "HEAD is now 9d22a7c4e5f60718293a4b5c6d7e8f9012345678", ""),
        ("Reverted 9d22a7c as asked.", "ok", "please revert 9d22a7c"),
        ("Colour #a1b2c3d stays.", "ok", ""),
        ("See https://example.com/commit/9d22a7c for it.", "ok", ""),
        ("Version 1234567 shipped.", "ok", ""),  # digits only: a number
        ("It was defaced.", "ok", ""),  # letters only: a word
        ("Ticket OPS-4821 is open.", "ok", ""),
        ("Use abc1234-def as the prefix.", "ok", ""),
        ("Path src/9d22a7c/app.py exists", "ok", ""),
        ("The hash a1b2c3d4e5f6 is long enough for the identifier check.", "ok", ""),
    ],
)
def test_grounded_or_non_sha_tokens_are_no_candidates(reply: str, result: str, user: str) -> None:
    assert not any(kind == "commit" for kind, _ in _subjects(reply, result, user))


@pytest.mark.parametrize(
    ("reply", "name", "kind"),
    [
        ("The function `load_user` does not exist.", "load_user", SubjectKind.SYMBOL),
        ("There is no src/cache.py in the repo.", "src/cache.py", SubjectKind.PATH),
        ("`RetryPolicy` is not defined anywhere.", "RetryPolicy", SubjectKind.SYMBOL),
        ("Die Funktion `load_user` existiert nicht.", "load_user", SubjectKind.SYMBOL),
    ],
)
def test_names_said_not_to_exist_are_candidates_claimed_absent(
    reply: str, name: str, kind: SubjectKind
) -> None:
    turn = Turn(reply=reply, tool_calls=(ToolCall("run", result="done"),))
    found = [s for s in subjects(turn, Verdict(Outcome.PASS)) if s.claimed_absent]
    assert [(s.kind, s.name) for s in found] == [(kind, name)]


def test_a_name_said_not_to_exist_that_a_tool_shows_is_left_to_the_mirror_validator() -> None:
    turn = Turn(
        reply="`load_user` is not defined in app.py.",
        tool_calls=(ToolCall("read_file", result="def load_user(uid):\n    ..."),),
    )
    assert not [s for s in subjects(turn, Verdict(Outcome.PASS)) if s.claimed_absent]


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("tests/test_cache.py", SubjectKind.PATH),
        ("tools/", SubjectKind.PATH),
        ("setup.cfg", SubjectKind.PATH),
        ("build_registry(cfg)", SubjectKind.SYMBOL),
        ("test_memory_eviction", SubjectKind.SYMBOL),
        ("RegistryBuilder", SubjectKind.SYMBOL),
    ],
)
def test_code_names_are_paths_or_symbols(token: str, kind: SubjectKind) -> None:
    assert code_name_kind(token) is kind


def test_findings_name_their_subjects_each_once() -> None:
    findings = (
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="a1b2c3d4e5f60718", span=TextRange(0, 16)),
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="https://docs.example.com/x"),
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="OPS-4821"),
        Finding(Kind.FABRICATED_IDENTIFIER, "m", token="ops@example.com"),
        Finding(Kind.CONFABULATED_IDENTIFIER_SET, "m", token="build_registry(cfg)"),
        Finding(Kind.CONFABULATED_IDENTIFIER_SET, "m", token="./tests/test_a.py"),
        Finding(Kind.UNFETCHED_CITATION, "m", token="https://docs.example.com/x"),
        Finding(Kind.CLAIM_WITHOUT_TOOL, "m", token="I pushed"),
    )
    turn = Turn(reply="x")
    found = subjects(turn, Verdict(Outcome.REJECT, findings))
    assert [(s.kind, s.name, s.finding, s.finding_kind) for s in found] == [
        (SubjectKind.COMMIT, "a1b2c3d4e5f60718", 0, Kind.FABRICATED_IDENTIFIER),
        (SubjectKind.URL, "https://docs.example.com/x", 1, Kind.FABRICATED_IDENTIFIER),
        (SubjectKind.RECORD, "OPS-4821", 2, Kind.FABRICATED_IDENTIFIER),
        (SubjectKind.SYMBOL, "build_registry", 4, Kind.CONFABULATED_IDENTIFIER_SET),
        (SubjectKind.PATH, "tests/test_a.py", 5, Kind.CONFABULATED_IDENTIFIER_SET),
    ]


def test_a_validated_class5_turn_names_every_unlisted_file() -> None:
    turn = Turn(
        reply="The repo has tests/test_memory_a.py, tests/test_memory_b.py and "
        "tests/test_memory_c.py, all passing.",
        user_message="what tests exist?",
        tool_calls=(ToolCall("list_files", arguments={"path": "tests"}, result="test_io.py"),),
    )
    verdict = default_runner().validate(turn)
    assert verdict.outcome is Outcome.FLAG
    names = {s.name for s in subjects(turn, verdict) if s.kind is SubjectKind.PATH}
    assert names == {"tests/test_memory_a.py", "tests/test_memory_b.py", "tests/test_memory_c.py"}
