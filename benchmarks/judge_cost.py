"""What judging one turn costs the judge worker, on the ingest benchmark's turns.

    python -m benchmarks.judge_cost [--turns N] [--rounds N] [--instructions]

Renders the turns `benchmarks.ingest` sends (four spans in the GenAI conventions, one in
ten a reject), decodes them as the service does and judges them with a `TurnJudge` set up
as the judge worker sets it up: the default suite behind the worker's time limit and turn
note, the default redaction, verification requests on, the worker's garbage collector.
Spans go in 200 at a time, as the worker takes them from its pipe; every round judges
turns no round saw before. Prints the CPU time per turn, best and median of `--rounds`.

With `--instructions` it also counts the instructions per turn with valgrind's callgrind:
this script runs twice more under it, once judging `--turns` turns and once stopping just
before, and the difference is divided by the turns. The count does not move with the
machine's load (two runs give the same figure to a few instructions in a million), so two
builds compare by it where their CPU times differ by less than the noise. It counts the
judge alone: receiving the spans from the pipe and sending the rows back are not in it.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from benchmarks.ingest import PROTOBUF, TurnFactory
from factledger.collector.gc_tuning import tune_collector
from factledger.collector.judge.quarantine import QuarantiningRunner, TurnNote
from factledger.collector.judge.time_limit import TimeLimitedRunner
from factledger.collector.judge.turn_judge import TurnJudge
from factledger.collector.otlp import decode_request
from factledger.collector.redaction import Redactor
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord

TURNS_PER_BODY = 50
SPANS_PER_MESSAGE = 200
"""Spans per `TurnJudge.judge` call: what the worker takes from one message of its pipe."""
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


class Bench:
    """A judge as the worker sets it up, and fresh turns for it."""

    def __init__(self) -> None:
        self._factory = TurnFactory(PROTOBUF, b"judgecst", first=1)
        self._note_file = tempfile.TemporaryFile()  # noqa: SIM115 (lives with the bench)
        runner = default_runner()
        self.judge = TurnJudge(
            QuarantiningRunner(TimeLimitedRunner(runner), TurnNote(self._note_file.fileno())),
            grace_seconds=0.0,
            max_wait_seconds=60.0,
            redactor=Redactor.default(),
            verify=True,
            grade=runner.graded,
        )

    def spans(self, turns: int) -> list[SpanRecord]:
        """The spans of `turns` turns no earlier call made, decoded as the service does."""
        bodies = [self._factory.body(TURNS_PER_BODY) for _ in range(-(-turns // TURNS_PER_BODY))]
        return [s for body in bodies for s in decode_request(body, PROTOBUF.content_type).spans]

    def run(self, spans: Sequence[SpanRecord]) -> int:
        """Judge `spans` as the worker would; the number of turns judged."""
        judged = 0
        for start in range(0, len(spans), SPANS_PER_MESSAGE):
            judged += len(self.judge.judge(spans[start : start + SPANS_PER_MESSAGE]).turn_rows)
        return judged + len(self.judge.judge([], flush=True).turn_rows)


def cpu_per_turn(turns: int, rounds: int) -> list[float]:
    """µs of CPU per judged turn, one figure per round."""
    bench = Bench()
    bench.run(bench.spans(2 * TURNS_PER_BODY))  # compiles the rules, fills the caches
    tune_collector()
    figures = []
    for _ in range(rounds):
        spans = bench.spans(turns)
        started = time.process_time()
        judged = bench.run(spans)
        figures.append((time.process_time() - started) / judged * 1e6)
    return figures


def _count_child(turns: int, judge: bool) -> None:
    """Under callgrind: set everything up, then judge `turns` turns only when `judge`."""
    bench = Bench()
    bench.run(bench.spans(2 * TURNS_PER_BODY))
    spans = bench.spans(turns)
    tune_collector()
    gc.collect()
    if judge:
        bench.run(spans)


def instructions_per_turn(turns: int) -> float:
    """Instructions per judged turn, from two callgrind runs (see the module)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (Debian's package valgrind)")
    counts = []
    for judge in (False, True):
        command = [
            valgrind,
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-m",
            "benchmarks.judge_cost",
            "--count-child",
            str(turns),
            *(["--judge"] if judge else []),
        ]
        # Same string hashes in both runs: set and dict orders, so the work, are the same.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        found = _COLLECTED.search(done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"the callgrind run failed:\n{done.stderr[-2000:]}")
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) / turns


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns per round (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count instructions per turn under callgrind (about two minutes)",
    )
    parser.add_argument("--count-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--judge", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count_child is not None:
        _count_child(args.count_child, args.judge)
        return 0
    if args.turns < 1 or args.rounds < 1:
        parser.error("--turns and --rounds must be at least 1")
    figures = cpu_per_turn(args.turns, args.rounds)
    shown = " ".join(f"{f:.0f}" for f in figures)
    print(
        f"CPU per judged turn: best {min(figures):.0f} µs, median "
        f"{statistics.median(figures):.0f} µs ({args.rounds} rounds of {args.turns}: {shown})"
    )
    if args.instructions:
        counted = min(args.turns, 400)  # callgrind runs some 50 times slower
        per_turn = instructions_per_turn(counted)
        print(f"instructions per judged turn: {per_turn:,.0f} (callgrind, {counted} turns)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
