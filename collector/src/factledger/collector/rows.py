"""Rows for the ClickHouse tables, shaped by pure functions (no driver, no clock, no I/O).

Every `*_row` function returns a list whose order is its table's `*_COLUMNS`; the store
transposes batches of them into columns. Times go in as aware datetimes (a naive one is
read as UTC) and are written as integer ticks, so the server's time zone never matters.

Attribute values are stored as strings, like the OTel Collector's ClickHouse exporter:
a string as is, a bool as "true"/"false", an int or float as its `repr`, bytes as
lower-case hex, a list or map as JSON (bytes inside it as hex). `AttributeTypes` notes
the original type of every non-string value (key "s:<key>" for span attributes,
"r:<key>" for resource attributes, "e<i>:<key>" for event i), so `span_from_row` gives
back the span that `span_row` was given (a tuple comes back as a list; bytes nested in a
list or map stay hex; a value of any other type was stored as `str(value)`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from factledger.processors.evidence.outcomes import call_succeeded
from factledger.processors.kinds import SUSPICION_CLASS, Severity
from factledger.processors.model import Finding, ToolCall, Turn, Verdict
from factledger.processors.normalize.json_text import loads
from factledger.processors.spans import SpanEvent, SpanRecord
from factledger.processors.verification.base import Verification
from factledger.processors.verification.subjects import CANDIDATE_KINDS, finding_subject

SPAN_COLUMNS: tuple[str, ...] = (
    "Timestamp",
    "Tenant",
    "TraceId",
    "SpanId",
    "ParentSpanId",
    "TraceState",
    "SpanName",
    "SpanKind",
    "ServiceName",
    "ResourceAttributes",
    "ScopeName",
    "ScopeVersion",
    "SpanAttributes",
    "Duration",
    "StatusCode",
    "StatusMessage",
    "Events.Timestamp",
    "Events.Name",
    "Events.Attributes",
    "AttributeTypes",
    "IngestedAt",
)
"""Columns of `spans`, in the order of `span_row`. `Timestamp` and `Events.Timestamp` hold
Unix nanoseconds, `IngestedAt` Unix milliseconds."""

TURN_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "TurnId",
    "Version",
    "TraceId",
    "ConversationId",
    "ServiceName",
    "AgentName",
    "Model",
    "Provider",
    "StartedAt",
    "EndedAt",
    "ValidatedAt",
    "Verdict",
    "Kinds",
    "MaxScore",
    "HasClass5",
    "UserMessage",
    "Reply",
    "ToolCalls",
    "SpanIds",
    "Validators",
    "ReplyPreview",
    "AgentStartedAt",
    "ClockSkewSeconds",
    "ParentTurnId",
    "GuardChecks",
    "GuardNudges",
    "GuardOutcome",
    "GuardAction",
    "GuardResult",
)

FINDING_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "TurnId",
    "Version",
    "Idx",
    "Kind",
    "Class",
    "Severity",
    "Message",
    "Token",
    "CheckedAgainst",
    "CheckedNote",
    "SpanStart",
    "SpanEnd",
    "Validator",
    "Score",
    "CallId",
    "Model",
    "AgentName",
    "StartedAt",
    "Real.Token",
    "Real.Tool",
    "Real.CallId",
)

VERIFICATION_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "TurnId",
    "Version",
    "Idx",
    "SubjectKind",
    "Name",
    "ClaimedAbsent",
    "SpanStart",
    "SpanEnd",
    "FindingIdx",
    "FindingKind",
    "Outcome",
    "Source",
    "Query",
    "Answer",
    "Reason",
    "CheckedAt",
    "DurationMs",
    "StartedAt",
)

REVIEW_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "TurnId",
    "ReviewId",
    "Label",
    "Note",
    "Reviewer",
    "CreatedAt",
)

REVIEW_WITHDRAWAL_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "TurnId",
    "ReviewId",
    "Reviewer",
    "WithdrawnAt",
    "TokenId",
)

ALERT_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "AlertId",
    "Rule",
    "GroupKey",
    "State",
    "Value",
    "Threshold",
    "Turns",
    "FiredAt",
    "ResolvedAt",
    "Message",
)

ALERT_DELIVERY_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "AlertId",
    "Target",
    "Attempt",
    "Ok",
    "StatusCode",
    "Error",
    "At",
)

ReviewLabel = Literal["hallucination", "not_hallucination"]
REVIEW_LABELS: frozenset[str] = frozenset({"hallucination", "not_hallucination"})
AlertState = Literal["firing", "resolved"]
ALERT_STATES: frozenset[str] = frozenset({"firing", "resolved"})

REPLY_PREVIEW_CHARS = 200
MAX_FINDINGS_PER_VERSION = 65_535
"""Idx is a UInt16; a verdict never comes near this (validators cap their findings)."""

# OTLP enum numbers to the proto names the OTel Collector's ClickHouse exporter writes.
SPAN_KIND_NAMES: tuple[str, ...] = (
    "SPAN_KIND_UNSPECIFIED",
    "SPAN_KIND_INTERNAL",
    "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_PRODUCER",
    "SPAN_KIND_CONSUMER",
)
STATUS_CODE_NAMES: tuple[str, ...] = ("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")

AttributeType = Literal["str", "bool", "int", "float", "bytes", "json"]


# --- times ------------------------------------------------------------------------------


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


def epoch_ms(moment: datetime) -> int:
    """Unix milliseconds of `moment`, rounded down (naive datetimes are read as UTC).

    Integer arithmetic: `timestamp() * 1000` is a float and can land a millisecond short."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MILLISECOND


def from_epoch_ms(ms: int) -> datetime:
    """The aware UTC datetime of Unix milliseconds."""
    return _EPOCH + timedelta(milliseconds=ms)


# --- attributes -------------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def attribute_string(value: Any) -> tuple[str, AttributeType]:
    """The stored string of one attribute value and the type it came from."""
    if isinstance(value, str):
        return value, "str"
    if isinstance(value, bool):  # before int: bool is an int
        return ("true" if value else "false"), "bool"
    if isinstance(value, int):
        return repr(value), "int"
    if isinstance(value, float):
        return repr(value), "float"
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex(), "bytes"
    if isinstance(value, Mapping | list | tuple):
        return _json(value), "json"
    return str(value), "str"


def attribute_value(text: str, kind: str) -> Any:
    """The inverse of `attribute_string` for the types it records (unknown types stay text)."""
    if kind == "bool":
        return text == "true"
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "bytes":
        return bytes.fromhex(text)
    if kind == "json":
        return loads(text)
    return text


def _encode_attributes(
    attributes: Mapping[str, Any], prefix: str, types: dict[str, str]
) -> dict[str, str]:
    encoded: dict[str, str] = {}
    for key, value in attributes.items():
        name = key if type(key) is str else str(key)
        # Most values are text: stored as they are, with no type to record (this loop
        # runs for every attribute of every span before it is acknowledged).
        if type(value) is str:
            encoded[name] = value
            continue
        text, kind = attribute_string(value)
        encoded[name] = text
        if kind != "str":
            types[f"{prefix}:{key}"] = kind
    return encoded


def _decode_attributes(
    stored: Mapping[str, str], prefix: str, types: Mapping[str, str]
) -> dict[str, Any]:
    return {
        key: attribute_value(text, types.get(f"{prefix}:{key}", "str"))
        for key, text in stored.items()
    }


# --- spans ------------------------------------------------------------------------------


def _enum_name(names: tuple[str, ...], number: int) -> str:
    return names[number] if 0 <= number < len(names) else str(number)


def _enum_number(names: tuple[str, ...], name: str) -> int:
    if name in names:
        return names.index(name)
    return int(name) if name.lstrip("-").isdigit() else 0


def span_row(span: SpanRecord, ingested_at_ms: int) -> list[Any]:
    """The `spans` row of one span, in SPAN_COLUMNS order."""
    types: dict[str, str] = {}
    span_attributes = _encode_attributes(span.attributes, "s", types)
    resource_attributes = _encode_attributes(span.resource_attributes, "r", types)
    event_attributes = [
        _encode_attributes(event.attributes, f"e{i}", types) for i, event in enumerate(span.events)
    ]
    start = span.start_time_unix_nano
    return [
        start,
        span.tenant,
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        "",
        span.name,
        _enum_name(SPAN_KIND_NAMES, span.kind),
        span.service_name,
        resource_attributes,
        span.scope_name,
        span.scope_version,
        span_attributes,
        max(0, span.end_time_unix_nano - start),
        _enum_name(STATUS_CODE_NAMES, span.status_code),
        span.status_message,
        [event.time_unix_nano for event in span.events],
        [event.name for event in span.events],
        event_attributes,
        types,
        ingested_at_ms,
    ]


def span_from_row(row: Mapping[str, Any]) -> SpanRecord:
    """The span of a `spans` row keyed by SPAN_COLUMNS (times as Unix ns, as `span_row`
    writes them). The inverse of `span_row`, except that a span whose end preceded its
    start comes back with end == start (Duration is unsigned); `IngestedAt`, when the row
    has it, is the span's `received_at_unix_nano`."""
    types: Mapping[str, str] = row["AttributeTypes"]
    start = int(row["Timestamp"])
    events = tuple(
        SpanEvent(
            name=name,
            time_unix_nano=int(time),
            attributes=_decode_attributes(attributes, f"e{i}", types),
        )
        for i, (time, name, attributes) in enumerate(
            zip(
                row["Events.Timestamp"],
                row["Events.Name"],
                row["Events.Attributes"],
                strict=True,
            )
        )
    )
    return SpanRecord(
        trace_id=row["TraceId"],
        span_id=row["SpanId"],
        name=row["SpanName"],
        parent_span_id=row["ParentSpanId"],
        kind=_enum_number(SPAN_KIND_NAMES, row["SpanKind"]),
        start_time_unix_nano=start,
        end_time_unix_nano=start + int(row["Duration"]),
        status_code=_enum_number(STATUS_CODE_NAMES, row["StatusCode"]),
        status_message=row["StatusMessage"],
        attributes=_decode_attributes(row["SpanAttributes"], "s", types),
        events=events,
        resource_attributes=_decode_attributes(row["ResourceAttributes"], "r", types),
        scope_name=row["ScopeName"],
        scope_version=row["ScopeVersion"],
        tenant=row["Tenant"],
        received_at_unix_nano=int(row.get("IngestedAt") or 0) * 1_000_000,
    )


# --- turns and findings -----------------------------------------------------------------


def tool_call_json(call: ToolCall) -> dict[str, Any]:
    """One entry of a turn's ToolCalls column. `ok` is the system's record of success
    (`processors.evidence.outcomes.call_succeeded`); `origin` "prose" marks a call that
    never ran."""
    return {
        "name": call.name,
        "call_id": call.call_id,
        "arguments": dict(call.arguments) if call.arguments else call.arguments_text,
        "result": call.result,
        "ok": call_succeeded(call),
        "span_id": call.span_id,
        "origin": call.origin,
    }


def _is_class5(finding: Finding) -> bool:
    return finding.hallucination_class == SUSPICION_CLASS


def turn_row(
    turn: Turn,
    verdict: Verdict,
    *,
    version: int,
    started_at: datetime,
    ended_at: datetime,
    validated_at: datetime,
    span_ids: Sequence[str],
    agent_started_at: datetime | None = None,
    clock_skew_seconds: float = 0.0,
    parent_turn_id: str = "",
) -> list[Any]:
    """The `turns` row of one verdict version of a turn, in TURN_COLUMNS order.
    `parent_turn_id` names the turn it is nested in ("" for a turn of its own).

    Tenant, ids, service, agent, model and provider come from the turn. `MaxScore` is the
    highest class-5 score (0 when none), `HasClass5` whether any class-5 finding exists.
    `started_at` is when the turn counts; `agent_started_at` its start by the agent's own
    clock (default: `started_at`), apart from it only for a skewed clock, whose skew is
    `clock_skew_seconds` (`collector.judge.clock_skew`). The Guard* columns are what the
    in-loop guard did (`turn.guard`, `processors.guard_activity`).
    """
    guard = turn.guard
    class5 = [f for f in verdict.findings if _is_class5(f)]
    scores = [f.score for f in class5 if f.score is not None]
    tool_calls = _json([tool_call_json(c) for c in turn.tool_calls])
    return [
        turn.tenant,
        turn.turn_id,
        version,
        turn.trace_id,
        turn.conversation_id,
        turn.service,
        turn.agent,
        turn.model,
        turn.provider,
        epoch_ms(started_at),
        epoch_ms(ended_at),
        epoch_ms(validated_at),
        verdict.outcome.value,
        list(verdict.kinds),
        max(scores, default=0.0),
        1 if class5 else 0,
        turn.user_message,
        turn.reply,
        tool_calls,
        list(span_ids),
        list(verdict.validators),
        turn.reply[:REPLY_PREVIEW_CHARS],
        epoch_ms(agent_started_at or started_at),
        clock_skew_seconds,
        parent_turn_id,
        guard.checks,
        guard.nudges,
        guard.outcome,
        guard.action,
        guard.result,
    ]


_VERSION_AT = TURN_COLUMNS.index("Version")
_ENDED_AT = TURN_COLUMNS.index("EndedAt")


def first_verdict_delays(turn_rows: Sequence[Sequence[Any]], now_ms: int) -> list[float]:
    """Seconds from each turn's end to `now_ms`, for the rows holding a turn's first
    verdict; a later version is left out (its wait began with a late span, not the end).
    A turn that ends after `now_ms` (a client clock ahead) counts as no delay."""
    return [
        max(0, now_ms - int(row[_ENDED_AT])) / 1000
        for row in turn_rows
        if int(row[_VERSION_AT]) == 1
    ]


def finding_rows(
    turn: Turn, verdict: Verdict, *, version: int, started_at: datetime
) -> list[list[Any]]:
    """The `findings` rows of one verdict version, in FINDING_COLUMNS order (Idx = position
    in the verdict; -1 marks a missing span or score)."""
    started_ms = epoch_ms(started_at)
    rows: list[list[Any]] = []
    for idx, finding in enumerate(verdict.findings[:MAX_FINDINGS_PER_VERSION]):
        severity: Severity = finding.effective_severity
        rows.append(
            [
                turn.tenant,
                turn.turn_id,
                version,
                idx,
                finding.kind.value,
                finding.hallucination_class,
                severity.value,
                finding.message,
                finding.token,
                list(finding.checked_against),
                finding.checked_note or "",
                finding.span.start if finding.span else -1,
                finding.span.end if finding.span else -1,
                finding.validator,
                -1.0 if finding.score is None else finding.score,
                finding.call_id or "",
                turn.model,
                turn.agent,
                started_ms,
                [r.token for r in finding.real],
                [r.tool for r in finding.real],
                [r.call_id for r in finding.real],
            ]
        )
    return rows


def verification_rows(
    turn: Turn,
    verdict: Verdict,
    verifications: Sequence[Verification],
    *,
    version: int,
    started_at: datetime,
) -> list[list[Any]]:
    """The `verifications` rows of one verdict version, in VERIFICATION_COLUMNS order: each
    answer tied to the finding of `verdict` it is about (FindingIdx -1: none)."""
    if not verifications:
        return []  # most versions: nothing was verified
    started_ms = epoch_ms(started_at)
    by_subject = {
        subject.key: idx
        for idx, finding in enumerate(verdict.findings)
        if (subject := finding_subject(finding, idx)) is not None
    }
    by_token = {(f.token, f.kind.value): idx for idx, f in enumerate(verdict.findings)}
    out: list[list[Any]] = []
    for idx, answer in enumerate(verifications[:MAX_FINDINGS_PER_VERSION]):
        subject = answer.subject
        finding_idx = by_subject.get(subject.key)
        if finding_idx is None:  # a confirmed candidate: the finding verification made
            made = CANDIDATE_KINDS[subject.claimed_absent].value
            finding_idx = by_token.get((subject.name, made), -1)
        kind = verdict.findings[finding_idx].kind if finding_idx >= 0 else subject.finding_kind
        finding_kind = kind.value if kind is not None else ""
        out.append(
            [
                turn.tenant,
                turn.turn_id,
                version,
                idx,
                subject.kind.value,
                subject.name,
                subject.claimed_absent,
                subject.span.start if subject.span else -1,
                subject.span.end if subject.span else -1,
                finding_idx,
                finding_kind,
                answer.outcome.value,
                answer.source,
                answer.query,
                answer.answer,
                answer.reason,
                int(answer.checked_at * 1000),
                answer.duration_ms,
                started_ms,
            ]
        )
    return out


# --- reviews and alerts -----------------------------------------------------------------


def review_row(
    *,
    tenant: str,
    turn_id: str,
    review_id: str,
    label: ReviewLabel,
    note: str,
    reviewer: str,
    created_at: datetime,
) -> list[Any]:
    """The `reviews` row of one human review, in REVIEW_COLUMNS order.

    Raises ValueError for a label outside REVIEW_LABELS.
    """
    if label not in REVIEW_LABELS:
        raise ValueError(f"review label must be one of {sorted(REVIEW_LABELS)}, not {label!r}")
    return [tenant, turn_id, review_id, label, note, reviewer, epoch_ms(created_at)]


def review_withdrawal_row(
    *,
    tenant: str,
    turn_id: str,
    review_id: str,
    reviewer: str,
    withdrawn_at: datetime,
    token_id: str = "",
) -> list[Any]:
    """The `review_withdrawals` row that takes back one review, in
    REVIEW_WITHDRAWAL_COLUMNS order; `token_id` is the fingerprint of the review token
    that withdrew it ('' on an open API)."""
    return [tenant, turn_id, review_id, reviewer, epoch_ms(withdrawn_at), token_id]


def alert_row(
    *,
    tenant: str,
    alert_id: str,
    rule: str,
    group_key: str,
    state: AlertState,
    value: float,
    threshold: float,
    turns: int,
    fired_at: datetime,
    resolved_at: datetime | None,
    message: str,
) -> list[Any]:
    """The `alerts` row of one alert state change, in ALERT_COLUMNS order.

    Raises ValueError for a state outside ALERT_STATES.
    """
    if state not in ALERT_STATES:
        raise ValueError(f"alert state must be one of {sorted(ALERT_STATES)}, not {state!r}")
    return [
        tenant,
        alert_id,
        rule,
        group_key,
        state,
        float(value),
        float(threshold),
        turns,
        epoch_ms(fired_at),
        None if resolved_at is None else epoch_ms(resolved_at),
        message,
    ]


def alert_delivery_row(
    *,
    tenant: str,
    alert_id: str,
    target: str,
    attempt: int,
    ok: bool,
    status_code: int,
    error: str,
    at: datetime,
) -> list[Any]:
    """The `alert_deliveries` row of one delivery attempt (status_code 0 when no answer)."""
    return [tenant, alert_id, target, attempt, 1 if ok else 0, status_code, error, epoch_ms(at)]
