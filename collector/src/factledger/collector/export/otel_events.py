"""Verdict records as OTel GenAI `gen_ai.evaluation.result` events: pure shaping.

Per verdict version, one event for the turn's verdict (`gen_ai.evaluation.name` =
`factledger.verdict`) and one per finding kind (`factledger.<kind>`), each parented to
the reply's span through the log record's trace and span ids, and carrying
`gen_ai.response.id` when the agent recorded one (the convention's fallback when the span
is not known). Scores, higher is better:

| label  | `gen_ai.evaluation.score.value` |
|--------|---------------------------------|
| pass   | 1.0                             |
| flag   | 0.5 (a person should look)      |
| reject | 0.0                             |

A later verdict version of the same turn is another set of events with a higher
`factledger.verdict_version`: a consumer keeps the highest per `factledger.turn_id` (and
of one version the latest: a human label is sent under the version it judges).
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context
from opentelemetry.util.types import AnyValue

from factledger.collector.export.base import ExportedFinding, Verdict, VerdictRecord

EVENT_NAME = "gen_ai.evaluation.result"
VERDICT_EVALUATION = "factledger.verdict"
SCORES: dict[Verdict, float] = {"pass": 1.0, "flag": 0.5, "reject": 0.0}
MAX_EXPLANATION_CHARS = 4096
"""A kind with many findings joins their messages: bounded, as every text we send."""

_WORST: dict[Verdict, int] = {"pass": 0, "flag": 1, "reject": 2}


def evaluation_events(record: VerdictRecord) -> list[LogRecord]:
    """The verdict event, then one event per finding kind in the order kinds first
    appear among the findings."""
    by_kind: dict[str, list[ExportedFinding]] = {}
    for finding in record.findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    kinds = ", ".join(by_kind) or "none"
    events = [
        _event(
            record,
            VERDICT_EVALUATION,
            record.verdict,
            f"{record.verdict}: {len(record.findings)} findings ({kinds})",
            {},
        )
    ]
    for kind, findings in by_kind.items():
        label = _worst(f.verdict for f in findings)
        explanation = "\n".join(f.message for f in findings)
        extra: dict[str, AnyValue] = {
            "factledger.kind": kind,
            "factledger.token": findings[0].token,
            "factledger.tokens": [f.token for f in findings],
            "factledger.class": max(f.validator_class for f in findings),
        }
        events.append(_event(record, f"factledger.{kind}", label, explanation, extra))
    return events


def _worst(verdicts: Iterable[Verdict]) -> Verdict:
    worst: Verdict = "pass"
    for verdict in verdicts:
        if _WORST[verdict] > _WORST[worst]:
            worst = verdict
    return worst


def _event(
    record: VerdictRecord,
    evaluation: str,
    label: Verdict,
    explanation: str,
    extra: dict[str, AnyValue],
) -> LogRecord:
    attributes: dict[str, AnyValue] = {
        "gen_ai.evaluation.name": evaluation,
        "gen_ai.evaluation.score.label": label,
        "gen_ai.evaluation.score.value": SCORES[label],
        "gen_ai.evaluation.explanation": explanation[:MAX_EXPLANATION_CHARS],
        "factledger.turn_id": record.turn_id,
        "factledger.verdict_version": record.version,
        "factledger.cause": record.cause,
        "factledger.turn_url": record.turn_url,
        **extra,
    }
    if record.response_id:
        attributes["gen_ai.response.id"] = record.response_id
    for key, value in (
        ("gen_ai.agent.name", record.agent_name),
        ("gen_ai.request.model", record.model),
    ):
        if value:
            attributes[key] = value
    timestamp = record.judged_at_ms * 1_000_000
    return LogRecord(
        timestamp=timestamp,
        observed_timestamp=timestamp,
        context=reply_context(record.trace_id, record.span_id),
        severity_number=SeverityNumber.WARN if label == "reject" else SeverityNumber.INFO,
        severity_text="WARN" if label == "reject" else "INFO",
        event_name=EVENT_NAME,
        attributes=attributes,
    )


def reply_context(trace_id: str, span_id: str) -> Context | None:
    """A context whose current span is the reply's, so the SDK sets the log record's
    trace and span ids from it; None when either id is missing or malformed (the event
    then goes unparented, with `gen_ai.response.id` where known)."""
    trace = _hex(trace_id, 32)
    span = _hex(span_id, 16)
    if trace is None or span is None:
        return None
    parent = SpanContext(trace, span, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return set_span_in_context(NonRecordingSpan(parent))


def _hex(text: str, digits: int) -> int | None:
    if len(text) != digits:
        return None
    try:
        value = int(text, 16)
    except ValueError:
        return None
    return value or None
