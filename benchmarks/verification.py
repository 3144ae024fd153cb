"""Verification at sources of truth: how many names it settles, how rightly, how fast.

A synthetic repository (`verification_repo`: default 5,000 commits and 3,000 files,
`--quick` 300 and 200) is built with `git fast-import` in a temporary directory. Replies
(`verification_replies`) name its commits, paths, functions, classes and tests, and as
many invented ones; the validators judge each reply and `subjects.py` picks the names to
check, which is measured first: how many planted names became subjects at all. Each
subject is then asked, one at a time through `verify_subjects`, of the turn's trace and
then git, four times:

    git checkout  cold   a new GitVerifier asking the bare repository in place
                  warm   the same verifier again (git keeps no answer cache: warm differs
                         by the first ask's `rev-parse` and by what the OS has cached)
    git mirror    cold   the repository configured by `file://` URL: the first ask clones
                         it (its latency is the `first` column), the rest ask the mirror
                  warm   the same mirror, fresh (no fetch within the interval)

and the links of replies citing a loopback HTTP server (`verification_links`: 200, 404,
redirects, a HEAD-less page) are asked cold (empty cache) and warm (every answer cached).

Per row: subjects asked; settled share (confirmed + refuted over asked); precision and
recall of `confirmed` (the reply's claim is false: an invented name proven absent, or a
name said not to exist that does) and of `refuted` (the claim holds: the suspicion is
withdrawn), against the truth the benchmark built; latency per verification (the first
ask, p50, p99) and verifications per second, one thread. Wrong answers are listed under
the table with their evidence.

    python -m benchmarks.verification [--quick] [--json] [--commits N] [--files N]
                                      [--turns N] [--links N]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factledger.processors.model import Turn
from factledger.processors.runner import default_runner
from factledger.processors.verification.base import (
    Subject,
    Verification,
    VerificationOutcome,
    Verifier,
    existence_outcome,
)
from factledger.processors.verification.chain import verify_subjects
from factledger.processors.verification.subjects import subjects
from factledger.processors.verification.trace_source import TraceVerifier
from factledger.verifiers import git_settings
from factledger.verifiers.git import GitVerifier
from factledger.verifiers.links import LinkSettings, LinkVerifier

from . import verification_repo
from .verification_links import link_replies, link_server
from .verification_replies import REPOSITORY, Planted, Reply, replies

BUDGET_SECONDS = 120.0
"""Per subject, so no answer of the benchmark is cut short by time."""
CONFIRMED, REFUTED = VerificationOutcome.CONFIRMED, VerificationOutcome.REFUTED


@dataclass(frozen=True)
class Sizes:
    commits: int
    files: int
    turns: int
    links: int


FULL = Sizes(commits=5_000, files=3_000, turns=280, links=150)
QUICK = Sizes(commits=300, files=200, turns=70, links=30)


@dataclass(frozen=True)
class Asked:
    """One subject, the name it was planted as, the answer and how long it took."""

    turn: Turn
    planted: Planted
    subject: Subject
    answer: Verification | None = None
    seconds: float = 0.0

    @property
    def expected(self) -> VerificationOutcome:
        return existence_outcome(self.subject, self.planted.exists)

    @property
    def wrong(self) -> bool:
        return (
            self.answer is not None
            and self.answer.settled
            and self.answer.outcome is not self.expected
        )


@dataclass(frozen=True)
class Extraction:
    """Which planted names the validators and subjects.py turned into subjects."""

    asked: tuple[Asked, ...]
    planted: Counter[str]
    extracted: Counter[str]
    unplanted: tuple[Subject, ...]
    missed: tuple[Planted, ...]

    def line(self) -> str:
        total, found = sum(self.planted.values()), sum(self.extracted.values())
        by_shape = ", ".join(
            f"{shape} {self.extracted[shape]}/{n}" for shape, n in self.planted.items()
        )
        others = Counter(s.kind.value for s in self.unplanted)
        besides = ", ".join(f"{kind} {n}" for kind, n in others.most_common()) or "none"
        return (
            f"planted names extracted as subjects: {found}/{total} ({_share(found, total)}):"
            f" {by_shape}; subjects nobody planted: {besides}"
        )


def extract(planted_replies: Sequence[Reply]) -> Extraction:
    runner = default_runner()
    asked: list[Asked] = []
    unplanted: list[Subject] = []
    planted: Counter[str] = Counter()
    extracted: Counter[str] = Counter()
    missed: list[Planted] = []
    for reply in planted_replies:
        by_key = {p.key: p for p in reply.planted}
        planted.update(p.shape for p in reply.planted)
        for subject in subjects(reply.turn, runner.validate(reply.turn)):
            match = by_key.pop(subject.key, None)
            if match is None:
                unplanted.append(subject)
                continue
            extracted[match.shape] += 1
            asked.append(Asked(reply.turn, match, subject))
        missed.extend(by_key.values())
    return Extraction(tuple(asked), planted, extracted, tuple(unplanted), tuple(missed))


@dataclass(frozen=True)
class Row:
    """One pass over the subjects with one set of sources."""

    name: str
    asked: tuple[Asked, ...]
    wall_seconds: float

    def figures(self, *, leave_out: frozenset[str] = frozenset()) -> dict[str, float]:
        """The row's figures; `leave_out` names shapes of `Planted` not to count."""
        answers = [
            a for a in self.asked if a.answer is not None and a.planted.shape not in leave_out
        ]
        settled = [a for a in answers if a.answer is not None and a.answer.settled]
        by_trace = [
            a for a in settled if a.answer is not None and a.answer.source.startswith("trace")
        ]
        ms = [a.seconds * 1000 for a in self.asked]
        figures = {
            "asked": float(len(self.asked)),
            "settled": _ratio(len(settled), len(answers)),
            "by_trace": _ratio(len(by_trace), len(settled)),
        }
        for outcome in (CONFIRMED, REFUTED):
            said = [a for a in answers if a.answer is not None and a.answer.outcome is outcome]
            meant = [a for a in answers if a.expected is outcome]
            right = [a for a in said if a.expected is outcome]
            figures[f"{outcome.value}_precision"] = _ratio(len(right), len(said))
            figures[f"{outcome.value}_recall"] = _ratio(len(right), len(meant))
        figures.update(
            first_ms=ms[0] if ms else math.nan,
            p50_ms=_percentile(ms, 50),
            p99_ms=_percentile(ms, 99),
            per_second=_ratio(len(self.asked), self.wall_seconds),
        )
        return figures


def run_pass(name: str, asked: Sequence[Asked], verifiers: Sequence[Verifier]) -> Row:
    """Ask every subject in order, each on its own, timing each."""
    done = []
    started = time.perf_counter()
    for item in asked:
        begun = time.perf_counter()
        (answer,) = verify_subjects(
            [item.subject],
            item.turn,
            verifiers,
            budget_seconds=BUDGET_SECONDS,
            per_source_seconds=BUDGET_SECONDS,
        )
        done.append(
            Asked(item.turn, item.planted, item.subject, answer, time.perf_counter() - begun)
        )
    return Row(name, tuple(done), time.perf_counter() - started)


def git_rows(repo: Path, asked: Sequence[Asked], mirror_dir: Path) -> list[Row]:
    """Cold and warm passes against the repository in place, then through a mirror."""
    rows = []
    in_place = git_settings.from_mapping({"repositories": {REPOSITORY: str(repo)}})
    checkout: list[Verifier] = [TraceVerifier(), GitVerifier(in_place)]
    rows.append(run_pass("git checkout, cold", asked, checkout))
    rows.append(run_pass("git checkout, warm", asked, checkout))
    by_url = git_settings.from_mapping(
        {
            "repositories": {REPOSITORY: repo.resolve().as_uri()},
            "mirror_dir": str(mirror_dir),
            "min_fetch_interval_seconds": 3600,
        }
    )
    mirrored: list[Verifier] = [TraceVerifier(), GitVerifier(by_url)]
    rows.append(run_pass("git mirror, cold (clone)", asked, mirrored))
    rows.append(run_pass("git mirror, warm", asked, mirrored))
    return rows


def link_settings() -> LinkSettings:
    """Loopback allowed by name and network, as a deployment checking internal docs
    would; per-host spacing opened up, since every link here is on one host (the
    default 5 per second would make the rate limit the figure)."""
    return LinkSettings.from_mapping(
        {
            "allow_hosts": ["127.0.0.1"],
            "allowed_networks": ["127.0.0.0/8"],
            "per_host_per_second": 100_000,
            "resolver_canary": "",
            "timeout_seconds": 10,
        }
    )


def link_rows(asked: Sequence[Asked]) -> list[Row]:
    verifiers: list[Verifier] = [TraceVerifier(), LinkVerifier(link_settings())]
    return [
        run_pass("links, cold", asked, verifiers),
        run_pass("links, warm (cache)", asked, verifiers),
    ]


@dataclass(frozen=True)
class Report:
    sizes: Sizes
    files: int
    """Files the repository holds (two per module: a few less than asked for when odd)."""
    build_seconds: float
    git_extraction: Extraction
    link_extraction: Extraction
    rows: tuple[Row, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "sizes": asdict(self.sizes),
            "files": self.files,
            "build_seconds": round(self.build_seconds, 3),
            "extraction": {
                name: {
                    "planted": dict(e.planted),
                    "extracted": dict(e.extracted),
                    "unplanted": [[s.kind.value, s.name] for s in e.unplanted],
                    "missed": [[p.shape, p.name, p.exists] for p in e.missed],
                }
                for name, e in (("git", self.git_extraction), ("links", self.link_extraction))
            },
            "rows": {
                row.name: {k: _rounded(v) for k, v in row.figures().items()} for row in self.rows
            },
            "wrong": [_wrong(a) for row in self.rows for a in row.asked if a.wrong],
        }


def measure(sizes: Sizes) -> Report:
    with tempfile.TemporaryDirectory(prefix="factledger-bench-verify-") as folder:
        root = Path(folder)
        started = time.perf_counter()
        repo, truth = verification_repo.build(root, commits=sizes.commits, files=sizes.files)
        build_seconds = time.perf_counter() - started
        git_extraction = extract(replies(truth, sizes.turns))
        rows = git_rows(repo, git_extraction.asked, root / "mirrors")
    with link_server() as base:
        link_extraction = extract(link_replies(base, sizes.links))
        rows.extend(link_rows(link_extraction.asked))
    return Report(
        sizes, len(truth.files), build_seconds, git_extraction, link_extraction, tuple(rows)
    )


HEADER = (
    f"{'source, pass':26} {'asked':>5} {'settled':>7} {'trace':>6} |"
    f" {'conf P':>6} {'conf R':>6} | {'ref P':>6} {'ref R':>6} |"
    f" {'first ms':>8} {'p50 ms':>7} {'p99 ms':>7} {'verif/s':>8}"
)


def table(report: Report) -> list[str]:
    """The figures of every row side by side, then the wrong answers."""
    sizes = report.sizes
    lines = [
        f"repository: {sizes.commits:,} commits, {report.files:,} files,"
        f" built with git fast-import in {report.build_seconds:.1f} s",
        "git " + report.git_extraction.line(),
        "links " + report.link_extraction.line(),
        "",
        HEADER,
        "-" * len(HEADER),
    ]
    for row in report.rows:
        f = row.figures()
        lines.append(
            f"{row.name:26} {int(f['asked']):5d} {_pct(f['settled']):>7} {_pct(f['by_trace']):>6} |"
            f" {_num(f['confirmed_precision']):>6} {_num(f['confirmed_recall']):>6} |"
            f" {_num(f['refuted_precision']):>6} {_num(f['refuted_recall']):>6} |"
            f" {f['first_ms']:8.1f} {f['p50_ms']:7.1f} {f['p99_ms']:7.1f} {f['per_second']:8.0f}"
        )
    lines.append("")
    lines.extend(kind_lines(report.rows[1]))
    wrong = [a for row in report.rows for a in row.asked if a.wrong]
    kinds = Counter(
        f"{a.planted.shape} {a.expected.value} answered {a.answer.outcome.value}"
        for a in wrong
        if a.answer is not None
    )
    listed = ", ".join(f"{kind} ×{n}" for kind, n in kinds.most_common())
    lines.append("")
    lines.append(f"wrong answers over all rows: {len(wrong)}" + (f" ({listed})" if listed else ""))
    for item in wrong[:10]:
        w = _wrong(item)
        lines.append(
            f"  {w['shape']} {w['name']!r}: expected {w['expected']}, got {w['outcome']}"
            f" from {w['source']} ({w['query'][:120]} -> {w['answer'][:120]})"
        )
    return lines


def kind_lines(row: Row) -> list[str]:
    """One row's latency by subject kind: where its p99 comes from."""
    by_kind: dict[str, list[float]] = {}
    for a in row.asked:
        by_kind.setdefault(a.subject.kind.value, []).append(a.seconds * 1000)
    parts = [
        f"{kind} {_percentile(ms, 50):.1f}/{_percentile(ms, 99):.1f}"
        for kind, ms in sorted(by_kind.items())
    ]
    return [f"{row.name}, p50/p99 ms by kind: " + ", ".join(parts)]


def _wrong(item: Asked) -> dict[str, str]:
    answer = item.answer
    assert answer is not None
    return {
        "shape": item.planted.shape,
        "name": item.subject.name,
        "expected": item.expected.value,
        "outcome": answer.outcome.value,
        "source": answer.source,
        "query": answer.query,
        "answer": answer.answer,
    }


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def _share(part: int, whole: int) -> str:
    return _pct(_ratio(part, whole))


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value * 100:.1f}%"


def _num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _percentile(values: Sequence[float], q: float) -> float:
    """Nearest rank, so p99 is a time some verification actually took."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.verification",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK.commits} commits, {QUICK.files} files"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--commits", type=int, metavar="N", help=f"commits ({FULL.commits:,})")
    parser.add_argument("--files", type=int, metavar="N", help=f"files ({FULL.files:,})")
    parser.add_argument(
        "--turns", type=int, metavar="N", help=f"replies naming repository things ({FULL.turns})"
    )
    parser.add_argument(
        "--links", type=int, metavar="N", help=f"replies citing links ({FULL.links})"
    )
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    sizes = Sizes(
        commits=args.commits or base.commits,
        files=args.files or base.files,
        turns=args.turns or base.turns,
        links=args.links or base.links,
    )
    report = measure(sizes)
    if args.json:
        print(json.dumps(report.as_json(), indent=2))
    else:
        print("\n".join(table(report)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
