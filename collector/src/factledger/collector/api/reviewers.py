"""Who is labelling: the tenant a review write acts on, and the token that writes it.

Labels and withdrawals change what every reader sees (the queue, precision, the eval
cases), so they need more than reading: a review token (FACTLEDGER_REVIEW_TOKENS or a
`[review]` table) covering the tenant. A read token alone gets 403 with a message that
names the way out; without any read or review token (an open API) everyone may label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request

from factledger.collector.access import AccessConfig, token_fingerprint
from factledger.collector.api.readers import ReadTenant
from factledger.collector.service import service_of

NO_REVIEW_TOKEN = (
    "this token may read but not review: labels and their withdrawal need a review token"
    " (FACTLEDGER_REVIEW_TOKENS, or a [review] table in FACTLEDGER_TOKENS_FILE)"
)


@dataclass(frozen=True)
class Reviewer:
    """A review write allowed: the tenant it acts on and the fingerprint of the token
    that asked ('' on an open API), which the records and the log keep."""

    tenant: str
    token: str


def review_tenant(
    request: Request,
    tenant: ReadTenant,
    authorization: Annotated[str, Header(include_in_schema=False)] = "",
) -> Reviewer:
    """The tenant this request may label; raises 403 when the token holds no review
    permission for it (the read dependency has already answered 401 or 403)."""
    access: AccessConfig = service_of(request).settings.access
    scope = access.review_scope(authorization)
    if scope is None:
        raise HTTPException(403, NO_REVIEW_TOKEN)
    if not scope.allows(tenant):
        raise HTTPException(403, f"this token may not review tenant {tenant!r}")
    return Reviewer(tenant=tenant, token=token_fingerprint(authorization))


ReviewTenant = Annotated[Reviewer, Depends(review_tenant)]
