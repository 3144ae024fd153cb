"""Who is reading: the tenant a query API request may see, from its bearer token.

Every `/api/v1` handler takes `ReadTenant`: the tenant named by the `tenant` query
parameter (default: the token's default tenant), once the token is known to allow it.
401 when read tokens are configured and the request has none or an unknown one; 403 when
the token does not cover the tenant asked for. Without read tokens every tenant is
readable (the service binds to loopback unless told otherwise).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Query, Request

from factledger.collector.access import TENANT_PATTERN, AccessConfig, ReadScope
from factledger.collector.service import service_of


def read_scope(
    request: Request,
    authorization: Annotated[str, Header(include_in_schema=False)] = "",
) -> ReadScope:
    """The caller's scope; raises 401 for a missing or unknown token."""
    access: AccessConfig = service_of(request).settings.access
    scope = access.read_scope(authorization)
    if scope is None:
        raise HTTPException(
            401, "missing or invalid bearer token", headers={"WWW-Authenticate": "Bearer"}
        )
    return scope


Scope = Annotated[ReadScope, Depends(read_scope)]


def read_tenant(
    scope: Scope,
    tenant: Annotated[
        str | None,
        Query(
            max_length=64,
            pattern=f"^(?:{TENANT_PATTERN.pattern})?$",  # empty: the default
            description="the tenant to read (default: the token's tenant, else `default`)",
        ),
    ] = None,
) -> str:
    """The tenant this request reads; raises 403 when the token does not cover it (a
    malformed name is a 422 of the parameter's pattern)."""
    chosen = tenant or scope.default_tenant
    if not scope.allows(chosen):
        raise HTTPException(403, f"this token may not read tenant {chosen!r}")
    return chosen


ReadTenant = Annotated[str, Depends(read_tenant)]


def operator_scope(scope: Scope) -> ReadScope:
    """Service-wide figures (/metrics) mix tenants: only a `*` token may read them."""
    if not scope.every:
        raise HTTPException(403, "service-wide figures need a read token for every tenant")
    return scope
