"""The query API (`/api/v1`): turns, verdicts, reject rates and the review queue.

The dashboard and every other reader use this API; none of them open the store. Handlers
are plain functions run in FastAPI's thread pool, since store calls block.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, Field

from factledger.collector import rows
from factledger.collector.readers import ReadTenant, Scope

router = APIRouter(tags=["query"])

Verdict = Literal["reject", "flag", "pass"]


class ReviewIn(BaseModel):
    """A human's label for a flagged turn."""

    label: Literal["hallucination", "not_hallucination"]
    note: str = Field(default="", max_length=10_000)
    reviewer: str = Field(default="", max_length=200)


@router.get("/turns")
def list_turns(
    request: Request,
    tenant: ReadTenant,
    verdict: Annotated[
        list[Verdict] | None,
        Query(description="reject, flag or pass; repeat for any of several"),
    ] = None,
    model: Annotated[str | None, Query(description="model name, exact")] = None,
    agent: Annotated[str | None, Query(description="agent name, exact")] = None,
    kind: Annotated[str | None, Query(description="turns with a finding of this kind")] = None,
    trace_id: Annotated[str | None, Query(description="32 hex characters")] = None,
    conversation_id: Annotated[str | None, Query()] = None,
    since: Annotated[
        datetime | None, Query(description="turns started at or after (ISO 8601)")
    ] = None,
    until: Annotated[datetime | None, Query(description="turns started before (ISO 8601)")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
    q: Annotated[
        str | None, Query(max_length=200, description="reply contains this text (any case)")
    ] = None,
) -> dict[str, Any]:
    """Turns, newest first, with their latest verdict."""
    store = request.app.state.service.store
    turns, total = store.list_turns(
        tenant,
        verdict=verdict or None,
        q=q or None,
        model=model,
        agent=agent,
        kind=kind,
        trace_id=trace_id,
        conversation_id=conversation_id,
        since=_utc(since),
        until=_utc(until),
        limit=limit,
        offset=offset,
    )
    return {"turns": turns, "total": total}


@router.get("/turns/{turn_id}")
def get_turn(request: Request, tenant: ReadTenant, turn_id: str) -> dict[str, Any]:
    """One turn: request, reply, tool calls, findings, spans, reviews, verdict history."""
    turn: dict[str, Any] | None = request.app.state.service.store.get_turn(tenant, turn_id)
    if turn is None:
        raise HTTPException(404, f"no turn {turn_id}")
    return turn


@router.get("/stats/reject-rate")
def reject_rate(
    request: Request,
    tenant: ReadTenant,
    group_by: Literal["model", "agent", "service", "kind"] = "model",
    bucket: Literal["1m", "5m", "1h", "1d"] = "1h",
    since: Annotated[datetime | None, Query(description="default: 24 hours ago")] = None,
    until: Annotated[datetime | None, Query(description="default: now")] = None,
) -> dict[str, Any]:
    """Rejected over validated turns per group and time bucket (flagged alongside)."""
    now = datetime.now(UTC)
    start = _utc(since) or now.replace(microsecond=0) - _DAY
    end = _utc(until) or now
    if end <= start:
        raise HTTPException(422, "until must be after since")
    series = request.app.state.service.store.reject_rate(
        tenant, group_by=group_by, bucket=bucket, since=start, until=end
    )
    return {"series": series}


@router.get("/review-queue")
def review_queue(
    request: Request, tenant: ReadTenant, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, Any]:
    """Flagged turns without a review: class-5 suspicions first, by score, then newest."""
    items = request.app.state.service.store.review_queue(tenant, limit=limit)
    return {"turns": items, "total": len(items)}


@router.get("/stats/review-precision")
def review_precision(request: Request, tenant: ReadTenant) -> dict[str, Any]:
    """Per finding kind, how many reviewed turns the humans confirmed as hallucinations
    (each turn's latest label): `{turns: {reviewed, confirmed, precision}, kinds: [...]}`."""
    precision: dict[str, Any] = request.app.state.service.store.review_precision(tenant)
    return precision


@router.post("/turns/{turn_id}/reviews", status_code=201)
def add_review(
    request: Request, tenant: ReadTenant, turn_id: str, review: ReviewIn
) -> dict[str, Any]:
    """Store a human's label; the turn leaves the review queue."""
    store = request.app.state.service.store
    if store.get_turn(tenant, turn_id) is None:
        raise HTTPException(404, f"no turn {turn_id}")
    review_id = str(uuid.uuid4())
    created = datetime.now(UTC)
    redactor = request.app.state.service.settings.redactor
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
    return {
        "review_id": review_id,
        "turn_id": turn_id,
        "label": review.label,
        "created_at": created,
    }


@router.get("/tenants")
def tenants(request: Request, scope: Scope) -> dict[str, Any]:
    """The tenants this caller may read (pass one as `?tenant=` to any other call) and the
    one read when none is named."""
    configured = request.app.state.service.settings.access.tenants
    readable = configured if scope.every else scope.tenants
    return {"tenants": sorted(readable), "default": scope.default_tenant}


_DAY = timedelta(days=1)


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
