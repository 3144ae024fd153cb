"""Precision and recall of the validator suite on Who&When's multi-agent runs.

Turns come from `benchmarks.who_and_when` (one per expert reply; code executions are
`execute_code` calls). Three groups:

- clean: replies before the labelled step (presumed clean): the false-reject and
  false-flag rates (turns with any reject / any flag finding) and the findings per kind;
- mistake: the labelled reply of each run. In scope (the scope rule's `fabricated` and
  `unbacked_result` buckets): recall (rejected or flagged) and how many findings are the
  labelled error by the evidence rule below; out of scope: verdict shares, for information;
- after: replies after the labelled step (may repeat the mistake), for information.

Evidence rule. A finding of a labelled reply is *kind-matched* when its kind is one that
decides the reason's bucket (`BUCKET_KINDS`), and *text-matched* when its token, or the
reply sentence at its span, shares a distinctive word with `mistake_reason`: a number of
two or more digits, or a word of four or more letters outside `GENERIC_WORDS` (function
words and the reasons' own vocabulary: agent, expert, code, data, incorrect …), compared
without a plural `s`. A labelled reply is *evidence-matched* when one finding is both.

    python -m benchmarks.measure_who_and_when [--examples [N]] [--labelled]
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from factledger.processors.kinds import Kind, Severity
from factledger.processors.model import Finding, Verdict
from factledger.processors.runner import ValidationRunner, default_runner
from factledger.processors.text import sentence_around

from .who_and_when import (
    BUCKETS,
    IN_SCOPE_BUCKETS,
    SCOPE_RULES,
    ReplyTurn,
    Run,
    all_turns,
    in_scope,
    load_runs,
)

BUCKET_KINDS: dict[str, frozenset[Kind]] = {
    # Made-up data, ids, files, URLs, inputs.
    "fabricated": frozenset(
        {
            Kind.FABRICATED_IDENTIFIER,
            Kind.BORROWED_IDENTIFIER,
            Kind.CONFABULATED_IDENTIFIER_SET,
            Kind.UNGROUNDED_TOOL_ARGUMENT,
            Kind.UNFETCHED_CITATION,
            Kind.PLACEHOLDER_AS_RESULT,
        }
    ),
    # Results and actions no tool produced.
    "unbacked_result": frozenset(
        {
            Kind.CLAIM_WITHOUT_TOOL,
            Kind.ERROR_REPORTED_AS_SUCCESS,
            Kind.SUMMARY_WITHOUT_ACTION,
            Kind.CITATION_UNCALLED_TOOL,
            Kind.CITATION_UNREGISTERED_TOOL,
            Kind.UNFETCHED_CITATION,
            Kind.FABRICATED_IDENTIFIER,
            Kind.CONFABULATED_IDENTIFIER_SET,
            Kind.PLACEHOLDER_AS_RESULT,
            Kind.PRESUPPOSED_ARTIFACT,
        }
    ),
}
"""Per in-scope bucket, the finding kinds that decide such a mistake."""

_GENERIC_TEXT = """
    about above after again also although another because been before being below
    between both could does doing done each either even every from further have having
    here into itself just like made make makes making many more most much must need
    only other over same should since some such than that their them then there these
    they this those through under until upon very were what when where whether which
    while will with within without would your
    agent agents expert experts assistant code codes data dataset information
    incorrect incorrectly inaccurate inaccuracies accurate correct correctly wrong error
    errors mistake provide provided provides providing result results resulting lead
    leading failure fail fails failed task tasks step steps necessary obtain gather take
    taking action actions actual actually directly reach reaches reached conclusion
    approach problem process processes using uses used tool tools call calls instead
    begin begins start starts answer question user value values figure list first
    subsequent available general internal knowledge fabricate fabricated fabricates
    hallucinate hallucinates placeholder placeholders hypothetical simulated generate
    generates generating assume assumes existence verify verifying verification
"""
GENERIC_WORDS = frozenset(_GENERIC_TEXT.split())
"""Words that say what kind of mistake it was, not which thing was wrong."""

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-]*[a-z0-9]|[a-z0-9]")


@dataclass(frozen=True)
class Judged:
    """One reply turn with the suite's verdict."""

    reply: ReplyTurn
    verdict: Verdict

    @property
    def run(self) -> Run:
        return self.reply.run

    @property
    def alarms(self) -> tuple[Finding, ...]:
        """Findings that reject or flag (info findings are no alarm)."""
        return tuple(
            f
            for f in self.verdict.findings
            if f.effective_severity in (Severity.REJECT, Severity.FLAG)
        )

    @property
    def rejected(self) -> bool:
        return any(f.effective_severity == Severity.REJECT for f in self.verdict.findings)

    @property
    def flagged(self) -> bool:
        return any(f.effective_severity == Severity.FLAG for f in self.verdict.findings)


def judge(replies: Iterable[ReplyTurn], runner: ValidationRunner) -> list[Judged]:
    return [Judged(reply, runner.validate(reply.turn)) for reply in replies]


# --- the evidence rule -----------------------------------------------------------------


def distinctive_words(text: str) -> set[str]:
    """Numbers of two or more digits and words of four or more letters outside
    GENERIC_WORDS, lower-cased, a plural `s` dropped."""
    out = set()
    for word in _WORD.findall(text.lower()):
        stem = word[:-1] if len(word) > 4 and word.endswith("s") else word
        if any(c.isdigit() for c in word):
            if sum(c.isdigit() for c in word) >= 2:
                out.add(stem)
        elif len(word) >= 4 and word not in GENERIC_WORDS and stem not in GENERIC_WORDS:
            out.add(stem)
    return out


def finding_text(reply: str, finding: Finding) -> str:
    """The finding's token and the reply sentence(s) its span covers."""
    parts = [finding.token]
    if finding.span is not None and reply:
        start = min(finding.span.start, len(reply) - 1)
        sentence = sentence_around(reply, start)
        parts.append(reply[sentence.start : max(sentence.end, finding.span.end)])
    return "\n".join(parts)


def text_matched(item: Judged, finding: Finding) -> bool:
    reason = distinctive_words(item.run.mistake_reason)
    return bool(reason & distinctive_words(finding_text(item.reply.turn.reply, finding)))


def kind_matched(item: Judged, finding: Finding) -> bool:
    return finding.kind in BUCKET_KINDS.get(item.run.bucket, frozenset())


def evidence_matched(item: Judged) -> bool:
    return any(kind_matched(item, f) and text_matched(item, f) for f in item.alarms)


# --- report ----------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    pct = 100.0 * part / whole if whole else 0.0
    return f"{pct:5.1f}% ({part}/{whole})"


def scope_lines(runs: Sequence[Run]) -> list[str]:
    """The scope rule's bucket counts over all runs' `mistake_reason`."""
    counts = Counter(run.bucket for run in runs)
    listed = []
    for bucket in BUCKETS:
        mark = "in scope" if in_scope(bucket) else "out"
        listed.append(f"{bucket} {counts[bucket]} ({mark})")
    return ["  scope rule buckets: " + ", ".join(listed)]


def report(runs: Sequence[Run], judged: Sequence[Judged]) -> list[str]:
    """The who_and_when figures, as printed by this module and by measure_datasets."""
    by_position: dict[str, list[Judged]] = defaultdict(list)
    for item in judged:
        by_position[item.reply.position].append(item)
    clean, mistake, after = by_position["clean"], by_position["mistake"], by_position["after"]
    at_task = sum(run.labelled_index is None for run in runs)
    pages = sum(not item.reply.turn.reply for item in judged)
    lines = [
        f"who_and_when: {len(runs)} runs, {len(judged)} expert turns checked "
        f"({len(clean)} clean, {len(mistake)} labelled, {len(after)} after the label; "
        f"{pages} are browser pages: empty reply, the browser call checked); "
        f"{at_task} runs labelled at the task message (no reply to check)",
        *scope_lines(runs),
        f"  clean (before the labelled step)   false reject "
        f"{share(sum(i.rejected for i in clean), len(clean))}"
        f"   false flag {share(sum(i.flagged for i in clean), len(clean))}",
    ]
    lines += kind_lines(clean, indent="      ")
    lines += bucket_lines(clean, title="clean turns by the run's bucket")
    lines.append(f"  labelled, in scope ({', '.join(IN_SCOPE_BUCKETS)}):")
    for bucket in IN_SCOPE_BUCKETS:
        group = [i for i in mistake if i.run.bucket == bucket]
        lines.append("    " + recall_line(bucket, group))
    in_group = [i for i in mistake if in_scope(i.run.bucket)]
    lines.append("    " + recall_line("all in scope", in_group))
    out_group = [i for i in mistake if not in_scope(i.run.bucket)]
    lines.append(
        f"  labelled, out of scope (info)      {len(out_group):3d} turns  reject "
        f"{share(sum(i.rejected for i in out_group), len(out_group))}"
        f"   flag {share(sum(i.flagged for i in out_group), len(out_group))}"
    )
    lines.append(
        f"  after the labelled step (info)     {len(after):3d} turns  reject "
        f"{share(sum(i.rejected for i in after), len(after))}"
        f"   flag {share(sum(i.flagged for i in after), len(after))}"
    )
    return lines


def kind_lines(group: Sequence[Judged], indent: str) -> list[str]:
    """Per severity and kind: findings and the turns they fell in."""
    findings: Counter[tuple[str, str]] = Counter()
    turns: Counter[tuple[str, str]] = Counter()
    for item in group:
        seen = set()
        for f in item.alarms:
            key = (f.effective_severity.value, f.kind.value)
            findings[key] += 1
            seen.add(key)
        turns.update(seen)
    lines = []
    for severity in ("reject", "flag"):
        listed = [
            f"{kind} {findings[(sev, kind)]} in {turns[(sev, kind)]} turns"
            for (sev, kind), _ in turns.most_common()
            if sev == severity
        ]
        if listed:
            lines.append(f"{indent}{severity}: {', '.join(listed)}")
    return lines


def bucket_lines(group: Sequence[Judged], title: str) -> list[str]:
    lines = [f"    {title}:"]
    for bucket in BUCKETS:
        part = [i for i in group if i.run.bucket == bucket]
        if part:
            lines.append(
                f"      {bucket:24} {len(part):3d} turns  reject "
                f"{share(sum(i.rejected for i in part), len(part))}"
                f"  flag {share(sum(i.flagged for i in part), len(part))}"
            )
    return lines


def recall_line(title: str, group: Sequence[Judged]) -> str:
    caught = sum(bool(i.alarms) for i in group)
    kind = sum(any(kind_matched(i, f) for f in i.alarms) for i in group)
    text = sum(any(text_matched(i, f) for f in i.alarms) for i in group)
    both = sum(evidence_matched(i) for i in group)
    return (
        f"{title:20} {len(group):3d} turns  recall {share(caught, len(group))}"
        f"  kind-matched {kind}  text-matched {text}  evidence-matched {both}"
    )


# --- details ---------------------------------------------------------------------------


def false_alarm_examples(judged: Sequence[Judged], limit: int) -> list[str]:
    """Up to `limit` alarms on clean turns, taken in turn from each kind (commonest kind
    first), so one frequent class does not hide the others."""
    by_kind: dict[str, list[tuple[Judged, Finding]]] = defaultdict(list)
    for item in judged:
        if item.reply.position == "clean":
            for f in item.alarms:
                by_kind[f.kind.value].append((item, f))
    order = sorted(by_kind, key=lambda k: -len(by_kind[k]))
    picked: list[tuple[Judged, Finding]] = []
    depth = 0
    while len(picked) < limit and any(depth < len(by_kind[k]) for k in order):
        for kind in order:
            if depth < len(by_kind[kind]) and len(picked) < limit:
                picked.append(by_kind[kind][depth])
        depth += 1
    total = sum(len(v) for v in by_kind.values())
    lines = [f"\nwho_and_when false alarms on clean turns: {total} (showing {len(picked)})"]
    for item, f in picked:
        lines += _finding_lines(item, f)
    return lines


def labelled_details(judged: Sequence[Judged]) -> list[str]:
    """Every in-scope labelled reply: its reason, and each alarm with its match marks."""
    group = [i for i in judged if i.reply.position == "mistake" and in_scope(i.run.bucket)]
    lines = [f"\nwho_and_when in-scope labelled replies: {len(group)}"]
    for item in group:
        lines.append(
            f"  {item.reply.turn.turn_id}  {item.run.bucket}  {item.reply.turn.agent}"
            f"  verdict {item.verdict.outcome.value}"
        )
        lines.append(f"    reason: {_clip(item.run.mistake_reason, 240)}")
        for f in item.alarms:
            marks = "kind" if kind_matched(item, f) else ""
            marks += "+text" if text_matched(item, f) else ""
            lines += _finding_lines(item, f, header=False, marks=marks or "-")
    return lines


def _finding_lines(item: Judged, f: Finding, *, header: bool = True, marks: str = "") -> list[str]:
    lines = []
    if header:
        lines.append(f"  {item.reply.turn.turn_id}  {item.reply.turn.agent}")
    mark = f" [{marks}]" if marks else ""
    lines.append(
        f"    - {f.effective_severity.value} {f.kind.value}{mark}: {_clip(f.message, 200)}"
    )
    if f.token:
        lines.append(f"      token: {_clip(f.token, 120)}")
    if f.span is not None:
        reply = item.reply.turn.reply
        sentence = sentence_around(reply, min(f.span.start, max(len(reply) - 1, 0)))
        lines.append(f"      sentence: {_clip(sentence.text, 240)}")
    return lines


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return textwrap.shorten(flat, width, placeholder=" …") if len(flat) > width else flat


def measure(runner: ValidationRunner | None = None) -> tuple[list[Run], list[Judged]]:
    """Load the runs and judge every reply turn."""
    runs = load_runs()
    return runs, judge(all_turns(runs), runner or default_runner())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.measure_who_and_when",
        description="Validator false alarms and recall on Who&When's multi-agent runs.",
    )
    parser.add_argument(
        "--examples",
        type=int,
        nargs="?",
        const=20,
        default=0,
        metavar="N",
        help="print N false alarms on clean turns (default 20), taken across kinds",
    )
    parser.add_argument(
        "--labelled", action="store_true", help="print every in-scope labelled reply"
    )
    parser.add_argument("--rule", action="store_true", help="print the scope rule")
    args = parser.parse_args(argv)

    runs, judged = measure()
    if args.rule:
        for rule in SCOPE_RULES:
            scope = "in scope" if rule.in_scope else "out of scope"
            print(f"{rule.bucket} ({scope}): {rule.meaning}\n    /{rule.pattern.pattern}/")
        print("otherwise wrong_reasoning_or_fact (out of scope)\n")
    for line in report(runs, judged):
        print(line)
    if args.examples:
        for line in false_alarm_examples(judged, args.examples):
            print(line)
    if args.labelled:
        for line in labelled_details(judged):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
