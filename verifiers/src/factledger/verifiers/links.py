"""Links: does the URL a reply names exist? Asked over HTTP(S) through the address guard.

A HEAD request (a GET, read up to `max_body_bytes`, when HEAD answers 405 or 501 or fails)
to the URL, following redirects by hand up to `max_redirects`, each hop checked by the
address guard (`address_guard`) again. What the answer means:

    404, 410, a host name that does not resolve   the link does not exist: confirmed
                                                  (a claimed-absent link: refuted)
    2xx, after any redirects                      it exists: refuted
    401, 403                                      it exists, access is denied: refuted.
                                                  A server answers them for a resource it
                                                  will not show; one that does not exist
                                                  is a 404 even behind a login on the
                                                  sites agents cite.
    429, 5xx, timeout, refused or reset           unverifiable, retryable
    a redirect loop, too many redirects, any
    other status, a refused address               unverifiable

The evidence: `source` `link`, `query` every request sent (`HEAD https://a/x -> GET
https://a/x -> HEAD https://a/y`), `answer` the last status line and URL. Answers are
cached by URL (`cache_ttl_seconds`, shorter for unverifiable ones) and requests to one
host are spaced (`per_host_per_second`): a reply citing one site ten times does not knock
ten times at once.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
    existence_outcome,
)

from .address_guard import POLICY_KEYS, AddressPolicy
from .answer_cache import AnswerCache
from .fetch_errors import FetchError, NameNotFound
from .guarded_http import Response, product_user_agent, request, target_of
from .rate_limit import HostRateLimiter
from .settings_values import read_int, read_number, read_str, reject_unknown

DEFAULT_USER_AGENT = product_user_agent("FactLedger-LinkCheck")
_MAX_EVIDENCE_CHARS = 2000
# HEAD answers these when the server does not do HEAD: ask again with GET.
_HEAD_UNSUPPORTED = frozenset({405, 501})
_ABSENT = frozenset({404, 410})
# The resource is there, the server will not show it to us.
_EXISTS_DENIED = frozenset({401, 403})
_NOT_REDIRECTS = frozenset({300, 304})
_HEAD_FAILURES_WORTH_A_GET = frozenset({"unreachable: connection reset", "protocol error"})


@dataclass(frozen=True)
class LinkSettings:
    """How links are checked. `timeout_seconds` caps each check on top of the caller's
    timeout (the smaller wins)."""

    policy: AddressPolicy = field(default_factory=AddressPolicy)
    timeout_seconds: float = 10.0
    max_redirects: int = 5
    max_body_bytes: int = 64 * 1024
    cache_ttl_seconds: float = 600.0
    unverifiable_ttl_seconds: float = 30.0
    per_host_per_second: float = 5.0
    user_agent: str = DEFAULT_USER_AGENT
    resolver_canary: str = "example.com"
    """A name that must resolve before a name that does not counts as invented: on a
    machine without working DNS every name fails to resolve. Empty: trust the resolver."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> LinkSettings:
        """Settings from a `[verification.links]`-like table; ValueError names a bad key."""
        reject_unknown(data, (*POLICY_KEYS, *_LINK_KEYS), "links")
        return cls(
            policy=AddressPolicy.from_mapping(data),
            timeout_seconds=read_number(data, "timeout_seconds", 10.0, minimum=0.01),
            max_redirects=read_int(data, "max_redirects", 5),
            max_body_bytes=read_int(data, "max_body_bytes", 64 * 1024),
            cache_ttl_seconds=read_number(data, "cache_ttl_seconds", 600.0),
            unverifiable_ttl_seconds=read_number(data, "unverifiable_ttl_seconds", 30.0),
            per_host_per_second=read_number(data, "per_host_per_second", 5.0, minimum=0.01),
            user_agent=read_str(data, "user_agent", DEFAULT_USER_AGENT) or DEFAULT_USER_AGENT,
            resolver_canary=read_str(data, "resolver_canary", "example.com"),
        )


_CANARY_SECONDS = 60.0

_LINK_KEYS = (
    "timeout_seconds",
    "max_redirects",
    "max_body_bytes",
    "cache_ttl_seconds",
    "unverifiable_ttl_seconds",
    "per_host_per_second",
    "user_agent",
    "resolver_canary",
)


@dataclass(frozen=True)
class _Probe:
    """What asking about one URL found, before it meets a subject (the cached part)."""

    exists: bool | None
    query: str
    answer: str
    checked_at: float
    duration_ms: float
    reason: str = ""
    retryable: bool = False


class _Hops:
    """The requests of one check, in order: its `query`."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def add(self, method: str, url: SplitResult) -> None:
        self.sent.append(f"{method} {urlunsplit(url)}")

    def text(self) -> str:
        return _bounded(" -> ".join(self.sent))


class LinkVerifier:
    """Checks URL subjects over HTTP(S). Thread-safe: one instance serves every check, so
    its cache and rate limit are shared. `tls` replaces the default TLS context (a
    private CA bundle)."""

    def __init__(
        self, settings: LinkSettings | None = None, *, tls: ssl.SSLContext | None = None
    ) -> None:
        self.settings = settings or LinkSettings()
        self._tls = tls
        self._cache: AnswerCache[_Probe] = AnswerCache()
        self._limiter = HostRateLimiter(self.settings.per_host_per_second)
        self._canary: tuple[float, bool] | None = None

    @property
    def name(self) -> str:
        return "link"

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        if subject.kind is not SubjectKind.URL:
            return None
        try:
            url = urlsplit(subject.name.strip())
        except ValueError:  # `http://[::1` and the like: a token, not an address
            return _verification(subject, _unsafe_probe())
        if url.scheme.lower() not in ("http", "https"):
            return None
        url = url._replace(fragment="")
        key = urlunsplit(url)
        probe = self._cache.get(key)
        if probe is None:
            probe = self._probe(url, min(timeout, self.settings.timeout_seconds))
            if probe.reason != "rate limited":
                settled = probe.exists is not None
                ttl = self.settings.cache_ttl_seconds
                self._cache.put(
                    key, probe, ttl if settled else self.settings.unverifiable_ttl_seconds
                )
        return _verification(subject, probe)

    def _probe(self, url: SplitResult, timeout: float) -> _Probe:
        checked_at = time.time()
        started = time.monotonic()
        hops = _Hops()
        exists: bool | None = None
        reason, retryable, answer = "", False, ""
        try:
            exists, reason, retryable, answer = self._follow(url, started + timeout, hops)
        except NameNotFound as error:
            if self._resolver_works():
                exists, answer = False, f"name not found: {error.host}"
            else:
                canary = self.settings.resolver_canary
                reason, retryable = "resolver offline", True
                answer = f"name not found: {error.host}, nor the canary {canary}"
        except FetchError as error:
            reason, retryable = error.reason, error.retryable
            answer = error.detail
        except ValueError:  # a Location no URL parser takes
            reason = "unsafe name"
        return _Probe(
            exists=exists,
            query=hops.text(),
            answer=_bounded(answer),
            checked_at=checked_at,
            duration_ms=(time.monotonic() - started) * 1000.0,
            reason=reason,
            retryable=retryable,
        )

    def _resolver_works(self) -> bool:
        """The canary resolves (asked at most once a minute)."""
        canary = self.settings.resolver_canary
        if not canary:
            return True
        now = time.monotonic()
        if self._canary is not None and now - self._canary[0] < _CANARY_SECONDS:
            return self._canary[1]
        try:
            socket.getaddrinfo(canary, None)
            works = True
        except OSError:
            works = False
        self._canary = (now, works)
        return works

    def _follow(
        self, url: SplitResult, deadline: float, hops: _Hops
    ) -> tuple[bool | None, str, bool, str]:
        """Exists, reason, retryable, answer: the redirect chain from `url` to its end."""
        seen = {urlunsplit(url)}
        answer = ""
        for _ in range(self.settings.max_redirects + 1):
            response = self._head_then_get(url, deadline, hops)
            answer = f"{response.status} {response.reason} {urlunsplit(url)}".strip()
            status = response.status
            if 300 <= status < 400 and status not in _NOT_REDIRECTS:
                location = response.headers.get("location", "").strip()
                if not location:
                    return None, "redirect without location", False, answer
                url = urlsplit(urljoin(urlunsplit(url), location))._replace(fragment="")
                if urlunsplit(url) in seen:
                    return None, "redirect loop", False, answer
                seen.add(urlunsplit(url))
                continue
            if 200 <= status < 300 or status in _EXISTS_DENIED:
                return True, "", False, answer
            if status in _ABSENT:
                return False, "", False, answer
            retryable = status == 429 or status >= 500
            return None, f"http {status}", retryable, answer
        return None, "too many redirects", False, answer

    def _head_then_get(self, url: SplitResult, deadline: float, hops: _Hops) -> Response:
        try:
            response = self._send("HEAD", url, deadline, hops)
        except FetchError as error:
            # A server that drops HEAD may still answer GET; a slow, refused or unknown
            # one will not.
            if error.reason not in _HEAD_FAILURES_WORTH_A_GET:
                raise
            return self._send("GET", url, deadline, hops)
        if response.status in _HEAD_UNSUPPORTED:
            return self._send("GET", url, deadline, hops)
        return response

    def _send(self, method: str, url: SplitResult, deadline: float, hops: _Hops) -> Response:
        target_of(url)  # an unsafe URL is refused before it becomes evidence
        hops.add(method, url)
        host = f"{(url.hostname or '').lower()}:{url.port or url.scheme}"
        if not self._limiter.acquire(host, deadline):
            raise FetchError("rate limited", retryable=True, detail=url.hostname or "")
        return request(
            method,
            url,
            self.settings.policy,
            deadline=deadline,
            headers={"User-Agent": self.settings.user_agent, "Accept": "*/*"},
            max_body=self.settings.max_body_bytes,
            tls=self._tls,
        )


def _unsafe_probe() -> _Probe:
    return _Probe(None, "", "", time.time(), 0.0, reason="unsafe name")


def _bounded(text: str) -> str:
    return text if len(text) <= _MAX_EVIDENCE_CHARS else text[: _MAX_EVIDENCE_CHARS - 3] + "..."


def _verification(subject: Subject, probe: _Probe) -> Verification:
    outcome = (
        VerificationOutcome.UNVERIFIABLE
        if probe.exists is None
        else existence_outcome(subject, probe.exists)
    )
    return Verification(
        subject=subject,
        outcome=outcome,
        source="link",
        query=probe.query,
        answer=probe.answer,
        checked_at=probe.checked_at,
        duration_ms=probe.duration_ms,
        reason=probe.reason,
        retryable=probe.retryable,
    )
