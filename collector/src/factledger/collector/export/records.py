"""Verdict records from stored rows: what the verdict writer hands the outbox.

A record is shaped from the `turns` row and the `findings` rows of one verdict version,
exactly as they are stored, so every text in it is the redacted one (`collector.redaction`
runs before the rows are shaped); nothing here reads a span. What the rows do not hold,
the span that produced the reply and its response id, comes beside them as a `ReplyRef`
made by the judge from the assembled turn. Pure functions: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from factledger.collector.export.base import ExportedFinding, Verdict, VerdictRecord, VersionCause
from factledger.collector.rows import FINDING_COLUMNS, TURN_COLUMNS

DEFAULT_DASHBOARD_URL = "http://127.0.0.1:8501"
"""Where the turn links of exported records point when `[export]` names no dashboard."""

_T = {name: idx for idx, name in enumerate(TURN_COLUMNS)}
_F = {name: idx for idx, name in enumerate(FINDING_COLUMNS)}

_VERDICTS: dict[str, Verdict] = {"reject": "reject", "flag": "flag", "pass": "pass"}
_FINDING_VERDICTS: dict[str, Verdict] = {"reject": "reject", "flag": "flag", "info": "pass"}


@dataclass(frozen=True)
class ReplyRef:
    """What the judge knows of one verdict version beyond its rows: the reply's span
    (16 hex digits, "" when unknown), its `gen_ai.response.id` ("" when none) and why
    the version exists."""

    tenant: str
    turn_id: str
    version: int
    span_id: str
    response_id: str
    cause: VersionCause


def version_cause(version: int, *, settled: bool) -> VersionCause:
    """A verification's settlement is `verified`; otherwise the first version is `judged`
    and any later one was made by a span that arrived after it (`late_span`)."""
    if settled:
        return "verified"
    return "judged" if version == 1 else "late_span"


def turn_url(dashboard_url: str, turn_id: str) -> str:
    """The dashboard's page of one turn (its Turns page with `?turn_id=`)."""
    return f"{dashboard_url.rstrip('/')}/turns?turn_id={quote(turn_id, safe='')}"


def validator_class(stored: str) -> int:
    """The hallucination class as a number: its leading digits (`4b` is 4); classes
    without a number (`mirror`, `citation`, `stall`, `-`) are 0."""
    digits = ""
    for char in stored:
        if not char.isdigit():
            break
        digits += char
    return int(digits) if digits else 0


def verdict_records(
    turn_rows: Sequence[Sequence[Any]],
    finding_rows: Iterable[Sequence[Any]],
    replies: Iterable[ReplyRef],
    dashboard_url: str,
) -> list[VerdictRecord]:
    """One record per `turns` row, with the findings rows of the same version, in the
    order of `turn_rows`. A row without a `ReplyRef` still makes a record, with no span
    id (a target then sends it unparented) and its cause read from its version."""
    refs = {(r.tenant, r.turn_id, r.version): r for r in replies}
    findings: dict[tuple[str, str, int], list[ExportedFinding]] = {}
    for row in finding_rows:
        key = (str(row[_F["Tenant"]]), str(row[_F["TurnId"]]), int(row[_F["Version"]]))
        findings.setdefault(key, []).append(exported_finding(row))
    records = []
    for row in turn_rows:
        key = (str(row[_T["Tenant"]]), str(row[_T["TurnId"]]), int(row[_T["Version"]]))
        ref = refs.get(key)
        records.append(
            VerdictRecord(
                tenant=key[0],
                turn_id=key[1],
                version=key[2],
                cause=ref.cause if ref else version_cause(key[2], settled=False),
                verdict=_VERDICTS.get(str(row[_T["Verdict"]]), "pass"),
                trace_id=str(row[_T["TraceId"]]),
                span_id=ref.span_id if ref else "",
                response_id=(ref.response_id or None) if ref else None,
                service_name=str(row[_T["ServiceName"]]),
                agent_name=str(row[_T["AgentName"]]),
                model=str(row[_T["Model"]]),
                findings=tuple(findings.get(key, ())),
                turn_url=turn_url(dashboard_url, key[1]),
                judged_at_ms=int(row[_T["ValidatedAt"]]),
            )
        )
    return records


def exported_finding(row: Sequence[Any]) -> ExportedFinding:
    """A `findings` row as a target shows it; an `info` finding counts as a pass."""
    return ExportedFinding(
        kind=str(row[_F["Kind"]]),
        verdict=_FINDING_VERDICTS.get(str(row[_F["Severity"]]), "pass"),
        token=str(row[_F["Token"]]),
        message=str(row[_F["Message"]]),
        validator_class=validator_class(str(row[_F["Class"]])),
    )
