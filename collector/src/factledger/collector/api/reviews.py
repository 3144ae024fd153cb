"""The review part of the query API: the queue in groups, labels for several turns at
once, undo, and the labels exported as `factledger eval` cases.

A label is a row of `reviews`; undo does not delete it but adds a row to
`review_withdrawals` naming it, after which the review no longer counts anywhere: the
turn's label falls back to its previous review, or the turn is back in the queue.
Labels and withdrawals need a review token (`collector.api.reviewers`); each withdrawal
records the token's fingerprint and is logged, and `GET /reviews/withdrawals` lists them.
Handlers are plain functions run in FastAPI's thread pool, since store calls block.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, BackgroundTasks, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from factledger.collector import rows
from factledger.collector.api.bulk_reads import BulkRead
from factledger.collector.api.export import export_labels
from factledger.collector.api.models import QueueVerification, error_responses
from factledger.collector.api.queries import VerificationFilter
from factledger.collector.api.readers import ReadTenant
from factledger.collector.api.review_export import export_cases
from factledger.collector.api.review_groups import MAX_PATTERN_CHARS, group_queue
from factledger.collector.api.reviewers import ReviewTenant
from factledger.collector.api.text_fields import StoredText
from factledger.collector.service import service_of
from factledger.collector.store import MAX_REVIEW_EXPORT, Store

router = APIRouter(tags=["reviews"])
log = logging.getLogger(__name__)

MAX_TURNS_PER_LABEL = 500
"""Turns one label may cover (a group of near-duplicates, or a selection)."""
JSONL = "application/x-ndjson"
NEXT_OFFSET = "X-Next-Offset"
"""The export's header on a full page: the `offset` of the next one."""


class LabelIn(BaseModel):
    """One human label for one or several turns (a group of near-duplicates)."""

    turn_ids: list[StoredText] = Field(min_length=1, max_length=MAX_TURNS_PER_LABEL)
    label: rows.ReviewLabel
    note: StoredText = Field(default="", max_length=10_000)
    reviewer: StoredText = Field(default="", max_length=200)


class QueueTurn(BaseModel):
    """A queue item of a group: the turn's summary (the keys of GET /turns) and score."""

    model_config = ConfigDict(extra="allow")

    turn_id: str
    agent: str
    model: str
    verdict: str
    kinds: list[str]
    started_at: datetime
    reply_preview: str
    max_score: float | None = Field(description="class-5 suspicion score, if any")
    has_class5: bool
    verification: QueueVerification = Field(
        description="what verification answered of the turn's latest verdict"
    )


class ReviewGroup(BaseModel):
    """Near-duplicate queue items: same agent, finding kinds and reply pattern."""

    group_id: str = Field(description="stable while the group's pattern and agent are")
    agent: str
    kinds: list[str]
    pattern: str = Field(description="the reply with what varies masked (‹name›, ‹id›, ...)")
    size: int
    turns: list[QueueTurn] = Field(description="the first one stands for the group")


class QueueFacets(BaseModel):
    """The whole queue (unfiltered): its size and what a filter may choose."""

    total: int
    kinds: list[str]
    models: list[str]
    agents: list[str]


class ReviewGroups(BaseModel):
    groups: list[ReviewGroup]
    turns: int = Field(description="queue items in these groups")
    facets: QueueFacets


class LabelCreated(BaseModel):
    review_id: str
    turn_id: str
    label: rows.ReviewLabel
    created_at: datetime


class LabelsCreated(BaseModel):
    reviews: list[LabelCreated]


class Withdrawn(BaseModel):
    review_id: str
    turn_id: str
    withdrawn: bool


class Withdrawal(BaseModel):
    """One withdrawn review, for audit."""

    review_id: str
    turn_id: str
    label: str = Field(description="the label withdrawn")
    reviewer: str = Field(description="the name the request gave (`?reviewer=`)")
    token: str = Field(
        description="fingerprint of the review token that withdrew it (`sha256:` and 12 hex"
        " digits, never the token); empty on an open API"
    )
    withdrawn_at: datetime


class Withdrawals(BaseModel):
    withdrawals: list[Withdrawal]


class Skipped(BaseModel):
    turn_id: str
    reason: str


class ReviewExport(BaseModel):
    cases: list[dict[str, Any]] = Field(
        description="`factledger eval` cases: {id, otlp, expected, review, turn}"
    )
    skipped: list[Skipped]


def _store(request: Request) -> Store:
    store: Store = service_of(request).store
    return store


def _redacted(request: Request, text: str) -> str:
    redactor = service_of(request).settings.redactor
    return redactor.text(text) if redactor else text


@router.get("/review-queue/groups", response_model=ReviewGroups, responses=error_responses(403))
def review_queue_groups(
    request: Request,
    tenant: ReadTenant,
    kind: Annotated[str | None, Query(description="turns with a finding of this kind")] = None,
    model: Annotated[str | None, Query(description="model name, exact")] = None,
    agent: Annotated[str | None, Query(description="agent name, exact")] = None,
    verification: VerificationFilter = "any",
    limit: Annotated[int, Query(ge=1, le=1000, description="queue items grouped")] = 200,
) -> dict[str, Any]:
    """The review queue (filtered), its near-duplicates gathered: items with the same
    agent, finding kinds and reply pattern form one group, which one label can cover.
    Groups come in the order of their best item (class-5 suspicions first, by score,
    then newest). `facets` describes the whole queue: `{total, kinds, models, agents}`.
    Each item says what verification answered of it (`verification`)."""
    store = _store(request)
    items = store.review_queue(
        tenant,
        limit=limit,
        kind=kind or None,
        model=model or None,
        agent=agent or None,
        verification=verification,
        reply_chars=MAX_PATTERN_CHARS,
    )
    groups = group_queue(items)
    return {
        "groups": groups,
        "turns": len(items),
        "facets": store.review_queue_facets(tenant),
    }


@router.post(
    "/reviews",
    status_code=201,
    response_model=LabelsCreated,
    responses=error_responses(400, 403, 404),
)
def add_reviews(
    request: Request, caller: ReviewTenant, body: LabelIn, tasks: BackgroundTasks
) -> dict[str, Any]:
    """Store one label for every turn named (one review each, same note and reviewer);
    they leave the review queue. 404, storing nothing, when a turn is unknown; 403 for a
    token without the review permission."""
    store = _store(request)
    tenant = caller.tenant
    turn_ids = list(dict.fromkeys(body.turn_ids))
    missing = sorted(set(turn_ids) - store.known_turns(tenant, turn_ids))
    if missing:
        raise HTTPException(404, f"no turn {', '.join(missing[:5])}")
    created = datetime.now(UTC)
    note, reviewer = _redacted(request, body.note), _redacted(request, body.reviewer)
    reviews = [
        {"review_id": str(uuid.uuid4()), "turn_id": turn_id, "label": body.label}
        for turn_id in turn_ids
    ]
    store.insert_reviews(
        [
            rows.review_row(
                tenant=tenant,
                turn_id=review["turn_id"],
                review_id=review["review_id"],
                label=body.label,
                note=note,
                reviewer=reviewer,
                created_at=created,
            )
            for review in reviews
        ]
    )
    export_labels(request, tasks, tenant, turn_ids, body.label)
    return {"reviews": [{**review, "created_at": created} for review in reviews]}


@router.delete(
    "/reviews/{review_id}", response_model=Withdrawn, responses=error_responses(403, 404)
)
def withdraw_review(
    request: Request,
    caller: ReviewTenant,
    review_id: str,
    reviewer: Annotated[str, Query(max_length=200, description="who takes it back")] = "",
) -> dict[str, Any]:
    """Take a review back (undo): it stops counting, so the turn's label is its previous
    review's, or the turn returns to the review queue. Withdrawing twice is harmless. The
    withdrawal records `reviewer` and the review token's fingerprint (403 without one)."""
    store = _store(request)
    tenant = caller.tenant
    review = store.review(tenant, review_id)
    if review is None:
        raise HTTPException(404, f"no review {review_id}")
    if not review["withdrawn"]:
        name = _redacted(request, reviewer)
        store.insert_review_withdrawal(
            rows.review_withdrawal_row(
                tenant=tenant,
                turn_id=review["turn_id"],
                review_id=review_id,
                reviewer=name,
                withdrawn_at=datetime.now(UTC),
                token_id=caller.token,
            )
        )
        log.info(
            "review %s of turn %s withdrawn: tenant=%s reviewer=%r token=%s",
            review_id,
            review["turn_id"],
            tenant,
            name,
            caller.token or "(open API)",
        )
    return {"review_id": review_id, "turn_id": review["turn_id"], "withdrawn": True}


@router.get(
    "/reviews",
    response_model=ReviewExport,
    responses={
        200: {"content": {JSONL: {}}, "description": "eval cases (JSON or JSONL)"},
        **error_responses(403),
    },
)
def export_reviews(
    request: Request,
    response: Response,
    reader: BulkRead,
    format: Annotated[
        Literal["json", "jsonl"], Query(description="jsonl: one eval case per line")
    ] = "json",
    label: Annotated[rows.ReviewLabel | None, Query(description="only this label")] = None,
    limit: Annotated[
        int,
        Query(ge=1, le=MAX_REVIEW_EXPORT, description="labelled turns a page holds, newest first"),
    ] = MAX_REVIEW_EXPORT,
    offset: Annotated[
        int, Query(ge=0, le=2**32 - 1, description="labelled turns to skip (the next page)")
    ] = 0,
) -> Response | dict[str, Any]:
    """Each labelled turn's latest label (withdrawn ones left out) as a `factledger
    eval` case: `{id, otlp, expected, review, turn}`, where `otlp` holds the turn's spans
    and `expected` follows the label (hallucination: the flagged kinds; not a
    hallucination: `pass`). `format=jsonl` is a file `factledger eval` reads as is. A page
    holds at most `MAX_REVIEW_EXPORT` turns (422 above); every page is logged as a bulk
    read."""
    turns, labels = _store(request).labelled_turns(
        reader.tenant, limit=limit, label=label, offset=offset
    )
    reader.read(len(turns), spans=sum(len(turn["spans"]) for turn in turns), always=True)
    export = export_cases(turns)
    # A full page may have a next one: the header says where it starts.
    more = {NEXT_OFFSET: str(offset + labels)} if labels == limit else {}
    if format == "jsonl":
        return PlainTextResponse(export.jsonl(), media_type=JSONL, headers=more)
    response.headers.update(more)
    return {"cases": export.cases, "skipped": export.skipped}


@router.get("/reviews/withdrawals", response_model=Withdrawals, responses=error_responses(403))
def review_withdrawals(
    request: Request,
    tenant: ReadTenant,
    limit: Annotated[int, Query(ge=1, le=1000, description="withdrawals, latest first")] = 100,
) -> dict[str, Any]:
    """The audit of undo: each withdrawn review of the tenant, latest first, with the
    label it took back, the name the request gave and the fingerprint of the token."""
    return {"withdrawals": _store(request).withdrawals(tenant, limit=limit)}
