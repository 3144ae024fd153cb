"""CPU per span, stage by stage, with the compiled (mypyc) modules and without them.

    python -m benchmarks.compiled_ab [--pairs N] [--repeat N] [--turns N]

Runs benchmarks.cpu_floor's stages in child processes, each one's warm-up run and then
each stage's best of `--repeat` runs, alternately with the compiled modules and with
FACTLEDGER_PURE_PYTHON=1, `--pairs` times: on a shared machine whose load moves by tens of
percent from one minute to the next, runs side by side in time compare better than two
series run one after the other. Prints each stage's best and median over the runs of
each mode and how much each changed. Needs a fresh build (`make compiled`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from factledger.compiled import PURE_PYTHON_ENV, check, compiled_status

COMPILED = "compiled"
PURE = "pure Python"


@dataclass(frozen=True)
class Run:
    """One child's figures: each stage's best µs per span, with or without the build."""

    compiled: bool
    stages: Mapping[str, float]


def _child(repeat: int, turns: int) -> int:
    from benchmarks.cpu_floor import Floor
    from factledger.collector.store import Store, StoreConfig

    with tempfile.TemporaryDirectory(prefix="factledger-ab-") as data:
        store = Store.open(StoreConfig(dsn=f"chdb://{data}/store"))
        try:
            floor = Floor(store, turns)
            floor.run_once()
            floor.reset()
            for _ in range(repeat):
                floor.run_once()
        finally:
            store.close()
    stages = {key: stage.best_us for key, stage in floor.stages.items()}
    print(json.dumps({"compiled": compiled_status().active, "stages": stages}))
    return 0


def _run(*, pure: bool, repeat: int, turns: int) -> Run:
    env = {key: value for key, value in os.environ.items() if key != PURE_PYTHON_ENV}
    if pure:
        env[PURE_PYTHON_ENV] = "1"
    command = [sys.executable, "-m", "benchmarks.compiled_ab", "--child"]
    command += ["--repeat", str(repeat), "--turns", str(turns)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    data = json.loads(done.stdout.splitlines()[-1])
    return Run(compiled=bool(data["compiled"]), stages=data["stages"])


def _change(before: float, after: float) -> str:
    return f"{(after - before) / before:+.0%}" if before else "n/a"


def summary(runs: Sequence[Run]) -> list[str]:
    """Per stage: the best and the median of each mode's runs, and how much each moved.
    The best is the figure least touched by other work on the machine."""
    by_mode: dict[bool, list[Run]] = {True: [], False: []}
    for run in runs:
        by_mode[run.compiled].append(run)
    stages = list(dict.fromkeys(key for run in runs for key in run.stages))
    lines = [f"{'stage':<10} {'best, ' + PURE + ' → ' + COMPILED:>32} {'median, the same':>27}"]
    for stage in stages:
        pure = [run.stages[stage] for run in by_mode[False]]
        built = [run.stages[stage] for run in by_mode[True]]
        if not pure or not built:
            continue
        best = min(pure), min(built)
        median = statistics.median(pure), statistics.median(built)
        lines.append(
            f"{stage:<10} {best[0]:16.1f} → {best[1]:6.1f} {_change(*best):>6}"
            f" {median[0]:10.1f} → {median[1]:6.1f} {_change(*median):>6}"
        )
    lines.append(
        f"(µs of CPU per span; {len(by_mode[False])} runs of each mode, alternating;"
        " each run's figure is its best of the --repeat runs)"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=4, help="runs of each mode")
    parser.add_argument("--repeat", type=int, default=3, help="cpu_floor runs per child")
    parser.add_argument("--turns", type=int, default=2_000, help="turns per cpu_floor run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        return _child(options.repeat, options.turns)
    status = check()
    if not status.active:
        print(f"no compiled modules to compare with: {status.reason} (run `make compiled`)")
        return 1
    runs: list[Run] = []
    for pair in range(options.pairs):
        for pure in (True, False):
            runs.append(_run(pure=pure, repeat=options.repeat, turns=options.turns))
        print(f"pair {pair + 1}/{options.pairs} done", flush=True)
    if not all(run.compiled is (index % 2 == 1) for index, run in enumerate(runs)):
        print("a run did not use the mode asked for (a source changed during the runs?)")
        return 1
    print("\n".join(summary(runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
