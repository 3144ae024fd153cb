"""A small typed client for the service's query API (`/api/v1`): the dashboard's only
source of data. It never opens the store.

Exceptions::

    ApiError            the API answered with an error status, or with something not JSON
     ├─ ApiUnavailable  the service could not be reached (refused, timed out, DNS)
     ├─ NotFound        404: no such turn, or an endpoint this service does not have
     └─ Forbidden       401/403: no or an unknown read token, or a tenant it does not cover
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, TypedDict, cast
from urllib.parse import quote

import httpx

from factledger.processors.errors import FactLedgerError

DEFAULT_API_URL = "http://127.0.0.1:4318"
API_ENV = "FACTLEDGER_API"
"""The service's base URL (without /api/v1) for the dashboard; `factledger dashboard --api`
sets it."""
TOKEN_ENV = "FACTLEDGER_READ_TOKEN"
"""The dashboard's read token, when the service requires one (FACTLEDGER_READ_TOKENS)."""
DEFAULT_TIMEOUT_SECONDS = 15.0

GroupBy = Literal["model", "agent", "service", "kind"]
Bucket = Literal["1m", "5m", "1h", "1d"]
Label = Literal["hallucination", "not_hallucination"]
QueueVerification = Literal["any", "unverified", "unsettled"]
"""The review queue by what verification answered: anything; nothing asked; asked, and
no source could settle it."""


class Point(TypedDict):
    t: str
    turns: int
    rejected: int
    flagged: int
    rate: float


class Series(TypedDict):
    key: str
    points: list[Point]


class TurnSummary(TypedDict):
    turn_id: str
    trace_id: str
    conversation_id: str
    service: str
    agent: str
    model: str
    started_at: str
    ended_at: str
    verdict: str
    kinds: list[str]
    reply_preview: str
    version: int


class VerificationTally(TypedDict):
    confirmed: int
    refuted: int
    unverifiable: int


class QueueVerificationTally(VerificationTally):
    reasons: list[str]
    """Why the unverifiable answers are (`no source`, `timeout`, ...)."""


class QueueItem(TurnSummary):
    max_score: float | None
    """Highest class-5 suspicion score; None without a class-5 finding."""
    has_class5: bool
    verification: QueueVerificationTally


class KindVerifications(VerificationTally):
    kind: str


class VerificationSummary(TypedDict):
    kinds: list[KindVerifications]
    total: VerificationTally


class ResultToken(TypedDict):
    """A token as a tool result shows it, and the call that returned it."""

    token: str
    tool: str
    call_id: str | None


class Backing(TypedDict):
    """An identifier of the reply at [start, end) that a tool result backs."""

    token: str
    start: int
    end: int
    tool: str
    call_id: str | None


class GuardTally(TypedDict):
    turns: int
    checks: int
    nudges: int
    passed: int
    footnoted: int
    corrected: int
    refused: int


class GuardGroup(GuardTally):
    model: str
    agent: str


class GuardSummary(TypedDict):
    groups: list[GuardGroup]
    total: GuardTally


class TurnGuard(TypedDict):
    checks: int
    nudges: int
    outcome: str
    action: str
    result: str
    """unguarded, passed, footnoted, corrected or refused."""


Finding = TypedDict(
    "Finding",
    {
        "kind": str,
        "class": str | None,
        "severity": str,
        "message": str,
        "token": str,
        "checked_against": list[str],
        "checked_note": str | None,
        "span": list[int] | None,
        "validator": str,
        "score": float | None,
        "call_id": str | None,
        "real": list[ResultToken],
    },
)


class Verification(TypedDict):
    """A source of truth's answer about a name the reply uses."""

    subject_kind: str
    name: str
    claimed_absent: bool
    span: list[int] | None
    finding: int | None
    """Index in the turn's `findings` of the finding it settled; None when it withdrew
    the finding (refuted) or no finding names it."""
    finding_kind: str | None
    outcome: str
    source: str
    query: str
    answer: str
    reason: str | None
    checked_at: str | None
    duration_ms: float


class ToolCall(TypedDict):
    name: str
    call_id: str
    arguments: Any
    result: Any
    """The object or array the tool returned as JSON, else its text; None when none."""
    ok: bool
    span_id: str | None
    origin: str


class SpanEvent(TypedDict):
    name: str
    time: str
    attributes: dict[str, str]


class Span(TypedDict):
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    service: str
    start_time: str
    """RFC 3339 to the nanosecond (`unix_ns` reads it)."""
    end_time: str
    duration_ms: float
    status_code: str
    status_message: str
    attributes: dict[str, str]
    resource_attributes: dict[str, str]
    scope_name: str
    scope_version: str
    events: list[SpanEvent]


class Review(TypedDict):
    review_id: str
    label: str
    note: str
    reviewer: str
    created_at: str


class Version(TypedDict):
    version: int
    verdict: str
    kinds: list[str]
    validated_at: str


class SnapshotRef(TypedDict):
    hash: str
    url_or_path: str
    tool: str
    call_id: str
    fetched_at: str
    size: int


class Citation(TypedDict):
    cited: str
    start: int
    end: int
    snapshot: str | None


class Turn(TurnSummary):
    provider: str
    validated_at: str
    user_message: str
    reply: str
    tool_calls: list[ToolCall]
    span_ids: list[str]
    validators: list[str]
    max_score: float | None
    has_class5: bool
    findings: list[Finding]
    verifications: list[Verification]
    spans: list[Span]
    reviews: list[Review]
    versions: list[Version]
    snapshots: list[SnapshotRef]
    citations: list[Citation]
    backings: list[Backing]
    guard: NotRequired[TurnGuard]
    """Absent from a service older than the guard counts."""


class Precision(TypedDict):
    reviewed: int
    confirmed: int
    precision: float | None


class KindPrecision(Precision):
    kind: str


class ReviewPrecision(TypedDict):
    turns: Precision
    kinds: list[KindPrecision]


class TurnPage(TypedDict):
    turns: list[TurnSummary]
    total: int


class QueuePage(TypedDict):
    turns: list[QueueItem]
    total: int
    """Every turn in the queue, beyond this page."""


class ApiError(FactLedgerError):
    """The API answered with an error (`status`), or could not be read."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ApiUnavailable(ApiError):
    """The service could not be reached at all."""


class NotFound(ApiError):
    """404: the turn or the endpoint does not exist on this service."""


class Forbidden(ApiError):
    """401 or 403: the service wants a read token, or this token does not cover the tenant."""


@dataclass(frozen=True)
class TurnQuery:
    """Filters of GET /turns. Empty strings and None mean "any"."""

    verdicts: tuple[str, ...] = ("reject", "flag")
    model: str = ""
    agent: str = ""
    service: str = ""
    kind: str = ""
    q: str = ""
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0

    def params(self) -> list[tuple[str, str]]:
        """The query string, as repeated pairs (`verdict` may repeat)."""
        pairs = [("verdict", verdict) for verdict in self.verdicts]
        for name, value in (
            ("model", self.model),
            ("agent", self.agent),
            ("service", self.service),
            ("kind", self.kind),
            ("q", self.q.strip()),
        ):
            if value:
                pairs.append((name, value))
        if self.since is not None:
            pairs.append(("since", _iso(self.since)))
        if self.until is not None:
            pairs.append(("until", _iso(self.until)))
        pairs += [("limit", str(self.limit)), ("offset", str(self.offset))]
        return pairs


class ExportTargetStatus(TypedDict):
    """One verdict export target since the service started."""

    target: str
    sent: int
    retried: int
    dropped: dict[str, int]
    pending: int
    lag_seconds: float


class ExportStatus(TypedDict):
    targets: list[ExportTargetStatus]


class ApiClient:
    """Blocking calls to one FactLedger service, as the bearer of `token` (None: no
    token) reading `tenant` (None: the token's default tenant). Safe to share between
    threads (the httpx client is); `close()` releases the connections."""

    def __init__(
        self,
        base_url: str = DEFAULT_API_URL,
        *,
        token: str | None = None,
        tenant: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: httpx.BaseTransport | None = None,
        _http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.tenant = tenant
        headers = {"Authorization": f"Bearer {token}"} if token else None
        self._http = _http or httpx.Client(
            base_url=f"{self.base_url}/api/v1",
            timeout=timeout,
            transport=transport,
            headers=headers,
        )

    def with_tenant(self, tenant: str | None) -> ApiClient:
        """The same connection reading another tenant."""
        return ApiClient(self.base_url, tenant=tenant, _http=self._http)

    def close(self) -> None:
        self._http.close()

    def tenants(self) -> tuple[list[str], str]:
        """The tenants this token may read, and the one read when none is named."""
        answer = self._get("/tenants")
        return [str(t) for t in answer.get("tenants", [])], str(answer.get("default", ""))

    # --- reads ----------------------------------------------------------------------------

    def turns(self, query: TurnQuery) -> TurnPage:
        return cast(TurnPage, self._get("/turns", query.params()))

    def turn(self, turn_id: str) -> Turn:
        return cast(Turn, self._get(f"/turns/{_segment(turn_id)}"))

    def reject_rate(
        self, *, group_by: GroupBy, bucket: Bucket, since: datetime, until: datetime
    ) -> list[Series]:
        params = {"group_by": group_by, "bucket": bucket, "since": _iso(since)}
        params["until"] = _iso(until)
        return cast(list[Series], self._get("/stats/reject-rate", params)["series"])

    def review_queue(self, limit: int = 50) -> list[QueueItem]:
        return self.review_queue_page(limit)["turns"]

    def review_queue_page(
        self, limit: int = 50, verification: QueueVerification = "any"
    ) -> QueuePage:
        """The first `limit` queue items and how many the whole queue holds."""
        params = {"limit": str(limit), "verification": verification}
        return cast(QueuePage, self._get("/review-queue", params))

    def verification_summary(self, *, since: datetime, until: datetime) -> VerificationSummary:
        """GET /verifications/summary; raises NotFound on a service without verification."""
        params = {"since": _iso(since), "until": _iso(until)}
        return cast(VerificationSummary, self._get("/verifications/summary", params))

    def guard_summary(self, *, since: datetime, until: datetime) -> GuardSummary:
        """GET /stats/guard; raises NotFound on a service older than the guard counts."""
        params = {"since": _iso(since), "until": _iso(until)}
        return cast(GuardSummary, self._get("/stats/guard", params))

    def review_precision(self) -> ReviewPrecision:
        return cast(ReviewPrecision, self._get("/stats/review-precision"))

    def alerts(self, limit: int = 200) -> dict[str, Any]:
        """GET /alerts; raises NotFound on a service that has no alerting yet."""
        return self._get("/alerts", {"limit": str(limit)})

    def alert_rules(self) -> dict[str, Any]:
        """GET /alerts/rules; raises NotFound on a service that has no alerting yet."""
        return self._get("/alerts/rules")

    def export_status(self) -> ExportStatus:
        """GET /export/status; raises NotFound on a service without verdict export."""
        return cast(ExportStatus, self._get("/export/status"))

    # --- writes ---------------------------------------------------------------------------

    def add_review(
        self, turn_id: str, label: Label, *, note: str = "", reviewer: str = ""
    ) -> dict[str, Any]:
        """Store a human label; the turn leaves the review queue."""
        body = {"label": label, "note": note, "reviewer": reviewer}
        return self._send("POST", f"/turns/{_segment(turn_id)}/reviews", json=body)

    # --- plumbing -------------------------------------------------------------------------

    def _get(
        self, path: str, params: Mapping[str, str] | Sequence[tuple[str, str]] | None = None
    ) -> dict[str, Any]:
        return self._send("GET", path, params=params)

    def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if self.tenant:
            params = kwargs.get("params")
            pairs = list(params.items()) if isinstance(params, Mapping) else list(params or [])
            kwargs["params"] = [*pairs, ("tenant", self.tenant)]
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ApiUnavailable(
                f"cannot reach the FactLedger API at {self.base_url}: {exc}"
            ) from exc
        if response.status_code == 404:
            raise NotFound(_detail(response), status=404)
        if response.status_code in (401, 403):
            raise Forbidden(_detail(response), status=response.status_code)
        if response.status_code >= 400:
            raise ApiError(
                f"{method} {path} answered {response.status_code}: {_detail(response)}",
                status=response.status_code,
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise ApiError(f"{method} {path} did not answer JSON", status=200) from exc
        if not isinstance(payload, dict):
            raise ApiError(f"{method} {path} answered {type(payload).__name__}, not an object")
        return payload


_RFC3339 = re.compile(
    r"(?P<seconds>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(?:\.(?P<fraction>\d+))?"
    r"(?P<zone>[Zz]|[+-]\d\d:\d\d)?"
)


def unix_ns(rfc3339: str) -> int:
    """Unix nanoseconds of an API span time (`2025-01-31T12:00:00.123456789Z`); Python's
    datetime holds microseconds only, so the fraction is read apart."""
    parts = _RFC3339.fullmatch(rfc3339.strip())
    if parts is None:
        raise ValueError(f"not an RFC 3339 time: {rfc3339!r}")
    zone = (parts["zone"] or "Z").upper().replace("Z", "+00:00")
    moment = datetime.fromisoformat(parts["seconds"] + zone)
    fraction = (parts["fraction"] or "") + "0" * 9
    return int(moment.timestamp()) * 1_000_000_000 + int(fraction[:9])


def _iso(value: datetime) -> str:
    aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return aware.isoformat()


def _segment(value: str) -> str:
    # Turn ids are hex in practice; quoting keeps a stray "/" or "?" from changing the path.
    return quote(value, safe="")


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    return str(detail) if detail else response.text[:300] or response.reason_phrase


# --- reviews: the grouped queue, one label for several turns, undo -----------------------
# Functions rather than methods: they ask ApiClient's transport (`_send`) like its methods.


class QueueGroup(TypedDict):
    """Near-duplicate queue items (same agent, finding kinds and reply pattern)."""

    group_id: str
    agent: str
    kinds: list[str]
    pattern: str
    size: int
    turns: list[QueueItem]
    """The first one stands for the group."""


class QueueFacets(TypedDict):
    total: int
    kinds: list[str]
    models: list[str]
    agents: list[str]


class QueueGroups(TypedDict):
    groups: list[QueueGroup]
    turns: int
    facets: QueueFacets


def review_groups(
    api: ApiClient,
    *,
    kind: str = "",
    model: str = "",
    agent: str = "",
    verification: QueueVerification = "any",
    limit: int = 200,
) -> QueueGroups:
    """GET /review-queue/groups: the queue's near-duplicates gathered, filtered ("" = any)."""
    params = {"limit": str(limit), "verification": verification}
    for name, value in (("kind", kind), ("model", model), ("agent", agent)):
        if value:
            params[name] = value
    return cast(QueueGroups, api._send("GET", "/review-queue/groups", params=params))


def add_labels(
    api: ApiClient, turn_ids: Sequence[str], label: Label, *, note: str = "", reviewer: str = ""
) -> list[str]:
    """POST /reviews: one label for every turn named; the ids of the reviews stored."""
    body = {"turn_ids": list(turn_ids), "label": label, "note": note, "reviewer": reviewer}
    answer = api._send("POST", "/reviews", json=body)
    return [str(review["review_id"]) for review in answer["reviews"]]


def withdraw_review(api: ApiClient, review_id: str, *, reviewer: str = "") -> None:
    """DELETE /reviews/{id}: the review stops counting (undo)."""
    params = {"reviewer": reviewer} if reviewer else None
    api._send("DELETE", f"/reviews/{_segment(review_id)}", params=params)
