"""factledger.reply_marks: where `factledger check` marks each finding in the reply."""

from __future__ import annotations

import pytest

from factledger.processors.kinds import Kind, Severity
from factledger.processors.model import Finding, TextRange
from factledger.reply_marks import in_reply_order, locate, marks, render

REPLY = "Done, I pushed it. Commit 9d22a7cdeadbeef is on main."


def finding(
    token: str = "",
    span: tuple[int, int] | None = None,
    kind: Kind = Kind.FABRICATED_IDENTIFIER,
    severity: Severity | None = None,
) -> Finding:
    return Finding(
        kind=kind,
        message="m",
        token=token,
        span=None if span is None else TextRange(*span),
        severity=severity,
    )


@pytest.mark.parametrize(
    ("found", "where"),
    [
        (finding("pushed", (0, 18)), (8, 14)),
        (finding("9d22a7cdeadbeef", (26, 41)), (26, 41)),
        (finding("something else", (0, 4)), (0, 4)),
        (finding("9d22a7cdeadbeef"), (26, 41)),
        (finding("absent"), None),
        (finding("", (500, 510)), None),
    ],
    ids=[
        "token-inside-its-sentence-span",
        "span-is-the-token",
        "token-not-in-span-marks-the-span",
        "no-span-first-occurrence",
        "nowhere",
        "span-past-the-reply",
    ],
)
def test_locate(found: Finding, where: tuple[int, int] | None):
    assert locate(REPLY, found) == where


def test_overlapping_marks_merge_with_every_number_and_the_strongest_severity():
    findings = [
        finding("9d22a7cdeadbeef", severity=Severity.FLAG),
        finding("9d22a7c", kind=Kind.BORROWED_IDENTIFIER),
    ]
    (mark,) = marks(REPLY, findings)
    assert (mark.start, mark.end, mark.numbers, mark.severity) == (26, 41, (1, 2), Severity.REJECT)
    assert "Commit [[9d22a7cdeadbeef]][1,2] is" in render(REPLY, findings, color=False)


def test_render_plain_and_coloured():
    findings = [finding("pushed", (0, 18), Kind.CLAIM_WITHOUT_TOOL), finding("9d22a7cdeadbeef")]
    assert render(REPLY, findings, color=False) == (
        "Done, I [[pushed]][1] it. Commit [[9d22a7cdeadbeef]][2] is on main."
    )
    coloured = render(REPLY, findings, color=True)
    assert "\x1b[1;4;31mpushed\x1b[0m\x1b[2m[1]\x1b[0m" in coloured
    assert "[[" not in coloured


def test_findings_are_numbered_in_reading_order_unlocated_last():
    late, early, nowhere = finding("9d22a7cdeadbeef"), finding("pushed"), finding("absent")
    assert in_reply_order(REPLY, [nowhere, late, early]) == [early, late, nowhere]
