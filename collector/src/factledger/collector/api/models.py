"""The query API's answers as models: what /openapi.json shows is what the API sends.

Every handler returns one of these, and every status a route can answer is declared with
its body (`responses`). Models forbid keys they do not list, so a store dict that grows a
key fails loudly (a 500 in tests) instead of reaching clients undocumented. The alert
models are the exception: the alert engine composes those entries, so they may carry
keys beyond the ones listed (`additionalProperties` is true in their schema).

Error bodies::

    ErrorBody            {"detail": "<message>"}: 401, 403, 404, 500, 503
    HTTPValidationError  {"detail": [{"loc", "msg", "type", ...}]}: every 422, also the
                         ones a handler raises (`query_error`), FastAPI's own schema
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from factledger.collector.alerts.rules import Counted, GroupBy, WebhookFormat
from factledger.processors.kinds import (
    HallucinationClass,
    Kind,
    Outcome,
    Severity,
    describe_classes,
)
from factledger.processors.model import CallOrigin

API_VERSION = "0.2.0"
"""The OpenAPI document's info.version; docs/api.md lists the changes."""

ReviewLabel = Literal["hallucination", "not_hallucination"]
RfcTime = Annotated[
    str,
    Field(
        json_schema_extra={"format": "date-time"},
        examples=["2025-01-31T12:00:00.123456789Z"],
    ),
]


class ApiModel(BaseModel):
    """An answer's object: exactly the keys listed."""

    model_config = ConfigDict(extra="forbid")


class OpenModel(BaseModel):
    """An object of the alert engine: the keys listed, and possibly more."""

    model_config = ConfigDict(extra="allow")


# --- errors -------------------------------------------------------------------------------


class ErrorBody(ApiModel):
    """Every error but a 422: a fixed, readable message (never a driver's text)."""

    detail: str


ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "the request body does not decode",
    401: "read tokens are configured and the bearer token is missing or unknown",
    403: "the token does not cover the tenant asked for (or, for /metrics, every tenant)",
    404: "no such turn for this tenant",
    500: "the store refused the query (see the service log)",
    503: "the store is unavailable; retry after `Retry-After` seconds",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses` entry declaring `statuses` with an ErrorBody each."""
    return {
        status: {"model": ErrorBody, "description": ERROR_DESCRIPTIONS[status]}
        for status in statuses
    }


def error_refs(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Like `error_responses`, for a route whose own media type is not JSON (/metrics):
    FastAPI would file a model's schema under the route's media type."""
    schema = {"$ref": "#/components/schemas/ErrorBody"}
    return {
        status: {
            "description": ERROR_DESCRIPTIONS[status],
            "content": {"application/json": {"schema": schema}},
        }
        for status in statuses
    }


def query_error(field: str, message: str, value: object, *, where: str = "query") -> Exception:
    """A 422 in FastAPI's own validation-error shape, for a parameter that is well formed
    but cannot be answered (until before since, too many buckets)."""
    return RequestValidationError(
        [{"type": "value_error", "loc": (where, field), "msg": message, "input": value}]
    )


# --- turns --------------------------------------------------------------------------------


class TurnSummary(ApiModel):
    """A turn as listed: ids, who answered, when, and its latest verdict."""

    turn_id: str
    trace_id: str
    conversation_id: str
    service: str
    agent: str
    model: str
    started_at: datetime
    ended_at: datetime
    verdict: Outcome
    kinds: list[Kind] = Field(description="distinct finding kinds of the latest verdict")
    reply_preview: str
    version: int = Field(description="verdict version (1, then 2, ... when judged again)")
    clock_skew_seconds: float | None = Field(
        default=None,
        description="the agent's clock minus the service's (positive when ahead), for a"
        " turn whose own times were hours off: it counts at the time it was received"
        " (started_at), its own start is agent_started_at; null when its own times hold",
    )


class ListedTurn(TurnSummary):
    why: str = Field(
        description="the message of the finding that decides the verdict (the first of the"
        " highest severity); empty when the turn has no finding"
    )
    flagged_preview: str = Field(
        description="up to 200 characters of the reply starting at most 40 before its first"
        " flagged token (the earliest reject or flag with offsets), led by … when cut at the"
        " front; the reply_preview when no finding locates a token"
    )


class TurnPage(ApiModel):
    turns: list[ListedTurn]
    total: int = Field(description="every turn matching the filters, not just this page")


class VerificationTally(ApiModel):
    """How many answers of the sources of truth came out each way."""

    confirmed: int = Field(description="hallucinations proven at the source")
    refuted: int = Field(description="findings withdrawn: the source agrees with the reply")
    unverifiable: int = Field(description="no source could settle it")


class QueueVerification(VerificationTally):
    """What verification answered of a queued turn's latest version (all zeros: nothing
    was asked)."""

    reasons: list[str] = Field(
        description="why the unverifiable answers are (`no source`, `timeout`, ...), distinct"
    )


class QueueItem(TurnSummary):
    max_score: float | None = Field(
        description="highest class-5 suspicion score (0..1); null without a class-5 finding"
    )
    has_class5: bool
    verification: QueueVerification


class ReviewQueue(ApiModel):
    turns: list[QueueItem]
    total: int = Field(description="every flagged turn awaiting a review, not just this page")


class ToolCall(ApiModel):
    name: str
    call_id: str
    arguments: JsonValue = Field(
        description="the arguments object; their text when they were not a JSON object"
    )
    result: JsonValue = Field(
        description="the object or array the tool returned as JSON, else its text; null "
        "when no result was recorded"
    )
    ok: bool = Field(description="the call succeeded, as the validators judged it")
    span_id: str | None
    origin: CallOrigin = Field(
        description="structured: a real call; prose: only written out as text (never ran); "
        "framework: written into the history by the framework"
    )


class ResultToken(ApiModel):
    """A token as a tool result of the turn shows it, and the call that returned it."""

    token: str
    tool: str = Field(description="the name of the tool whose result holds it")
    call_id: str | None = Field(description="that call's id; null when it recorded none")


class Backing(ApiModel):
    """An identifier of the reply that a tool result backs, and the call that backs it."""

    token: str
    start: int = Field(description="offset of its first character in the reply")
    end: int = Field(description="offset after its last character in the reply")
    tool: str = Field(description="the name of the tool whose result holds it")
    call_id: str | None = Field(description="that call's id; null when it recorded none")


class Finding(ApiModel):
    """Something in the reply that the turn's tool trace does not back."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Kind
    finding_class: HallucinationClass | None = Field(
        alias="class",
        description=f"hallucination class of the kind: {describe_classes()}; "
        "null for validator_error",
    )
    severity: Severity
    message: str
    token: str = Field(description="the offending text (identifier, sentence, tool name)")
    checked_against: list[str] = Field(
        description="names of the tools whose calls, results or schemas the token was "
        "compared with; empty when none was (then `checked_note` says why)"
    )
    checked_note: str | None = Field(
        description="what else the token was compared with, or why no tool: e.g. "
        "`no tool results`, `no tools offered`, `the turn's plan text`; null when "
        "`checked_against` says it all"
    )
    span: tuple[int, int] | None = Field(
        description="[start, end) character offsets in the reply; null when not located"
    )
    validator: str = Field(description="name@version of the validator")
    score: float | None = Field(description="class-5 suspicion score (0..1), else null")
    call_id: str | None = Field(description="the tool call the finding is about, if one")
    real: list[ResultToken] = Field(
        default_factory=list,
        description="what the tools did return that the token was compared with: a "
        "fabricated identifier's nearest real one of its shape, or the names of a class-5 "
        "set that a tool result shows; empty when there is none (and for findings stored "
        "before schema 017)",
    )


class Verification(ApiModel):
    """What a source of truth answered about a name the reply uses (docs/verification.md)."""

    subject_kind: Literal["commit", "ref", "path", "symbol", "url", "record"]
    name: str = Field(description="the name as the source was asked about it")
    claimed_absent: bool = Field(
        description="the reply says it does not exist (then existing confirms the finding)"
    )
    span: tuple[int, int] | None = Field(description="[start, end) in the reply, if located")
    finding: int | None = Field(
        description="index in `findings` of the finding this answer settled or confirmed;"
        " null when the finding was withdrawn (refuted) or no finding names it"
    )
    finding_kind: Kind | None = Field(
        description="kind of the finding the name came from; null for a name no finding"
        " named before verification (a short SHA, a name said not to exist)"
    )
    outcome: Literal["confirmed", "refuted", "unverifiable"] = Field(
        description="confirmed: the hallucination is proven at the source; refuted: the"
        " source agrees with the reply (the finding is withdrawn); unverifiable: no source"
        " could settle it (see `reason`)"
    )
    source: str = Field(description="where it was asked: trace:<tool> (<call>), git:<repo>, ...")
    query: str = Field(description="the exact question put to the source")
    answer: str = Field(description="what the source answered (bounded, redacted)")
    reason: str | None = Field(description="why an unverifiable answer is one")
    checked_at: datetime | None
    duration_ms: float


class SpanEvent(ApiModel):
    name: str
    time: RfcTime
    attributes: dict[str, str]


class Span(ApiModel):
    """A stored span. Times are RFC 3339 strings to the nanosecond: Unix nanoseconds are
    past what a JavaScript number holds exactly."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    service: str
    start_time: RfcTime
    end_time: RfcTime
    duration_ms: float
    status_code: str
    status_message: str
    attributes: dict[str, str] = Field(description="values as stored text")
    resource_attributes: dict[str, str]
    scope_name: str
    scope_version: str
    events: list[SpanEvent]


class Review(ApiModel):
    review_id: str
    label: ReviewLabel
    note: str
    reviewer: str
    created_at: datetime


class VerdictVersion(ApiModel):
    version: int
    verdict: Outcome
    kinds: list[Kind]
    validated_at: datetime


class SnapshotRef(ApiModel):
    """A document one of the turn's reads retrieved (seed 003's evidence snapshot)."""

    hash: str = Field(description="SHA-256 (hex) of the result text as the tool returned it")
    url_or_path: str = Field(description="what the call was asked to read; empty if unnamed")
    tool: str
    call_id: str
    fetched_at: datetime = Field(description="when it was read (the turn's start)")
    size: int = Field(description="length of the raw result text in UTF-8 bytes")


class Citation(ApiModel):
    """A source the reply cites and the snapshot backing it."""

    cited: str
    start: int = Field(description="offset of the citation in the stored reply")
    end: int
    snapshot: str | None = Field(
        description="hash of the turn's snapshot read from the cited address; null: none"
    )


class Snapshot(SnapshotRef):
    """One snapshot with its content, redacted as the store keeps it."""

    turn_id: str = Field(description="the turn whose read stored it first")
    trace_id: str
    content: str


class NestedTurn(ApiModel):
    """A sub-agent's turn inside another turn, as its parent lists it."""

    turn_id: str
    agent: str
    verdict: Outcome
    kinds: list[Kind]


GuardResult = Literal["unguarded", "passed", "footnoted", "corrected", "refused"]


class TurnGuard(ApiModel):
    """What the in-loop guard (factledger.guards) did in one turn, read from its spans."""

    checks: int = Field(default=0, description="attempts of the reply the guard checked")
    nudges: int = Field(default=0, description="self-correction nudges it sent the model")
    outcome: str = Field(
        default="", description="its check of the last attempt: pass, flag, reject; empty"
    )
    action: str = Field(
        default="", description="what it did with it: pass, nudge, annotate, raise; empty"
    )
    result: GuardResult = Field(
        default="unguarded",
        description="what the turn came to: passed (checked, never nudged, clean), footnoted"
        " (annotated, never nudged), corrected (nudged, the last attempt passed or was only"
        " flagged), refused (nudged and still rejected, or raised), unguarded",
    )


class TurnDetail(TurnSummary):
    """One turn: request, reply, tool calls, findings, spans, reviews, verdict history."""

    agent_started_at: datetime = Field(
        description="the turn's start by the agent's own clock; started_at unless the clock"
        " was skewed (clock_skew_seconds)"
    )
    provider: str
    validated_at: datetime
    user_message: str
    reply: str
    tool_calls: list[ToolCall]
    span_ids: list[str]
    validators: list[str] = Field(description="name@version of every validator that ran")
    max_score: float | None = Field(
        description="highest class-5 suspicion score (0..1); null without a class-5 finding"
    )
    has_class5: bool
    findings: list[Finding]
    verifications: list[Verification] = Field(
        description="the sources of truth's answers the latest verdict applies"
    )
    spans: list[Span]
    reviews: list[Review]
    versions: list[VerdictVersion] = Field(description="every verdict, oldest first")
    snapshots: list[SnapshotRef] = Field(
        description="documents the latest version's reads retrieved, once per content"
    )
    citations: list[Citation] = Field(description="cited sources of the reply, in order")
    backings: list[Backing] = Field(
        default_factory=list,
        description="identifiers of the reply that a tool result backs, in reply order, "
        "each with the first call whose result holds it (the latest version's)",
    )
    parent_turn_id: str = Field(
        default="",
        description="the turn this one is nested in (a sub-agent's own turn); empty for a"
        " turn of its own",
    )
    nested_turns: list[NestedTurn] = Field(
        default_factory=list,
        description="the sub-agents' turns nested in this one, with their own verdicts;"
        " this turn's verdict is its own, not changed by theirs",
    )
    guard: TurnGuard = Field(
        default_factory=lambda: TurnGuard(),
        description="what the in-loop guard did in the turn (result unguarded when it did not run)",
    )


# --- statistics ---------------------------------------------------------------------------


class RatePoint(ApiModel):
    t: datetime = Field(description="bucket start (UTC)")
    turns: int
    rejected: int
    flagged: int
    rate: float = Field(description="rejected / turns (0 when no turns)")


class RateSeries(ApiModel):
    key: str
    points: list[RatePoint]


class RejectRate(ApiModel):
    series: list[RateSeries]


class KindVerifications(VerificationTally):
    kind: Kind = Field(
        description="the finding's kind; a confirmed name no finding named counts under the"
        " finding it became (fabricated_identifier, negated_existing_identifier)"
    )


class VerificationSummary(ApiModel):
    kinds: list[KindVerifications] = Field(
        description="sorted by kind; kinds without answers left out"
    )
    total: VerificationTally


class GuardTally(ApiModel):
    turns: int = Field(description="guarded turns (the guard checked at least one attempt)")
    checks: int = Field(description="attempts checked, summed over the turns")
    nudges: int = Field(description="self-correction nudges sent, summed over the turns")
    passed: int = Field(description="turns checked, never nudged, handed on clean")
    footnoted: int = Field(description="turns never nudged whose reply got a footnote")
    corrected: int = Field(description="turns nudged whose last attempt passed or was flagged")
    refused: int = Field(description="turns nudged and still rejected, or stopped by a raise")


class GuardGroup(GuardTally):
    model: str
    agent: str


class GuardSummary(ApiModel):
    groups: list[GuardGroup] = Field(
        description="per model and agent, most guarded turns first; groups without a"
        " guarded turn left out"
    )
    total: GuardTally


class Precision(ApiModel):
    reviewed: int
    confirmed: int
    precision: float | None = Field(description="confirmed / reviewed; null when none")


class KindPrecision(Precision):
    kind: str


class ReviewPrecision(ApiModel):
    turns: Precision
    kinds: list[KindPrecision]


# --- reviews and tenants ------------------------------------------------------------------


class ReviewCreated(ApiModel):
    review_id: str
    turn_id: str
    label: ReviewLabel
    created_at: datetime


class Tenants(ApiModel):
    tenants: list[str] = Field(description="tenants this token may read")
    default: str = Field(description="the tenant read when a request names none")


# --- alerts -------------------------------------------------------------------------------


class AlertState(OpenModel):
    """One (rule, group) of the latest evaluation, or a firing alert."""

    rule: str
    group_by: GroupBy | None
    key: str
    state: Literal["firing", "ok"]
    value: float | None
    limit: float | None
    baseline: float | None
    turns: int | None
    hits: int | None
    reason: str
    evaluated_at: datetime | None
    alert_id: str | None
    fired_at: datetime | None
    notified_at: datetime | None


class AlertEvent(OpenModel):
    alert_id: str
    rule: str
    key: str
    state: Literal["firing", "resolved"]
    value: float
    threshold: float
    turns: int
    fired_at: datetime
    resolved_at: datetime | None
    message: str
    at: datetime


class AlertDelivery(OpenModel):
    alert_id: str
    target: str
    attempt: int
    ok: bool
    status_code: int = Field(description="the webhook's HTTP status; 0 when none answered")
    error: str
    at: datetime


class AlertRecord(OpenModel):
    """One alert of the history, with its notices and delivery attempts."""

    alert_id: str
    rule: str
    key: str
    state: Literal["firing", "resolved"]
    fired_at: datetime
    notified_at: datetime
    resolved_at: datetime | None
    notices: int
    threshold: float
    value: float
    turns: int
    message: str
    last_at: datetime
    events: list[AlertEvent]
    deliveries: list[AlertDelivery]
    group_by: GroupBy | None


class Alerts(OpenModel):
    current: list[AlertState]
    history: list[AlertRecord]
    firing: int
    evaluated_at: datetime | None


class WebhookView(OpenModel):
    url: str = Field(description="scheme and host; the path is hidden")
    format: WebhookFormat


class RuleView(OpenModel):
    name: str
    group_by: GroupBy
    verdict: Counted
    window: str
    window_seconds: int
    threshold: float | None
    baseline_factor: float | None
    baseline_windows: int
    min_turns: int
    min_rate: float
    cooldown: str
    cooldown_seconds: int
    webhooks: list[WebhookView]


class DeliveryView(OpenModel):
    attempts: int
    backoff_seconds: float
    timeout_seconds: float


class AlertRules(OpenModel):
    tenant: str = Field(description="the tenant whose rules these are")
    source: Literal["file", "built-in"] = Field(
        description="a rules file (FACTLEDGER_ALERTS_FILE), or the built-in default rule"
    )
    interval_seconds: float
    dashboard_url: str | None
    delivery: DeliveryView
    rules: list[RuleView]


# --- operations and ingest ----------------------------------------------------------------


class Health(ApiModel):
    status: Literal["ok"]


class Readiness(ApiModel):
    status: Literal["ready", "starting"]


class PartialSuccess(ApiModel):
    rejectedSpans: str | None = Field(default=None, description="int64 as a decimal string")
    errorMessage: str | None = None


class ExportTraceResponse(ApiModel):
    """OTLP/JSON ExportTraceServiceResponse (protobuf for a protobuf request)."""

    partialSuccess: PartialSuccess | None = None


class RpcStatus(ApiModel):
    """google.rpc.Status: `code` is a google.rpc.Code, not the HTTP status."""

    code: int
    message: str
    details: list[dict[str, Any]] | None = None


def _otlp(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {
        "model": model,
        "description": description,
        "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}}},
    }


RECEIVER_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: _otlp(ExportTraceResponse, "accepted; `partialSuccess` counts rejected spans"),
    400: _otlp(RpcStatus, "the body does not decode"),
    401: _otlp(RpcStatus, "ingest tokens are configured and the bearer token is missing"),
    408: _otlp(RpcStatus, "the body was not sent in time (the connection closes)"),
    413: _otlp(RpcStatus, "body above the limit, or more spans than the backlog holds"),
    415: _otlp(RpcStatus, "media type or content encoding not supported"),
    503: _otlp(RpcStatus, "pipeline full, shutting down or the store cannot write; retry"),
}
"""What POST /v1/traces answers (collector/ingest/receiver.py's status table), in the request's
media type: JSON as below, protobuf for a protobuf request."""


class PartialLogsSuccess(ApiModel):
    rejectedLogRecords: str | None = Field(default=None, description="int64 as a decimal string")
    errorMessage: str | None = None


class ExportLogsResponse(ApiModel):
    """OTLP/JSON ExportLogsServiceResponse (protobuf for a protobuf request)."""

    partialSuccess: PartialLogsSuccess | None = None


LOGS_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: _otlp(ExportLogsResponse, "accepted; `partialSuccess` counts rejected log records"),
}
"""What POST /v1/logs answers where it differs from `RECEIVER_RESPONSES`."""


class ExportTargetStatus(ApiModel):
    """One export target since the service started (`collector.export.outbox`)."""

    target: str = Field(description="the target's name in [export.<name>]")
    sent: int = Field(description="verdict records the target took")
    retried: int = Field(description="records sent again after a failed delivery")
    dropped: dict[str, int] = Field(
        description="records never delivered, by reason (outbox_full, gave_up, refused, ...)"
    )
    pending: int = Field(description="records in the outbox now")
    lag_seconds: float = Field(description="how long the oldest pending record has waited")


class ExportStatus(ApiModel):
    """Every configured export target; empty when none is."""

    targets: list[ExportTargetStatus]
