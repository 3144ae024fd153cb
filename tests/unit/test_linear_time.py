"""Every validator pattern is linear-time: adversarial 1 MB replies finish.

The figure (how far under a second) is printed by `benchmarks/validators.py`; this test
only guards against catastrophic backtracking, which would take minutes or hours, with
a generous alarm so a slow CI machine never fails it by accident.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from factledger.processors.runner import default_runner
from tests.unit.transcripts import Call, turn

MEGABYTE = 1_000_000
ALARM_SECONDS = 30

ADVERSARIAL = {
    "hex-run": "a" * MEGABYTE,
    "hex-words": ("deadbeef12 " * (MEGABYTE // 11)),
    "snake-chain": "a_" * (MEGABYTE // 2),
    "dotted": "x." * (MEGABYTE // 2),
    "claims": "I have pushed, deployed and verified it. " * (MEGABYTE // 41),
    "urls": "https://example.com/" + "a/" * (MEGABYTE // 2),
    "emails": "a.b-c+d" * (MEGABYTE // 7) + "@",
    "braces": '{"name": "x", "arguments": {' * (MEGABYTE // 29),
    "negations": "`f` is not defined. There is no `g`. " * (MEGABYTE // 37),
    "cjk": "已发布，已登记，不存在。" * (MEGABYTE // 12),
    "keys": "ABC-" * (MEGABYTE // 4),
    "newlines": "- a.py\n" * (MEGABYTE // 7),
}


@pytest.fixture
def alarm() -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"validation took over {ALARM_SECONDS}s: a pattern backtracks")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(ALARM_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("reply", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_one_megabyte_reply_is_validated(reply: str, alarm: None) -> None:
    t = turn(reply, calls=[Call("read_file", {"path": "a.py"}, result="def f(): pass\n" * 1000)])
    verdict = default_runner().validate(t)
    assert all(f.kind.value != "validator_error" for f in verdict.findings)


ADVERSARIAL_RESULTS = {
    "one-long-line-of-negations": "not " * (MEGABYTE // 4),
    "one-long-line-of-failure-words": "failed rejected denied " * (MEGABYTE // 23),
    "short-lines": "no push\n" * 12,
    "exception-like": "A" * 290 + "Error(" + "x" * MEGABYTE,
    "labelled-json": "HTTP 200: " + "[" * MEGABYTE,
    "cjk-negations": "未未未" * (MEGABYTE // 3),
}


@pytest.mark.parametrize("result", ADVERSARIAL_RESULTS.values(), ids=ADVERSARIAL_RESULTS.keys())
def test_one_megabyte_tool_result_is_read_for_its_outcome(result: str, alarm: None) -> None:
    t = turn("I pushed it.", calls=[Call("git_push", {"branch": "main"}, result=result)])
    verdict = default_runner().validate(t)
    assert all(f.kind.value != "validator_error" for f in verdict.findings)
