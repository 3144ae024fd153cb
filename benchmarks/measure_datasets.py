"""Detection and false-positive rates of the validator suite on the shared datasets.

- when2call: recall on phantom tool calls (`cannot_answer` rows), recall on invented
  arguments (`request_for_info` rows, on the held-out parameter and on any parameter),
  false positives on correct tool calls (`tool_call` rows).
- tau_retail: verdicts on every text reply of the 73 solved runs (presumed clean, so a
  reject is probably a false positive; target < 2%), and of the 27 unsolved runs for
  information.
- who_and_when: false rejects and flags on the multi-agent replies before each run's
  labelled mistake, recall on the labelled replies whose mistake is in scope
  (`benchmarks.measure_who_and_when`).

    python -m benchmarks.measure_datasets [--show N] [--show-when2call N] [--examples [N]]
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.model import Finding, Turn, Verdict
from factledger.processors.runner import ValidationRunner, default_runner

from .datasets import (
    EvalCase,
    datasets_dir,
    is_solved,
    load_tau_runs,
    load_when2call,
    tau_offered_tools,
    tau_reply_cases,
    when2call_cases,
)
from .measure_who_and_when import false_alarm_examples
from .measure_who_and_when import measure as measure_who_and_when
from .measure_who_and_when import report as who_and_when_report

REJECT_TARGET = 0.02
"""Share of solved tau_retail replies that may be rejected (presumed false positives)."""

PHANTOM = "unregistered_tool_call"
INVENTED = "ungrounded_tool_argument"


@dataclass(frozen=True)
class Checked:
    """One eval case with the turn built from it and the suite's verdict."""

    case: EvalCase
    turn: Turn
    verdict: Verdict

    @property
    def outcome(self) -> str:
        return self.verdict.outcome.value

    def has(self, kind: str, where: Callable[[Finding], bool] | None = None) -> bool:
        """True when a finding of `kind` (matching `where`, if given) was produced."""
        return any(
            f.kind.value == kind and (where is None or where(f)) for f in self.verdict.findings
        )


def check_cases(cases: Iterable[EvalCase], runner: ValidationRunner) -> list[Checked]:
    """Validate every case's transcript with `runner`."""
    checked = []
    for case in cases:
        turn = turn_from_transcript(case["transcript"], turn_id=case["id"])
        checked.append(Checked(case, turn, runner.validate(turn)))
    return checked


def mentions_param(finding: Finding, param: str) -> bool:
    """True when the finding names `param` in its token or message (e.g. `location=...`).

    Matched loosely but as a whole name, so `id` does not match inside `user_id`.
    """
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])"
    return re.search(pattern, f"{finding.token}\n{finding.message}", re.IGNORECASE) is not None


def share(part: int, whole: int) -> str:
    """`part/whole` as a percentage with the counts, e.g. `97.0% (97/100)`."""
    pct = 100.0 * part / whole if whole else 0.0
    return f"{pct:5.1f}% ({part}/{whole})"


def kinds_by_severity(checked: Sequence[Checked]) -> dict[str, Counter[str]]:
    """Per severity, how many turns had at least one finding of each kind."""
    counts: dict[str, Counter[str]] = {}
    for item in checked:
        seen = {(f.effective_severity.value, f.kind.value) for f in item.verdict.findings}
        for severity, kind in seen:
            counts.setdefault(severity, Counter())[kind] += 1
    return counts


def format_kinds(counts: dict[str, Counter[str]], indent: str = "    ") -> list[str]:
    """One line per severity: `reject: kind 3, kind 1`."""
    lines = []
    for severity in ("reject", "flag", "info"):
        if severity in counts:
            listed = ", ".join(f"{k} {n}" for k, n in counts[severity].most_common())
            lines.append(f"{indent}{severity}: {listed}")
    return lines


# --- when2call -------------------------------------------------------------------------


def when2call_report(checked: Sequence[Checked]) -> list[str]:
    """Recall on phantom calls and invented arguments, false positives on correct calls."""
    groups: dict[str, list[Checked]] = {}
    for item in checked:
        groups.setdefault(item.case["meta"]["correct_answer"], []).append(item)
    phantom = groups.get("cannot_answer", [])
    invented = groups.get("request_for_info", [])
    correct = groups.get("tool_call", [])

    phantoms = sum(caught_phantom(item) for item in phantom)
    on_param = sum(caught_held_out(item) for item in invented)
    any_param = sum(item.has(INVENTED) for item in invented)
    not_pass = sum(item.outcome != "pass" for item in invented)
    false_pos = [item for item in correct if item.outcome != "pass"]

    lines = [
        f"when2call: {len(checked)} rows, the `tool_call` answer of each row checked",
        f"  cannot_answer    (phantom tool)     recall {share(phantoms, len(phantom))}  {PHANTOM}",
        f"  request_for_info (invented arg)     recall {share(on_param, len(invented))}"
        f"  {INVENTED} on the held-out param",
        f"{'':38}any param {share(any_param, len(invented))}"
        f"  verdict not pass {share(not_pass, len(invented))}",
        f"  tool_call        (correct call)  false pos {share(len(false_pos), len(correct))}"
        "  verdict not pass",
    ]
    lines += format_kinds(kinds_by_severity(correct), indent="      on correct calls, ")
    return lines


def caught_phantom(item: Checked) -> bool:
    """A phantom tool call is caught when the call is reported as unregistered."""
    return item.has(PHANTOM)


def caught_held_out(item: Checked) -> bool:
    """An invented argument is caught when an ungrounded-argument finding names it."""
    param = item.case["meta"].get("held_out_param") or ""
    return bool(param) and item.has(INVENTED, lambda f: mentions_param(f, param))


def when2call_details(checked: Sequence[Checked], limit: int) -> list[str]:
    """The first misses and false positives of each when2call group, for inspection."""
    lines: list[str] = []
    wanted: dict[str, tuple[str, Callable[[Checked], bool]]] = {
        "cannot_answer": ("missed phantom calls", lambda i: not caught_phantom(i)),
        "request_for_info": (
            "invented arguments missed on the held-out param",
            lambda i: not caught_held_out(i),
        ),
        "tool_call": ("false positives on correct calls", lambda i: i.outcome != "pass"),
    }
    for label, (title, is_wrong) in wanted.items():
        wrong = [i for i in checked if i.case["meta"]["correct_answer"] == label and is_wrong(i)]
        if not wrong:
            continue
        lines.append(f"\nwhen2call {title}: {len(wrong)} (first {min(limit, len(wrong))})")
        for item in wrong[:limit]:
            call = item.turn.tool_calls[0] if item.turn.tool_calls else None
            held = item.case["meta"].get("held_out_param")
            lines.append(f"  {item.case['id']}  verdict {item.outcome}")
            lines.append(f"    question: {_clip(item.turn.user_message, 160)}")
            if call is not None:
                lines.append(f"    call: {call.name}({_clip(call.arguments_text, 140)})")
            if held:
                lines.append(f"    held-out param: {held}")
            lines += _finding_lines(item.verdict.findings)
    return lines


# --- tau_retail ------------------------------------------------------------------------


def tau_report(title: str, runs: int, checked: Sequence[Checked], *, target: bool) -> list[str]:
    """Verdict shares over replies expected to pass, broken down by kind."""
    n = len(checked)
    rejected = sum(item.outcome == "reject" for item in checked)
    flagged = sum(item.outcome == "flag" for item in checked)
    verdict = ""
    if target:
        ok = n > 0 and rejected / n < REJECT_TARGET
        verdict = f" target < {REJECT_TARGET:.0%}: {'OK' if ok else 'MISS'}"
    lines = [
        f"  {title:15} {runs:3d} runs {n:4d} replies  reject {share(rejected, n)}{verdict}"
        f"   flag {share(flagged, n)}"
    ]
    lines += format_kinds(kinds_by_severity(checked), indent="      ")
    return lines


def tau_details(
    checked: Sequence[Checked], limit: int, title: str, outcomes: tuple[str, ...] = ("reject",)
) -> list[str]:
    """The first `limit` replies with one of `outcomes`, with their findings, for inspection."""
    shown = [item for item in checked if item.outcome in outcomes]
    if not shown:
        return [f"\n{'/'.join(outcomes)} replies of {title} tau_retail runs: none"]
    lines = [
        f"\n{'/'.join(outcomes)} replies of {title} tau_retail runs: {len(shown)}"
        f" (first {min(limit, len(shown))})"
    ]
    for item in shown[:limit]:
        lines.append(f"  {item.case['id']}  verdict {item.outcome}")
        lines.append(f"    reply: {_clip(item.turn.reply, 240)}")
        lines += _finding_lines(item.verdict.findings, reply=item.turn.reply)
    return lines


def _finding_lines(findings: Iterable[Finding], reply: str = "") -> list[str]:
    lines = []
    for f in findings:
        token = f" `{_clip(f.token, 60)}`" if f.token else ""
        lines.append(
            f"    - [{f.effective_severity.value}] {f.kind.value}{token}: {_clip(f.message, 160)}"
        )
        if reply and f.span is not None:
            # Where in the reply: the start of a long reply rarely shows the offending part.
            start, end = max(0, f.span.start - 60), min(len(reply), f.span.end + 60)
            lines.append(f"      at {f.span.start}: …{_clip(reply[start:end], 200)}…")
    return lines


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return textwrap.shorten(flat, width, placeholder=" …") if len(flat) > width else flat


# --- command line ----------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.measure_datasets",
        description=(
            "Validator recall and false-positive rates on when2call, tau_retail and who_and_when."
        ),
    )
    parser.add_argument(
        "--show",
        type=int,
        default=0,
        metavar="N",
        help="print the first N rejected tau replies (solved runs, then unsolved)",
    )
    parser.add_argument(
        "--show-flags", action="store_true", help="with --show, include flagged replies"
    )
    parser.add_argument(
        "--show-when2call",
        type=int,
        default=0,
        metavar="N",
        help="print the first N misses / false positives of each when2call group",
    )
    parser.add_argument(
        "--examples",
        type=int,
        nargs="?",
        const=20,
        default=0,
        metavar="N",
        help="print N who_and_when false alarms on clean turns (default 20), across kinds",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    runner = default_runner()
    print(f"datasets: {datasets_dir()}")
    print(f"suite: {', '.join(runner.labels)}\n")

    w2c = check_cases(when2call_cases(load_when2call()), runner)
    for line in when2call_report(w2c):
        print(line)

    runs = load_tau_runs()
    tools = tau_offered_tools(runs)  # every tool any run calls was offered to all runs
    solved_runs = sum(1 for run in runs if is_solved(run))
    solved = check_cases(tau_reply_cases(runs, solved=True, tools=tools), runner)
    unsolved = check_cases(tau_reply_cases(runs, solved=False, tools=tools), runner)
    print(f"\ntau_retail: every assistant reply with text, expected pass ({len(tools)} tools)")
    for line in tau_report("solved", solved_runs, solved, target=True):
        print(line)
    for line in tau_report("unsolved (info)", len(runs) - solved_runs, unsolved, target=False):
        print(line)

    wow_runs, wow = measure_who_and_when(runner)
    print()
    for line in who_and_when_report(wow_runs, wow):
        print(line)

    if args.show_when2call:
        for line in when2call_details(w2c, args.show_when2call):
            print(line)
    if args.show:
        # Solved runs first: their rejects are presumed false positives.
        outcomes = ("reject", "flag") if args.show_flags else ("reject",)
        for title, group in (("solved", solved), ("unsolved", unsolved)):
            for line in tau_details(group, args.show, title, outcomes):
                print(line)
    if args.examples:
        for line in false_alarm_examples(wow, args.examples):
            print(line)
    checked = len(w2c) + len(solved) + len(unsolved) + len(wow)
    print(f"\n{checked} turns checked in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
