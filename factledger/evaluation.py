"""Score the validators against labelled cases (`factledger eval`).

A case is `{"id", "transcript", "expected": {"verdict", "kinds", "allow"}}`, or `{"id",
"otlp": <an OTLP/JSON ExportTraceServiceRequest>, "expected"}` whose spans are assembled
into turns exactly as the service does (the last turn is the one judged). `kinds` must
be found; `allow` may be found without counting as a false positive. A turn is positive
when its verdict is not `pass`. Precision without a positive answer, and recall without
a positive case, are undefined: None in the JSON report, "n/a" in the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factledger.collector import otlp
from factledger.processors.assembly.assembler import TurnAssembler
from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.errors import TranscriptError
from factledger.processors.model import Turn, Verdict
from factledger.processors.runner import ValidationRunner

VERDICTS = ("reject", "flag", "pass")


@dataclass(frozen=True)
class Case:
    id: str
    transcript: Mapping[str, Any] | None
    verdict: str
    kinds: frozenset[str]
    allow: frozenset[str]
    where: str = ""
    """Where the case was read (file:line), for error messages."""
    otlp: Mapping[str, Any] | None = None
    """An OTLP/JSON request instead of a transcript."""


@dataclass(frozen=True)
class CaseResult:
    case: Case
    verdict: str
    kinds: tuple[str, ...]

    @property
    def ok(self) -> bool:
        found = set(self.kinds)
        return (
            self.verdict == self.case.verdict
            and self.case.kinds <= found
            and found <= self.case.kinds | self.case.allow
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "verdict": self.verdict,
            "kinds": list(self.kinds),
            "expected_verdict": self.case.verdict,
            "expected_kinds": sorted(self.case.kinds),
            "ok": self.ok,
        }


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def precision(self) -> float | None:
        """None when nothing was found (no true or false positive)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """None when nothing was there to find (no true positive or false negative)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class Report:
    results: list[CaseResult] = field(default_factory=list)
    turns: Counts = field(default_factory=Counts)
    kinds: dict[str, Counts] = field(default_factory=dict)

    def add(self, result: CaseResult) -> None:
        self.results.append(result)
        expected_positive = result.case.verdict != "pass"
        positive = result.verdict != "pass"
        if positive and expected_positive:
            self.turns.tp += 1
        elif positive:
            self.turns.fp += 1
        elif expected_positive:
            self.turns.fn += 1
        else:
            self.turns.tn += 1
        found = set(result.kinds)
        for kind in found | result.case.kinds:
            counts = self.kinds.setdefault(kind, Counts())
            if kind in found and kind in result.case.kinds:
                counts.tp += 1
            elif kind in found and kind not in result.case.allow:
                counts.fp += 1
            elif kind in result.case.kinds:
                counts.fn += 1

    def as_json(self) -> dict[str, Any]:
        return {
            "cases": len(self.results),
            "turns": {
                "tp": self.turns.tp,
                "fp": self.turns.fp,
                "fn": self.turns.fn,
                "tn": self.turns.tn,
                "precision": _rounded(self.turns.precision),
                "recall": _rounded(self.turns.recall),
            },
            "kinds": {
                kind: {
                    "tp": c.tp,
                    "fp": c.fp,
                    "fn": c.fn,
                    "precision": _rounded(c.precision),
                    "recall": _rounded(c.recall),
                }
                for kind, c in sorted(self.kinds.items())
            },
            "results": [r.as_json() for r in self.results],
        }

    def table(self) -> str:
        lines = [f"{'kind':32} {'tp':>5} {'fp':>5} {'fn':>5} {'precision':>10} {'recall':>8}"]
        for kind, c in sorted(self.kinds.items()):
            lines.append(
                f"{kind:32} {c.tp:>5} {c.fp:>5} {c.fn:>5} "
                f"{_shown(c.precision):>10} {_shown(c.recall):>8}"
            )
        t = self.turns
        lines.append("")
        lines.append(
            f"turns: {len(self.results)} cases  tp={t.tp} fp={t.fp} fn={t.fn} tn={t.tn}  "
            f"precision={_shown(t.precision)} recall={_shown(t.recall)}"
        )
        failed = [r for r in self.results if not r.ok]
        if failed:
            lines.append(f"mismatches: {len(failed)}")
            for r in failed[:50]:
                lines.append(
                    f"  {r.case.id}: got {r.verdict} {list(r.kinds)}, expected "
                    f"{r.case.verdict} {sorted(r.case.kinds)}"
                )
        return "\n".join(lines)


def _rounded(ratio: float | None) -> float | None:
    return None if ratio is None else round(ratio, 4)


def _shown(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.3f}"


def parse_case(record: Mapping[str, Any], where: str) -> Case:
    """Validate one eval record's shape; raise TranscriptError naming `where`."""
    if not isinstance(record, Mapping):
        raise TranscriptError(f"{where}: a case must be a JSON object")
    transcript = record.get("transcript")
    otlp = record.get("otlp")
    if not isinstance(transcript, Mapping) and not isinstance(otlp, Mapping):
        raise TranscriptError(f"{where}: case has no 'transcript' object (nor an 'otlp' request)")
    expected = record.get("expected")
    if not isinstance(expected, Mapping):
        raise TranscriptError(f"{where}: case has no 'expected' object")
    verdict = expected.get("verdict")
    if verdict not in VERDICTS:
        raise TranscriptError(f"{where}: expected.verdict must be one of {', '.join(VERDICTS)}")
    return Case(
        id=str(record.get("id") or where),
        transcript=transcript if isinstance(transcript, Mapping) else None,
        otlp=otlp if isinstance(otlp, Mapping) and not isinstance(transcript, Mapping) else None,
        verdict=str(verdict),
        kinds=frozenset(map(str, expected.get("kinds") or ())),
        allow=frozenset(map(str, expected.get("allow") or ())),
        where=where,
    )


def read_cases(path: Path) -> Iterator[Case]:
    """Cases from a JSONL file; blank lines and `//` comment lines are skipped."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("//"):
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(stripped)
            except ValueError as exc:
                raise TranscriptError(f"{where}: invalid JSON: {exc}") from exc
            yield parse_case(record, where)


def evaluate_case(case: Case, runner: ValidationRunner) -> CaseResult:
    try:
        if case.transcript is not None:
            turn = turn_from_transcript(case.transcript, turn_id=case.id)
        else:
            turn = turn_from_otlp(case.otlp or {})
    except TranscriptError as exc:
        raise TranscriptError(f"{case.where or case.id} (case {case.id}): {exc}") from exc
    verdict: Verdict = runner.validate(turn)
    return CaseResult(case=case, verdict=verdict.outcome.value, kinds=verdict.kinds)


def turn_from_otlp(request: Mapping[str, Any]) -> Turn:
    """The last turn the service would assemble from an OTLP/JSON request."""
    try:
        decoded = otlp.decode_request(json.dumps(request).encode(), otlp.JSON)
    except otlp.OtlpError as exc:
        raise TranscriptError(f"otlp: {exc}") from exc
    assembler = TurnAssembler(lambda: 0.0)
    for span in decoded.spans:
        assembler.add(span)
    turns = sorted(assembler.flush_all(), key=lambda t: (t.ended_at_ns, t.started_at_ns))
    if not turns:
        raise TranscriptError("otlp: the spans hold no agent turn")
    return turns[-1].turn


def evaluate(
    cases: Iterable[Case],
    runner: ValidationRunner,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
) -> Report:
    report = Report()
    for case in cases:
        result = evaluate_case(case, runner)
        report.add(result)
        if on_result is not None:
            on_result(result)
    return report
