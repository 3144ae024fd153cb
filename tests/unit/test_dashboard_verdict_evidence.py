"""What a verdict rests on, on the turn page: the real identifier beside a fabricated one
(in the reply, the evidence line and the tool result), a passing reply's backed
identifiers green with "✓ in <tool> (<call id>)", and a class-5 set as one finding."""

from __future__ import annotations

from typing import Any

from factledger.dashboard.finding_evidence import CallMark, finding_evidence
from factledger.dashboard.finding_sets import RealName, finding_groups
from factledger.dashboard.highlight import highlight_reply
from tests.unit.test_dashboard_finding_evidence import call, finding

REPLY = "I created OPS-5707 for the VPN drops."
SEARCH = call("create_ticket", {"title": "VPN drops"}, '{"key": "OPS-5680"}', call_id="call_1")
REAL = {"token": "OPS-5680", "tool": "create_ticket", "call_id": "call_1"}


def _fabricated(**extra: Any) -> dict[str, Any]:
    start = REPLY.index("OPS-5707")
    return finding("fabricated_identifier", "OPS-5707", span=[start, start + 8], **extra)


def test_the_real_identifier_follows_the_fabricated_ones_label() -> None:
    html = highlight_reply(REPLY, [_fabricated(real=[REAL])])
    label = html.index("fabricated identifier</span>")
    chip = html.index('<span class="fl-real-chip" data-source="create_ticket (call_1)">')
    assert label < chip
    assert '<mark class="fl-tone fl-real fl-real-token">OPS-5680</mark> in create_ticket' in html


def test_without_a_real_identifier_no_chip() -> None:
    assert "fl-real" not in highlight_reply(REPLY, [_fabricated()])


def test_the_evidence_line_names_the_real_identifier_and_marks_it_in_its_call() -> None:
    (found,) = finding_evidence([_fabricated(real=[REAL])], [SEARCH])
    assert found.sentence == (
        "OPS-5707 ✗ in no tool result; the tools returned OPS-5680 in create_ticket (call_1)"
    )
    assert found.marks == (CallMark(0, "result", "OPS-5680", "real"),)


SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"
PASSED = f"Pushed README.md as commit {SHA}."


def test_a_backed_identifier_is_green_with_its_call() -> None:
    start = PASSED.index(SHA)
    backing = {"token": SHA, "start": start, "end": start + 40, "tool": "git_push", "call_id": "c7"}
    html = highlight_reply(PASSED, [], [backing])
    assert (
        f'<mark class="fl-tone fl-backed fl-reply-backed" title="✓ in git_push (c7)">{SHA}</mark>'
        in html
    )
    assert '<span class="fl-backed-note">✓ in git_push (c7)</span>' in html


def test_a_backing_whose_offsets_no_longer_hold_its_token_is_not_drawn() -> None:
    backing = {"token": SHA, "start": 0, "end": 40, "tool": "git_push", "call_id": "c7"}
    assert "fl-backed" not in highlight_reply(PASSED, [], [backing])


def test_a_finding_wins_over_a_backing_of_the_same_text() -> None:
    start = PASSED.index(SHA)
    backing = {"token": SHA, "start": start, "end": start + 40, "tool": "git_push", "call_id": ""}
    marked = finding("fabricated_identifier", SHA, span=[start, start + 40])
    assert "fl-backed" not in highlight_reply(PASSED, [marked], [backing])


SET_REPLY = "Tests: tests/test_a_x.py, tests/test_a_y.py, tests/test_a_z.py and src/a.py."
LISTED = {"token": "src/a.py", "tool": "list_files", "call_id": "call_1"}


def _set() -> list[dict[str, Any]]:
    out = []
    for name in ("tests/test_a_x.py", "tests/test_a_y.py", "tests/test_a_z.py"):
        start = SET_REPLY.index(name)
        out.append(
            finding(
                "confabulated_identifier_set",
                name,
                span=[start, start + len(name)],
                real=[LISTED],
                validator="confabulation@1.1",
                score=0.85,
            )
        )
    return out


def test_a_set_is_one_group_listing_its_names() -> None:
    findings = [finding("stall", "one moment"), *_set()]
    groups = finding_groups(findings)
    assert [g.indices for g in groups] == [(0,), (1, 2, 3)]
    assert groups[1].invented == ("tests/test_a_x.py", "tests/test_a_y.py", "tests/test_a_z.py")
    assert groups[1].real == (RealName("src/a.py", "list_files (call_1)"),)


def test_a_set_has_one_evidence_line_with_its_real_names_green() -> None:
    listing = call("list_files", {"dir": "."}, "src/a.py\nREADME.md", call_id="call_1")
    (found,) = finding_evidence(_set(), [listing])
    assert found.sentence == (
        "3 names presented as existing that no tool result shows: tests/test_a_x.py, "
        "tests/test_a_y.py, tests/test_a_z.py; beside them, in the tools: src/a.py "
        "✓ in list_files (call_1)"
    )
    assert found.marks == (CallMark(0, "result", "src/a.py", "backed"),)


def test_a_set_is_labelled_once_and_its_real_names_marked_green_in_the_reply() -> None:
    html = highlight_reply(SET_REPLY, _set())
    assert html.count("confabulated identifier set</span>") == 1
    assert html.count('data-kinds="confabulated_identifier_set"') == 3
    green = '<mark class="fl-tone fl-backed fl-reply-backed" title="✓ in list_files (call_1)">'
    assert green + "src/a.py</mark>" in html
