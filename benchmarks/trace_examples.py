"""Real agent traces against what was read from them by hand.

Every file of `otel_trace_examples/` in the shared datasets (`openinference/*.json`,
`langfuse_framework_traces/*.trace.json`) is loaded, normalized and checked against the
span facts of `trace_example_spans`, then assembled into turns (fake clock) and checked
against `trace_example_turns`; the default validator suite judges each turn. The runs
are presumed clean, so any finding the expectations do not list is a mismatch.

It prints one line per file (span facts, turns, findings), then each mismatch with what
came out and what was expected, and each finding. The exit status is 1 when a file does
not match, fails to load, or has no expectations (or an expectation has no file), and 2
when there are no example files at all.

    python -m benchmarks.trace_examples [--full]
"""

from __future__ import annotations

import argparse
import reprlib
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from factledger.processors.model import Finding
from factledger.processors.runner import ValidationRunner, default_runner

from . import trace_example_spans as spans
from . import trace_example_turns as turns
from .datasets import datasets_dir

EXAMPLES = Path("otel_trace_examples")
PATTERNS = ("openinference/*.json", "langfuse_framework_traces/*.trace.json")


def example_files(folder: Path) -> list[Path]:
    """The example traces under `folder` (an `otel_trace_examples/`), sorted by path."""
    return sorted(path for pattern in PATTERNS for path in folder.glob(pattern))


@dataclass(frozen=True)
class FileResult:
    """What one example file gave: mismatches per side, the turns and their findings."""

    name: str
    span_mismatches: tuple[spans.Mismatch, ...]
    turn_mismatches: tuple[spans.Mismatch, ...]
    turns: int
    findings: tuple[Finding, ...]
    error: str = ""
    """Why the file could not be checked at all (unreadable, a crash); "" when it was."""

    @property
    def ok(self) -> bool:
        return not (self.error or self.span_mismatches or self.turn_mismatches)


def check_file(
    path: Path,
    want_spans: spans.Expected,
    want_turns: turns.Expected,
    runner: ValidationRunner,
) -> FileResult:
    """Check one file; an exception anywhere is reported as its error, not raised."""
    try:
        got_spans = spans.normalized(path)
        got_turns = turns.judged(path, runner)
        return FileResult(
            path.name,
            tuple(spans.check_spans(got_spans, want_spans)),
            tuple(turns.check_turns(got_turns, want_turns)),
            len(got_turns.turns),
            tuple(f for v in got_turns.verdicts for f in v.findings),
        )
    except Exception as exc:  # one broken file must not hide the others' results
        return FileResult(path.name, (), (), 0, (), error=f"{type(exc).__name__}: {exc}")


def check_all(files: Iterable[Path], runner: ValidationRunner) -> list[FileResult]:
    """Check every file that has expectations on both sides; the others are errors."""
    results = []
    for path in files:
        want_spans = spans.EXPECTED.get(path.name)
        want_turns = turns.EXPECTED.get(path.name)
        if want_spans is None or want_turns is None:
            missing = [
                module
                for module, want in (("spans", want_spans), ("turns", want_turns))
                if want is None
            ]
            error = f"no hand-read expectations: add them to trace_example_{'/'.join(missing)}"
            results.append(FileResult(path.name, (), (), 0, (), error=error))
        else:
            results.append(check_file(path, want_spans, want_turns, runner))
    return results


def report(results: Sequence[FileResult], unmatched: Sequence[str], full: bool) -> list[str]:
    """The per-file table, the details, and a summary line."""
    show = repr if full else _short().repr
    width = max([len(r.name) for r in results] + [4])
    lines = [f"{'file':<{width}}  {'spans':<10}{'turns':<10}findings"]
    for r in results:
        if r.error:
            lines.append(f"{r.name:<{width}}  ERROR")
            continue
        span_cell = "OK" if not r.span_mismatches else f"{len(r.span_mismatches)} off"
        turn_cell = "OK" if not r.turn_mismatches else f"{len(r.turn_mismatches)} off"
        turn_cell = f"{turn_cell} ({r.turns})"
        kinds = ", ".join(dict.fromkeys(f.kind.value for f in r.findings))
        kinds = f"{len(r.findings)}: {kinds}" if r.findings else "none"
        lines.append(f"{r.name:<{width}}  {span_cell:<10}{turn_cell:<10}{kinds}")

    for r in results:
        if r.ok and not r.findings:
            continue
        lines += ["", r.name]
        if r.error:
            lines.append(f"  error: {r.error}")
        for side, mismatches in (("spans", r.span_mismatches), ("turns", r.turn_mismatches)):
            for m in mismatches:
                lines += [
                    f"  {side}: {m.what}",
                    f"    got:  {show(m.got)}",
                    f"    want: {show(m.want)}",
                ]
        for f in r.findings:
            lines.append(
                f"  finding {f.kind.value} ({f.effective_severity.value}): {f.token!r}: {f.message}"
            )
    for name in unmatched:
        lines += ["", f"{name}: expected, but no such file"]

    matching = sum(1 for r in results if r.ok)
    findings = sum(len(r.findings) for r in results)
    turn_count = sum(r.turns for r in results)
    lines += [
        "",
        f"{len(results)} files: {matching} match (spans and turns), {len(results) - matching} "
        f"do not; {turn_count} turns, {findings} findings"
        + (f"; {len(unmatched)} expected files missing" if unmatched else ""),
    ]
    return lines


def _short() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxstring = 120
    short.maxother = 120
    short.maxtuple = short.maxlist = short.maxdict = short.maxset = 12
    short.maxlevel = 5
    return short


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.trace_examples",
        description="Check the real trace examples against their hand-read facts and turns.",
    )
    parser.add_argument(
        "--full", action="store_true", help="print mismatching values whole, not shortened"
    )
    args = parser.parse_args(argv)

    folder = datasets_dir() / EXAMPLES
    files = example_files(folder)
    if not files:
        print(
            f"no example traces under {folder}: put the shared datasets beside the checkout "
            "or set FACTLEDGER_DATASETS to their folder",
            file=sys.stderr,
        )
        return 2
    runner = default_runner()
    print(f"examples: {folder}")
    print(f"suite: {', '.join(runner.labels)}\n")

    results = check_all(files, runner)
    names = {p.name for p in files}
    unmatched = sorted((set(spans.EXPECTED) | set(turns.EXPECTED)) - names)
    for line in report(results, unmatched, args.full):
        print(line)
    return 0 if all(r.ok for r in results) and not unmatched else 1


if __name__ == "__main__":
    raise SystemExit(main())
