"""The query API (`/api/v1`): turns, verdicts, reject rates, guard counts and the review queue.

The dashboard and every other reader use this API; none of them open the store. Handlers
are plain functions run in FastAPI's thread pool, since store calls block. Each returns a
model of `collector.api.models` and declares the statuses it answers besides 200 and 422:
403 where it reads a tenant, 404 where it names a turn (the app declares 401, 500 and 503
for every route of the router). Every 422, also the ones raised here, has FastAPI's
validation-error shape.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, BackgroundTasks, HTTPException, Path, Query, Request
from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from factledger.collector import rows
from factledger.collector.api.bulk_reads import BulkRead
from factledger.collector.api.export import export_labels
from factledger.collector.api.models import (
    GuardSummary,
    RejectRate,
    ReviewCreated,
    ReviewPrecision,
    ReviewQueue,
    Snapshot,
    Tenants,
    TurnDetail,
    TurnPage,
    VerificationSummary,
    error_responses,
    query_error,
)
from factledger.collector.api.readers import ReadTenant, Scope
from factledger.collector.api.reviewers import ReviewTenant
from factledger.collector.api.text_fields import StoredText
from factledger.collector.service import service_of
from factledger.collector.store.reviews import QueueVerification

router = APIRouter(tags=["query"])

Verdict = Literal["reject", "flag", "pass"]


class ReviewIn(BaseModel):
    """A human's label for a flagged turn."""

    label: Literal["hallucination", "not_hallucination"]
    note: StoredText = Field(default="", max_length=10_000)
    reviewer: StoredText = Field(default="", max_length=200)


TIME_FORMS = (
    "ISO 8601 (2025-01-31T12:00:00Z, 2025-01-31T14:00:00+02:00, 2025-01-31; "
    "no offset means UTC) or Unix seconds (1738324800)"
)


def _time_or_forms(value: Any, parse: ValidatorFunctionWrapHandler) -> datetime:
    try:
        parsed: datetime = parse(value)
    except ValidationError:
        raise PydanticCustomError(
            "datetime_form", "not a time: {input}; use " + TIME_FORMS, {"input": str(value)[:100]}
        ) from None
    return parsed


def _as_utc(value: datetime) -> datetime:
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first datetime in UTC
        raise PydanticCustomError(
            "datetime_range", "not a time in UTC's range: {input}", {"input": str(value)}
        ) from None


QueryTime = Annotated[datetime, WrapValidator(_time_or_forms), AfterValidator(_as_utc)]
"""A time parameter: what pydantic reads as a datetime, in UTC; anything else is a 422
whose message names the accepted forms."""


@router.get("/turns", responses=error_responses(403))
def list_turns(
    request: Request,
    reader: BulkRead,
    verdict: Annotated[
        list[Verdict] | None,
        Query(description="reject, flag or pass; repeat for any of several"),
    ] = None,
    model: Annotated[str | None, Query(description="model name, exact")] = None,
    agent: Annotated[str | None, Query(description="agent name, exact")] = None,
    service: Annotated[
        str | None, Query(description="service name (the spans' service.name), exact")
    ] = None,
    kind: Annotated[str | None, Query(description="turns with a finding of this kind")] = None,
    trace_id: Annotated[str | None, Query(description="32 hex characters")] = None,
    conversation_id: Annotated[str | None, Query()] = None,
    since: Annotated[
        QueryTime | None, Query(description=f"turns started at or after: {TIME_FORMS}")
    ] = None,
    until: Annotated[
        QueryTime | None, Query(description=f"turns started before: {TIME_FORMS}")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**32 - 1)] = 0,
    q: Annotated[
        str | None, Query(max_length=200, description="reply contains this text (any case)")
    ] = None,
) -> TurnPage:
    """Turns, newest first, with their latest verdict; `total` counts every match. A page
    of more than `BULK_READ_ROWS` turns is logged as a bulk read; `until` not after
    `since` is a 422, as for the statistics."""
    if since is not None and until is not None:
        _window(since, until)
    store = service_of(request).store
    turns, total = store.list_turns(
        reader.tenant,
        verdict=verdict or None,
        q=q or None,
        model=model,
        agent=agent,
        service=service,
        kind=kind,
        trace_id=trace_id,
        conversation_id=conversation_id,
        since=since,
        until=until,
        limit=limit,
        offset=offset,
    )
    reader.read(len(turns))
    return TurnPage.model_validate({"turns": turns, "total": total})


@router.get("/turns/{turn_id}", responses=error_responses(403, 404))
def get_turn(request: Request, tenant: ReadTenant, turn_id: str) -> TurnDetail:
    """One turn: request, reply, tool calls, findings, spans, reviews, verdict history,
    and the evidence snapshots its citations map to."""
    store = service_of(request).store
    turn: dict[str, Any] | None = store.get_turn(tenant, turn_id)
    if turn is None:
        raise HTTPException(404, f"no turn {turn_id}")
    turn.update(store.turn_evidence(tenant, turn_id, int(turn["version"])))
    return TurnDetail.model_validate(turn)


SnapshotHash = Annotated[
    str,
    Path(alias="hash", pattern="^[0-9a-f]{64}$", description="SHA-256 of the content (hex)"),
]


@router.get("/snapshots/{hash}", responses=error_responses(403, 404))
def get_snapshot(request: Request, tenant: ReadTenant, digest: SnapshotHash) -> Snapshot:
    """One evidence snapshot of the tenant: where it was read and its redacted content."""
    snapshot = service_of(request).store.get_snapshot(tenant, digest)
    if snapshot is None:
        raise HTTPException(404, f"no snapshot {digest}")
    return Snapshot.model_validate(snapshot)


@router.get("/stats/reject-rate", responses=error_responses(403))
def reject_rate(
    request: Request,
    tenant: ReadTenant,
    group_by: Literal["model", "agent", "service", "kind"] = "model",
    bucket: Literal["1m", "5m", "1h", "1d"] = "1h",
    since: Annotated[
        QueryTime | None, Query(description=f"default: 24 hours ago; {TIME_FORMS}")
    ] = None,
    until: Annotated[QueryTime | None, Query(description=f"default: now; {TIME_FORMS}")] = None,
) -> RejectRate:
    """Rejected over validated turns per group and time bucket (flagged alongside)."""
    start, end = _window(since, until)
    try:
        series = service_of(request).store.reject_rate(
            tenant, group_by=group_by, bucket=bucket, since=start, until=end
        )
    except ValueError as exc:  # too many buckets: the store's message names the bound
        raise query_error("bucket", str(exc), bucket) from exc
    return RejectRate.model_validate({"series": series})


@router.get("/verifications/summary", responses=error_responses(403))
def verification_summary(
    request: Request,
    tenant: ReadTenant,
    since: Annotated[
        QueryTime | None, Query(description=f"default: 24 hours ago; {TIME_FORMS}")
    ] = None,
    until: Annotated[QueryTime | None, Query(description=f"default: now; {TIME_FORMS}")] = None,
) -> VerificationSummary:
    """Per finding kind, how the sources of truth answered (confirmed, refuted,
    unverifiable) in the latest verdict of the turns started in the window, and in total.
    A name no finding named counts only when confirmed, under the finding it became."""
    start, end = _window(since, until)
    summary = service_of(request).store.verification_summary(tenant, since=start, until=end)
    return VerificationSummary.model_validate(summary)


@router.get("/stats/guard", responses=error_responses(403))
def guard_summary(
    request: Request,
    tenant: ReadTenant,
    since: Annotated[
        QueryTime | None, Query(description=f"default: 24 hours ago; {TIME_FORMS}")
    ] = None,
    until: Annotated[QueryTime | None, Query(description=f"default: now; {TIME_FORMS}")] = None,
    service: Annotated[
        str | None, Query(description="service name (the spans' service.name), exact")
    ] = None,
) -> GuardSummary:
    """What the in-loop guard did in the latest verdict of the guarded turns started in
    the window, per model and agent and in total: turns, checks, nudges, and how many
    passed, were footnoted, corrected themselves after a nudge, or were refused."""
    start, end = _window(since, until)
    summary = service_of(request).store.guard_summary(
        tenant, since=start, until=end, service=service
    )
    return GuardSummary.model_validate(summary)


VerificationFilter = Annotated[
    QueueVerification,
    Query(
        description="any; unverified: verification asked nothing of the latest verdict; "
        "unsettled: it asked, and no source could settle any of it"
    ),
]
"""The review queue's filter by what verification answered."""


@router.get("/review-queue", responses=error_responses(403))
def review_queue(
    request: Request,
    tenant: ReadTenant,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    verification: VerificationFilter = "any",
) -> ReviewQueue:
    """Flagged turns without a review: class-5 suspicions first, by score, then newest;
    `total` counts every turn in the queue (of the `verification` chosen). A flag that
    verification confirmed is a reject and one it refuted a pass, so neither waits here;
    each item says what verification answered (`verification`)."""
    store = service_of(request).store
    items = store.review_queue(tenant, limit=limit, verification=verification)
    total = store.review_queue_count(tenant, verification)
    # A turn flagged between the two queries: the count never says less than the page.
    return ReviewQueue.model_validate({"turns": items, "total": max(total, len(items))})


@router.get("/stats/review-precision", responses=error_responses(403))
def review_precision(request: Request, tenant: ReadTenant) -> ReviewPrecision:
    """Per finding kind, how many reviewed turns the humans confirmed as hallucinations
    (each turn's latest label): `{turns: {reviewed, confirmed, precision}, kinds: [...]}`."""
    return ReviewPrecision.model_validate(service_of(request).store.review_precision(tenant))


@router.post("/turns/{turn_id}/reviews", status_code=201, responses=error_responses(400, 403, 404))
def add_review(
    request: Request,
    caller: ReviewTenant,
    turn_id: str,
    review: ReviewIn,
    tasks: BackgroundTasks,
) -> ReviewCreated:
    """Store a human's label; the turn leaves the review queue (and, with verdict export
    on, the label leaves as a verdict: docs/export.md). 403 for a token without the
    review permission."""
    store = service_of(request).store
    tenant = caller.tenant
    if store.get_turn(tenant, turn_id) is None:
        raise HTTPException(404, f"no turn {turn_id}")
    review_id = str(uuid.uuid4())
    created = datetime.now(UTC)
    redactor = service_of(request).settings.redactor
    note = redactor.text(review.note) if redactor else review.note
    reviewer = redactor.text(review.reviewer) if redactor else review.reviewer
    store.insert_review(
        rows.review_row(
            tenant=tenant,
            turn_id=turn_id,
            review_id=review_id,
            label=review.label,
            note=note,
            reviewer=reviewer,
            created_at=created,
        )
    )
    export_labels(request, tasks, tenant, [turn_id], review.label)
    return ReviewCreated(
        review_id=review_id, turn_id=turn_id, label=review.label, created_at=created
    )


@router.get("/tenants")
def tenants(request: Request, scope: Scope) -> Tenants:
    """The tenants this caller may read (pass one as `?tenant=` to any other call) and the
    one read when none is named."""
    configured = service_of(request).settings.access.tenants
    readable = configured if scope.every else scope.tenants
    return Tenants(tenants=sorted(readable), default=scope.default_tenant)


_DAY = timedelta(days=1)


def _window(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
    """A statistics window: `since` (default: a day ago) to `until` (default: now);
    a 422 when it is empty."""
    now = datetime.now(UTC)
    start = since or now.replace(microsecond=0) - _DAY
    end = until or now
    if end <= start:
        raise query_error("until", "until must be after since", str(until or ""))
    return start, end
