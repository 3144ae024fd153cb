"""Tenants and bearer tokens: who may send spans for which tenant, who may read which,
who may label turns.

Ingest tokens map to one tenant each: the tenant written into every row of the spans a
request carries. Read tokens map to the tenants they may read (`*`: every tenant). Review
tokens map to the tenants whose turns they may label and whose labels they may withdraw;
a review token also reads those tenants (the dashboard sends one token), while a read
token alone may not write a review. With no ingest token configured every request goes to
the single tenant `default`; with neither read nor review tokens configured the query API
is open, labels included (the service binds to loopback by default).

Who may read is never left open by accident (`check_query_access`, at start-up):

| ingest tokens | read (or review) tokens | FACTLEDGER_API_OPEN | query API |
|---|---|---|---|
| none | none | unset | open (a local, single-user service) |
| any | none | `1` | open: an explicit choice |
| some | none | unset | refused at start-up: set read tokens or FACTLEDGER_API_OPEN=1 |
| any | none | `0` | refused at start-up: set read tokens or FACTLEDGER_API_OPEN=1 |
| any | some | unset or `0` | needs a read token |
| any | some | `1` | refused at start-up: the two contradict each other |

An open API on anything but loopback is allowed, with a warning (`exposure_warning`).

Tokens come from a TOML file and from the environment, merged::

    # FACTLEDGER_TOKENS_FILE
    [ingest]                       # token = tenant
    "fl-ingest-9f2c51..." = "acme"
    [read]                         # token = [tenants]
    "fl-read-77ad10..." = ["acme"]
    "fl-read-ops-03b1..." = ["*"]
    [review]                       # token = [tenants]: reads them and labels their turns
    "fl-review-5be0c2..." = ["acme"]

    FACTLEDGER_INGEST_TOKENS="acme:fl-ingest-9f2c51...,globex:fl-ingest-d41e..."
    FACTLEDGER_READ_TOKENS="acme:fl-read-77ad10...,*:fl-read-ops-03b1..."
    FACTLEDGER_REVIEW_TOKENS="acme:fl-review-5be0c2..."
    FACTLEDGER_INGEST_TOKEN=...    # one token for the default tenant

A token is compared with every configured token in constant time (`hmac.compare_digest`,
no early exit), so the time of a refusal says nothing about how close a guess was.
Tokens have no names: what a token wrote is recorded under its fingerprint
(`token_fingerprint`, a SHA-256 prefix), never the token itself.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from factledger.processors.config_files import read_toml
from factledger.processors.config_keys import key_name, unknown_keys
from factledger.processors.errors import ConfigError

DEFAULT_TENANT = "default"
ALL_TENANTS = "*"
TENANT_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MIN_TOKEN_CHARS = 16
"""Shorter tokens are refused at start-up: they can be guessed."""
_TOKEN_PATTERN = re.compile(r"[\x21-\x7e]+")  # visible ASCII, as a header value carries it
_V = TypeVar("_V")


@dataclass(frozen=True)
class ReadScope:
    """The tenants one reader may see; `every` for an operator token (`*`)."""

    tenants: frozenset[str]
    every: bool = False

    def allows(self, tenant: str) -> bool:
        return self.every or tenant in self.tenants

    @property
    def default_tenant(self) -> str:
        """The tenant a request means when it names none: `default` if readable, else the
        first readable tenant by name."""
        if self.every or DEFAULT_TENANT in self.tenants or not self.tenants:
            return DEFAULT_TENANT
        return min(self.tenants)


OPEN_SCOPE = ReadScope(frozenset(), every=True)
"""What a reader may see when no read token is configured."""


@dataclass(frozen=True)
class AccessConfig:
    """Configured tokens. Empty tables mean "not required" (see the module docstring)."""

    ingest: Mapping[str, str] = field(default_factory=dict)
    read: Mapping[str, ReadScope] = field(default_factory=dict)
    review: Mapping[str, ReadScope] = field(default_factory=dict)
    """Review tokens: the tenants each may label (and read)."""

    @property
    def ingest_required(self) -> bool:
        return bool(self.ingest)

    @property
    def read_required(self) -> bool:
        """Whether the query API needs a token: read or review tokens are configured."""
        return bool(self.read or self.review)

    @property
    def tenants(self) -> frozenset[str]:
        """Every tenant the configuration names (just `default` without ingest tokens)."""
        named = set(self.ingest.values())
        for scope in (*self.read.values(), *self.review.values()):
            named |= scope.tenants
        return frozenset(named or {DEFAULT_TENANT})

    def ingest_tenant(self, authorization: str) -> str | None:
        """The tenant of a request's `Authorization` header; None: refuse it (401)."""
        if not self.ingest:
            return DEFAULT_TENANT
        return _lookup(self.ingest, authorization)

    def read_scope(self, authorization: str) -> ReadScope | None:
        """What the bearer of `authorization` may read: its read tenants and its review
        tenants; None: refuse it (401)."""
        if not self.read_required:
            return OPEN_SCOPE
        read = _lookup(self.read, authorization)
        review = _lookup(self.review, authorization)
        if read is None or review is None:
            return read or review
        return ReadScope(read.tenants | review.tenants, every=read.every or review.every)

    def review_scope(self, authorization: str) -> ReadScope | None:
        """The tenants the bearer of `authorization` may label and withdraw labels of;
        None: it holds no review token (403 once `read_scope` let it in)."""
        if not self.read_required:
            return OPEN_SCOPE
        return _lookup(self.review, authorization)

    @classmethod
    def load(
        cls,
        *,
        file: Path | None = None,
        ingest_env: str = "",
        read_env: str = "",
        review_env: str = "",
        single_ingest_token: str = "",
    ) -> AccessConfig:
        """Merge the token file and the environment values. Raises ConfigError naming the
        source of a malformed entry, a short token, or a token given two tenants."""
        ingest: dict[str, str] = {}
        read: dict[str, set[str]] = {}
        review: dict[str, set[str]] = {}
        if file is not None:
            file_ingest, file_read, file_review = _read_file(file)
            _merge_ingest(ingest, file_ingest, str(file))
            _merge_read(read, file_read, str(file))
            _merge_read(review, file_review, str(file))
        _merge_ingest(ingest, _pairs(ingest_env, "FACTLEDGER_INGEST_TOKENS"), "environment")
        _merge_read(read, _pairs(read_env, "FACTLEDGER_READ_TOKENS"), "environment")
        _merge_read(review, _pairs(review_env, "FACTLEDGER_REVIEW_TOKENS"), "environment")
        if single_ingest_token:
            _merge_ingest(
                ingest, [(DEFAULT_TENANT, single_ingest_token)], "FACTLEDGER_INGEST_TOKEN"
            )
        return cls(ingest=ingest, read=_scopes(read), review=_scopes(review))


def token_fingerprint(authorization: str) -> str:
    """Who a token is, in records and logs: `sha256:` and the first 12 hex digits of the
    bearer token's SHA-256; '' without a bearer token (an open API). Tokens are long and
    random, so the prefix names one without helping to guess it."""
    given = _bearer(authorization)
    if not given:
        return ""
    return "sha256:" + hashlib.sha256(given).hexdigest()[:12]


API_OPEN_VARIABLE = "FACTLEDGER_API_OPEN"
_READ_OPTIONS = (
    "set FACTLEDGER_READ_TOKENS or FACTLEDGER_REVIEW_TOKENS (or a [read] or [review]"
    " table in FACTLEDGER_TOKENS_FILE), or set"
    f" {API_OPEN_VARIABLE}=1 to leave the query API open to everyone who can reach the port"
)


def check_query_access(config: AccessConfig, api_open: bool | None) -> None:
    """Refuse a configuration that would leave the query API open by accident (the table
    in the module docstring). `api_open` is FACTLEDGER_API_OPEN: None when unset. Raises
    ConfigError naming both ways out."""
    if config.read_required:
        if api_open:
            raise ConfigError(
                f"{API_OPEN_VARIABLE}=1 contradicts the read or review tokens configured: unset"
                f" {API_OPEN_VARIABLE} to require them, or remove them to open the query API"
            )
        return
    if api_open is False:
        raise ConfigError(
            f"{API_OPEN_VARIABLE}=0 asks for a closed query API, but no read token is"
            f" configured: {_READ_OPTIONS}"
        )
    if api_open is None and config.ingest_required:
        raise ConfigError(
            "ingest tokens are configured but no read token: the query API would be open"
            f" to everyone; {_READ_OPTIONS}"
        )


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the port on this machine (`localhost`, 127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def exposure_warning(config: AccessConfig, host: str) -> str | None:
    """The start-up warning for a query API without read tokens listening beyond
    loopback; None when the API needs a token or the port stays on this machine."""
    if config.read_required or is_loopback(host):
        return None
    return (
        f"the query API is open (no read token) and the service listens on {host}: anyone"
        " who can reach the port reads every tenant's turns; set FACTLEDGER_READ_TOKENS,"
        " or bind to 127.0.0.1"
    )


def _scopes(tokens: Mapping[str, set[str]]) -> dict[str, ReadScope]:
    return {
        token: ReadScope(frozenset(t - {ALL_TENANTS}), every=ALL_TENANTS in t)
        for token, t in tokens.items()
    }


def _bearer(authorization: str) -> bytes:
    scheme, _, given = authorization.strip().partition(" ")
    return given.strip().encode() if scheme.lower() == "bearer" else b""


def _lookup(table: Mapping[str, _V], authorization: str) -> _V | None:
    offered = _bearer(authorization)
    found: _V | None = None
    for token, value in table.items():
        # Every token is compared, whatever matched before: constant work per request.
        if hmac.compare_digest(offered, token.encode()) and offered:
            found = value
    return found


_Pairs = list[tuple[str, str]]


def _read_file(path: Path) -> tuple[_Pairs, _Pairs, _Pairs]:
    """The (tenant, token) pairs of the [ingest], [read] and [review] tables."""
    data = read_toml(path, "the token file")
    unknown = set(data) - {"ingest", "read", "review"}
    if unknown:
        found = unknown_keys(unknown).replace("keys", "sections")
        raise ConfigError(f"{path}: {found}; use [ingest], [read] and [review]")
    ingest_table = _table(data.get("ingest", {}), path, "ingest")
    ingest: _Pairs = []
    for token, tenant in ingest_table.items():
        if not isinstance(tenant, str):
            raise ConfigError(f"{path}: [ingest] values are tenant names (strings)")
        ingest.append((tenant, token))
    return ingest, _tenant_lists(data, path, "read"), _tenant_lists(data, path, "review")


def _tenant_lists(data: Mapping[str, object], path: Path, name: str) -> _Pairs:
    pairs: _Pairs = []
    for token, tenants in _table(data.get(name, {}), path, name).items():
        names = [tenants] if isinstance(tenants, str) else tenants
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{path}: [{name}] values are lists of tenant names")
        pairs.extend((tenant, token) for tenant in names)
    return pairs


def _table(value: object, path: Path, name: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{name}] must be a table of token = ...")
    return value


def _pairs(raw: str, variable: str) -> list[tuple[str, str]]:
    """`tenant:token,tenant:token` as (tenant, token) pairs."""
    pairs = []
    for item in raw.split(","):
        if not item.strip():
            continue
        tenant, sep, token = item.strip().partition(":")
        if not sep:
            # The entry itself is not shown: without its colon it may be a bare token.
            raise ConfigError(f"{variable}: entries are tenant:token (one has no ':')")
        pairs.append((tenant, token))
    return pairs


def _check(tenant: str, token: str, source: str, *, allow_all: bool) -> None:
    if not (TENANT_PATTERN.fullmatch(tenant) or (allow_all and tenant == ALL_TENANTS)):
        # Named only when it reads as a name: a token and a tenant swapped by mistake
        # would otherwise print the token.
        raise ConfigError(
            f"{source}: tenant {key_name(tenant)} must be 1-64 letters, digits, '_', '.', '-'"
        )
    if len(token) < MIN_TOKEN_CHARS or not _TOKEN_PATTERN.fullmatch(token):
        raise ConfigError(
            f"{source}: the token of tenant {tenant!r} must be at least {MIN_TOKEN_CHARS}"
            " visible ASCII characters"
        )


def _merge_ingest(into: dict[str, str], pairs: Iterable[tuple[str, str]], source: str) -> None:
    for tenant, token in pairs:
        _check(tenant, token, source, allow_all=False)
        if into.get(token, tenant) != tenant:
            raise ConfigError(f"{source}: one ingest token is given two tenants")
        into[token] = tenant


def _merge_read(into: dict[str, set[str]], pairs: Iterable[tuple[str, str]], source: str) -> None:
    for tenant, token in pairs:
        _check(tenant, token, source, allow_all=True)
        into.setdefault(token, set()).add(tenant)
