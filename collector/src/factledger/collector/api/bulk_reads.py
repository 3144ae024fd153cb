"""Bulk reads, logged: who read how many of a tenant's turns (and spans) through which
route, so an export of a tenant's data leaves a trace in the service log.

A page of the review export (each turn with all its spans) is always a bulk read; a page
of the turns listing is one when it holds more than BULK_READ_ROWS turns (the dashboard
asks for 100 at most, so its refreshes stay out of the log). Page sizes are capped where
the routes declare their `limit` (422 above): /turns 1000, the review export
`MAX_REVIEW_EXPORT`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request

from factledger.collector.access import ReadScope, token_fingerprint
from factledger.collector.api.readers import ReadTenant, Scope

log = logging.getLogger(__name__)

BULK_READ_ROWS = 100
"""A turns page larger than this is logged as a bulk read."""


@dataclass(frozen=True)
class BulkReader:
    """The reader of one request: what its bulk-read log line names."""

    endpoint: str
    tenant: str
    token: str
    """The token's fingerprint ('' on an open API)."""
    scope: ReadScope

    def read(self, rows: int, *, spans: int | None = None, always: bool = False) -> None:
        """Log this read at INFO when it is a bulk read: `always`, or more than
        BULK_READ_ROWS rows."""
        if not always and rows <= BULK_READ_ROWS:
            return
        readable = "*" if self.scope.every else ",".join(sorted(self.scope.tenants))
        counted = f" spans={spans}" if spans is not None else ""
        log.info(
            "bulk read: %s tenant=%s rows=%d%s token=%s token_tenants=%s",
            self.endpoint,
            self.tenant,
            rows,
            counted,
            self.token or "(open API)",
            readable,
        )


def bulk_reader(
    request: Request,
    tenant: ReadTenant,
    scope: Scope,
    authorization: Annotated[str, Header(include_in_schema=False)] = "",
) -> BulkReader:
    return BulkReader(
        endpoint=f"{request.method} {request.url.path}",
        tenant=tenant,
        token=token_fingerprint(authorization),
        scope=scope,
    )


BulkRead = Annotated[BulkReader, Depends(bulk_reader)]
