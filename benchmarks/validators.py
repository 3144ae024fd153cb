"""Throughput of the full validator suite against a plain SHA-only validator.

Both run over the same pre-built turns: the test corpus (tests/corpus/*.jsonl) and every
text reply of the 100 tau_retail runs. Turn construction is not timed. Each repetition
gets fresh `Turn` objects (`dataclasses.replace`), because a Turn caches its derived
text (`functools.cached_property`) and a re-used one would make later passes cheap.
Every turn is timed on its own with `perf_counter_ns`; a turn's time is the median over
the repetitions, and the figures below summarise those medians. The garbage collector
is off while timing, as in `timeit`, so a collection does not land on one random turn.

Then one adversarial 1 MiB reply (hex runs, repeated success claims, dots, newlines,
URLs, braces) goes through transcript parsing and the full suite.

    python -m benchmarks.validators [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import math
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.model import Turn
from factledger.processors.runner import ValidationRunner, default_runner, default_validators
from factledger.processors.settings import ValidationSettings

from .datasets import load_tau_runs, tau_offered_tools, tau_reply_cases

REPO = Path(__file__).resolve().parents[1]
CORPUS_DIR = REPO / "tests" / "corpus"

RATIO_TARGET = 3.0
"""The suite may cost at most this many times the SHA-only baseline per turn."""
P99_TARGET_US = 2000.0
ADVERSARIAL_TARGET_S = 1.0
ADVERSARIAL_CHARS = 1 << 20


# --- the baseline: a plain SHA-only post-turn validator --------------------------------

_SHA_LIKE = re.compile(r"(?<![A-Za-z0-9])([A-Fa-f0-9]{10,40})(?![A-Za-z0-9])")


@dataclass(frozen=True)
class ShaReport:
    """What the SHA-only validator reports: unverified tokens and user-origin echoes."""

    unverified: tuple[str, ...] = ()
    user_origin: tuple[str, ...] = ()


def sha_like(text: str) -> list[str]:
    """Distinct SHA-like tokens (10-40 hex characters), lower-cased, in order of appearance."""
    return list(dict.fromkeys(m.lower() for m in _SHA_LIKE.findall(text)))


def baseline_validate(turn: Turn) -> ShaReport:
    """The SHA-only check: every SHA-like token of the reply must come from a tool result.

    A token is verified when it equals, prefixes or extends a token of the turn's tool
    results; otherwise it is a user-origin echo if the user message has it, else unverified.
    The tool results are joined here rather than read from the Turn's cache, so the
    baseline pays for its own input like a standalone validator would.
    """
    reply_tokens = sha_like(turn.reply)
    if not reply_tokens:
        return ShaReport()
    haystack = "\n".join(c.result for c in turn.tool_calls if c.result is not None)
    known = sha_like(haystack)
    user_tokens = set(sha_like(turn.user_message)) if turn.user_message else set()
    unverified: list[str] = []
    echoes: list[str] = []
    for token in reply_tokens:
        if any(k.startswith(token) or token.startswith(k) for k in known):
            continue
        (echoes if token in user_tokens else unverified).append(token)
    return ShaReport(tuple(unverified), tuple(echoes))


# --- inputs ----------------------------------------------------------------------------


def corpus_turns(folder: Path = CORPUS_DIR) -> tuple[list[Turn], list[str]]:
    """Turns of every tests/corpus/*.jsonl line, and notes about lines that were skipped.

    A line is an eval case (`{"transcript": ...}`) or a bare transcript (`{"messages": ...}`).
    """
    turns: list[Turn] = []
    notes: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("//"):
                continue
            try:
                record = json.loads(stripped)
                transcript = record.get("transcript", record)
                turns.append(turn_from_transcript(transcript, turn_id=f"{path.name}:{number}"))
            except Exception as exc:  # a bad corpus line must not stop the benchmark
                notes.append(f"{path.name}:{number}: {type(exc).__name__}: {exc}")
    return turns, notes


def tau_turns(max_runs: int | None = None) -> list[Turn]:
    """One turn per assistant reply with text, over all tau_retail runs (solved or not)."""
    runs = load_tau_runs()
    tools = tau_offered_tools(runs)  # the offered set is the union over all 100 runs
    cases = tau_reply_cases(runs[:max_runs], solved=None, tools=tools)
    return [turn_from_transcript(c["transcript"], turn_id=c["id"]) for c in cases]


# --- timing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Per-turn times in ns (each the median over the repetitions)."""

    per_turn_ns: list[float]

    @property
    def mean_us(self) -> float:
        return statistics.fmean(self.per_turn_ns) / 1000.0

    @property
    def turns_per_s(self) -> float:
        return 1e6 / self.mean_us if self.mean_us else float("inf")

    def percentile_us(self, q: float) -> float:
        """Nearest-rank percentile, so p99 is a time some turn actually took."""
        ordered = sorted(self.per_turn_ns)
        rank = min(len(ordered) - 1, max(0, math.ceil(q / 100.0 * len(ordered)) - 1))
        return ordered[rank] / 1000.0


def time_per_turn(check: Callable[[Turn], object], turns: Sequence[Turn], repeat: int) -> Timing:
    """Time `check` on each turn, `repeat` times on fresh copies; keep each turn's median."""
    _run_untimed(check, turns)  # warm-up: lazy imports, regex caches, branch predictors
    samples: list[list[int]] = [[] for _ in turns]
    clock = time.perf_counter_ns
    for _ in range(repeat):
        fresh = _fresh(turns)
        gc.collect()
        gc.disable()
        try:
            for index, turn in enumerate(fresh):
                start = clock()
                check(turn)
                samples[index].append(clock() - start)
        finally:
            gc.enable()
    return Timing([statistics.median(s) for s in samples])


def _fresh(turns: Sequence[Turn]) -> list[Turn]:
    # replace() builds a new instance from the fields only: no cached derived text.
    return [dataclasses.replace(t) for t in turns]


def _run_untimed(check: Callable[[Turn], object], turns: Sequence[Turn]) -> None:
    for turn in _fresh(turns):
        check(turn)


# --- the adversarial reply -------------------------------------------------------------


def adversarial_reply(size: int = ADVERSARIAL_CHARS, seed: int = 0) -> str:
    """About `size` characters built to stress regexes and scanners, deterministically.

    Long hex runs (shorter and longer than a SHA, touching letters), repeated success
    claims, runs of dots and newlines, URLs, brace soup and half-written JSON tool calls.
    """
    rng = random.Random(seed)
    hexdigits = "0123456789abcdef"

    def hex_run(n: int) -> str:
        return "".join(rng.choice(hexdigits) for _ in range(n))

    pieces: list[Callable[[], str]] = [
        lambda: hex_run(rng.choice((9, 10, 12, 40, 41, 64, 500, 4000))) + " ",
        lambda: "commit " + hex_run(40) + "g" + hex_run(12) + ". ",
        lambda: "I have pushed the commit to main and deployed it. " * rng.randint(1, 40),
        lambda: (
            "I have pushed " + hex_run(10) + ", created PR #" + str(rng.randint(1, 99999)) + ". "
        ),
        lambda: "." * rng.randint(1, 3000),
        lambda: "\n" * rng.randint(1, 2000),
        lambda: ". \n" * rng.randint(1, 500),
        lambda: "https://github.com/acme/repo/commit/" + hex_run(40) + "?x=" + "a." * 200 + " ",
        lambda: "http://" + "sub." * rng.randint(1, 400) + "example.com/" + "/x" * 300 + " ",
        lambda: "{" * rng.randint(1, 2000) + "}" * rng.randint(1, 2000),
        lambda: '{"name": "git_push", "arguments": {"branch": "' + "m" * rng.randint(1, 500),
        lambda: '{"name": ' * rng.randint(1, 200),
        # Deeply nested JSON openings: a recursive decoder must not blow the stack.
        lambda: '{"a": [' * rng.randint(500, 3000),
        lambda: "[" * rng.randint(1, 500) + '"' * rng.randint(1, 500),
        lambda: "`" + hex_run(16) + "` and ID-" + hex_run(24) + "-x ",
        lambda: "Done. I sent the email, created ticket JIRA-" + str(rng.randint(1, 9999)) + ". ",
        lambda: "According to search_web and fetch_url, see [1](https://example.org/a) ",
        lambda: "I didn't find order #W" + str(rng.randint(1000000, 9999999)) + ". ",
    ]
    out: list[str] = []
    total = 0
    while total < size:
        piece = rng.choice(pieces)()
        out.append(piece)
        total += len(piece)
    return "".join(out)[:size]


def adversarial_transcript(reply: str) -> dict[str, Any]:
    """A small realistic turn (one successful push) whose final reply is `reply`."""
    sha = "5dd7d3b1c2eaaa4ce26c08b67c61cb16092acaf3"
    return {
        "model": "adversarial",
        "tools": [
            {"name": "git_push", "parameters": {"type": "object", "properties": {"branch": {}}}},
            {"name": "search_web", "parameters": {"type": "object", "properties": {"q": {}}}},
        ],
        "messages": [
            {"role": "system", "content": "Quote only values that real tool results contain."},
            {"role": "user", "content": "Push the fix to main, please."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "git_push", "arguments": '{"branch": "main"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": json.dumps({"ok": True, "sha": sha, "branch": "main"}),
            },
            {"role": "assistant", "content": reply},
        ],
    }


def adversarial_turn(transcript: dict[str, Any]) -> tuple[Turn, float, str]:
    """The turn of `transcript`, the parse time in s, and the parse error ("" if none).

    When parsing raises, the suite is still measured on the turn built with a harmless
    placeholder reply and the real reply put back (only the prose-call scan is lost).
    """
    start = time.perf_counter()
    try:
        turn = turn_from_transcript(transcript, turn_id="adversarial")
        return turn, time.perf_counter() - start, ""
    except Exception as exc:  # report the crash, then measure the validators anyway
        elapsed = time.perf_counter() - start
        messages = transcript["messages"]
        reply = messages[-1]["content"]
        stub = {**transcript, "messages": [*messages[:-1], {"role": "assistant", "content": "."}]}
        turn = dataclasses.replace(turn_from_transcript(stub, turn_id="adversarial"), reply=reply)
        return turn, elapsed, f"{type(exc).__name__}: {str(exc)[:50]}"


def adversarial_lines(runner: ValidationRunner, repeat: int) -> list[str]:
    """Parse and validate the adversarial reply; the suite total plus each validator's share."""
    reply = adversarial_reply()
    transcript = adversarial_transcript(reply)
    parse_s, validate_s = [], []
    verdict = None
    for _ in range(repeat):
        turn, parse_time, parse_error = adversarial_turn(transcript)
        parse_s.append(parse_time)
        start = time.perf_counter()
        verdict = runner.validate(turn)
        validate_s.append(time.perf_counter() - start)
    assert verdict is not None
    status = "OK" if max(validate_s) < ADVERSARIAL_TARGET_S else "MISS"
    kinds = Counter(f.kind.value for f in verdict.findings)
    listed = ", ".join(f"{k}×{n}" for k, n in kinds.most_common()) or "no findings"
    parsed = f"raised {parse_error} after" if parse_error else "took"
    lines = [
        f"adversarial reply, {len(reply):,} chars ({repeat} run{'s' if repeat > 1 else ''}):",
        f"  suite best {min(validate_s) * 1000:.1f} ms, worst {max(validate_s) * 1000:.1f} ms"
        f"   target < {ADVERSARIAL_TARGET_S:.0f} s: {status}",
        f"  transcript→turn (prose-call scan, untimed above) {parsed} {min(parse_s) * 1000:.1f} ms",
        f"  verdict {verdict.outcome.value}: {listed}",
    ]
    # Each validator on its own fresh turn: it pays for the cached views it reads, which
    # shows where the time goes (the suite shares those views, so the parts exceed the sum).
    turn = adversarial_turn(transcript)[0]
    parts = []
    for validator in default_validators(ValidationSettings()):
        fresh = dataclasses.replace(turn)
        start = time.perf_counter()
        try:
            validator(fresh)
        except Exception as exc:  # the suite fails open; report instead of dying
            parts.append(f"{validator.name} raised {type(exc).__name__}")
            continue
        parts.append(f"{validator.name} {(time.perf_counter() - start) * 1000:.1f}")
    lines.append("  per validator (ms, alone): " + ", ".join(parts))
    return lines


# --- report ----------------------------------------------------------------------------


def compare_lines(name: str, turns: Sequence[Turn], runner: ValidationRunner, repeat: int) -> str:
    """One table row: baseline and suite on the same turns, then the suite's slowest turn."""
    base = time_per_turn(baseline_validate, turns, repeat)
    suite = time_per_turn(runner.validate, turns, repeat)
    ratio = suite.mean_us / base.mean_us if base.mean_us else float("inf")
    slowest = max(range(len(turns)), key=suite.per_turn_ns.__getitem__)
    turn = turns[slowest]
    return (
        f"{name:12} {len(turns):6d} | {base.turns_per_s:10,.0f} {base.mean_us:9.1f} |"
        f" {suite.turns_per_s:9,.0f} {suite.mean_us:9.1f} {suite.percentile_us(50):8.1f}"
        f" {suite.percentile_us(99):8.1f} | {ratio:7.1f}×"
        f"  {'OK' if ratio <= RATIO_TARGET else 'MISS'}/"
        f"{'OK' if suite.percentile_us(99) < P99_TARGET_US else 'MISS'}\n"
        f"{'':12} slowest {suite.per_turn_ns[slowest] / 1000:,.0f} µs: {turn.turn_id}"
        f" (reply {len(turn.reply):,} chars, {len(turn.tool_calls)} calls,"
        f" {len(turn.tool_results_text) + len(turn.history_results_text):,} chars of results)"
    )


def validator_lines(name: str, turns: Sequence[Turn], repeat: int) -> list[str]:
    """Each validator alone on the same turns: mean and p99 µs, to show where time goes."""
    parts = []
    for validator in default_validators(ValidationSettings()):
        timing = time_per_turn(_fail_open(validator), turns, repeat)
        parts.append(f"{validator.name} {timing.mean_us:.0f}/{timing.percentile_us(99):.0f}")
    return [f"  {name}, each validator alone, mean/p99 µs: " + ", ".join(parts)]


def _fail_open(validator: Callable[[Turn], object]) -> Callable[[Turn], object]:
    # As in the runner: a raising validator costs its time but does not stop the benchmark.
    def run(turn: Turn) -> object:
        try:
            return validator(turn)
        except Exception:
            return None

    return run


HEADER = (
    f"{'input':12} {'turns':>6} | {'base t/s':>10} {'µs/turn':>9} |"
    f" {'suite t/s':>9} {'µs/turn':>9} {'p50 µs':>8} {'p99 µs':>8} | {'suite/base':>8}"
    "  ratio/p99"
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.validators",
        description="Validator suite throughput vs a plain SHA-only validator.",
    )
    parser.add_argument("--repeat", type=int, default=None, metavar="N", help="repetitions (5)")
    parser.add_argument(
        "--quick", action="store_true", help="2 repetitions, 20 tau runs, one adversarial run"
    )
    parser.add_argument(
        "--by-validator", action="store_true", help="also time each validator alone per input"
    )
    args = parser.parse_args(argv)
    repeat = args.repeat or (2 if args.quick else 5)
    max_runs = 20 if args.quick else None

    runner = default_runner()
    corpus, notes = corpus_turns()
    tau = tau_turns(max_runs)

    print(
        f"per turn: median of {repeat} repetitions, fresh Turn each time, construction untimed,"
        " gc off while timing"
    )
    print(f"baseline: SHA-only validator; suite: {', '.join(runner.labels)}")
    print(
        f"targets: suite/baseline ≤ {RATIO_TARGET:.0f}×, suite p99 < {P99_TARGET_US:.0f} µs"
        " (last column)\n"
    )
    print(HEADER)
    inputs = {"corpus": corpus, "tau_retail": tau}
    if corpus:
        print(compare_lines("corpus", corpus, runner, repeat))
    else:
        print(
            f"{'corpus':12} {'-':>6} | skipped: no turns in {CORPUS_DIR.relative_to(REPO)}/*.jsonl"
        )
    print(compare_lines("tau_retail", tau, runner, repeat))
    if args.by_validator:
        for name, turns in inputs.items():
            if turns:
                for line in validator_lines(name, turns, repeat):
                    print(line)
    for note in notes[:5]:
        print(f"  corpus line skipped: {note}")
    if len(notes) > 5:
        print(f"  … {len(notes) - 5} more corpus lines skipped")
    print()
    for line in adversarial_lines(runner, 1 if args.quick else 3):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
