"""`turns` rows holding what recovery reads of a verdict (tenant, turn, version, trace,
time, span ids), the other columns at their empty values, for the pipeline's stores."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from factledger.collector import rows
from factledger.processors.spans import SpanRecord


def verdict_row(
    turn_id: str, version: int, validated: datetime, spans: Sequence[SpanRecord]
) -> list[object]:
    """A verdict of `spans` (the first names the trace and the tenant)."""
    validated_ms = rows.epoch_ms(validated)
    row: dict[str, object] = dict.fromkeys(rows.TURN_COLUMNS, "")
    row.update(
        Tenant=spans[0].tenant,
        TurnId=turn_id,
        Version=version,
        TraceId=spans[0].trace_id,
        StartedAt=validated_ms,
        EndedAt=validated_ms,
        AgentStartedAt=validated_ms,
        ClockSkewSeconds=0.0,
        ValidatedAt=validated_ms,
        Verdict="pass",
        Kinds=[],
        MaxScore=0.0,
        HasClass5=0,
        SpanIds=[s.span_id for s in spans],
        Validators=[],
        GuardChecks=0,
        GuardNudges=0,
        GuardResult="unguarded",
    )
    return [row[column] for column in rows.TURN_COLUMNS]
