"""A plugin that asks a JSON lookup service whether a record exists: tickets, orders.

Loaded like any plugin, with its options:

    load_plugin("factledger.verifiers.json_lookup:JsonLookupVerifier", {
        "url": "https://tickets.example.com/api/tickets/{name}",
        "kinds": ["record"],                 # subject kinds it answers (default: record)
        "pattern": "^OPS-\\d+$",             # names it answers (default: every name)
        "headers": {"Authorization": "Bearer ..."},
        "exists_field": "found",             # optional: a 200 must carry it truthy
    }, name="tickets")

`{name}` is replaced by the subject's name, percent-encoded whole (a `/` in it cannot
reach another path). A GET to the URL, through the same address guard as links (the
address keys of `address_guard` apply: a service on loopback or a private network needs
`allowed_networks` or `allow_private`, and its host in `allow_hosts` for a port other
than 80/443), no redirect followed:

    404                      the record does not exist: exists False
    200 (any 2xx)            it exists, or, with `exists_field`, exists when the JSON
                             field (`found`, `data.exists`) is truthy; a body that is no
                             JSON object or lacks the field: unverifiable `ambiguous`
    429, 5xx, timeout, down  unverifiable, retryable
    anything else            unverifiable (`http 401`: the credentials, not the record)

`headers` are sent and never shown: the evidence names the method and URL only.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from factledger.processors.model import Turn
from factledger.processors.verification.base import Subject, SubjectKind

from .address_guard import POLICY_KEYS, AddressPolicy
from .fetch_errors import FetchError, NameNotFound
from .guarded_http import product_user_agent, request
from .plugins import PluginAnswer
from .settings_values import read_int, read_str, read_str_list, read_str_map, reject_unknown

_KEYS = ("url", "kinds", "pattern", "headers", "exists_field", "name", "max_body_bytes")
_USER_AGENT = product_user_agent("FactLedger-Lookup")


class JsonLookupVerifier:
    """A plugin check (see `plugins`) built from its options; ValueError names a bad key."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        reject_unknown(options, (*POLICY_KEYS, *_KEYS), "json_lookup")
        self.url = read_str(options, "url", "")
        if "{name}" not in self.url or urlsplit(self.url).scheme not in ("http", "https"):
            raise ValueError("url: expected an http(s) URL with {name} in it")
        try:
            self.kinds = frozenset(
                SubjectKind(kind) for kind in read_str_list(options, "kinds", ("record",))
            )
        except ValueError:
            raise ValueError(f"kinds: expected names of {[k.value for k in SubjectKind]}") from None
        pattern = read_str(options, "pattern", "")
        try:
            self.pattern = re.compile(pattern) if pattern else None
        except re.error as error:
            raise ValueError(f"pattern: not a regular expression: {error}") from None
        self._headers = read_str_map(options, "headers")
        self.exists_field = read_str(options, "exists_field", "")
        self.name = read_str(options, "name", "json_lookup")
        self.max_body_bytes = read_int(options, "max_body_bytes", 64 * 1024, minimum=1)
        self.policy = AddressPolicy.from_mapping(options)

    def __repr__(self) -> str:
        # The headers (credentials) stay out of every repr and log line.
        return f"JsonLookupVerifier(url={self.url!r}, name={self.name!r})"

    def __call__(self, subject: Subject, turn: Turn, timeout: float) -> PluginAnswer | None:
        if subject.kind not in self.kinds:
            return None
        if self.pattern is not None and not self.pattern.search(subject.name):
            return None
        if subject.name.strip(".") == "" or any(ord(c) < 0x20 for c in subject.name):
            return PluginAnswer(exists=None, reason="unsafe name")
        url = self.url.replace("{name}", quote(subject.name, safe=""))
        query = f"GET {url}"
        try:
            response = request(
                "GET",
                urlsplit(url),
                self.policy,
                deadline=time.monotonic() + timeout,
                headers={"User-Agent": _USER_AGENT, "Accept": "application/json", **self._headers},
                max_body=self.max_body_bytes,
            )
        except NameNotFound as error:
            # The service's own name: it is unreachable, which says nothing of the record.
            return PluginAnswer(
                exists=None, query=query, answer=error.host, reason="unreachable", retryable=True
            )
        except FetchError as error:
            return PluginAnswer(
                exists=None,
                query=query,
                answer=error.detail,
                reason=error.reason,
                retryable=error.retryable,
            )
        status_line = f"{response.status} {response.reason}".strip()
        if response.status == 404:
            return PluginAnswer(exists=False, query=query, answer=status_line)
        if 200 <= response.status < 300:
            if not self.exists_field:
                return PluginAnswer(exists=True, query=query, answer=status_line)
            return self._read_field(response.body, response.truncated, query, status_line)
        return PluginAnswer(
            exists=None,
            query=query,
            answer=status_line,
            reason=f"http {response.status}",
            retryable=response.status == 429 or response.status >= 500,
        )

    def _read_field(self, body: bytes, truncated: bool, query: str, status: str) -> PluginAnswer:
        value: Any = None
        if not truncated:
            with contextlib.suppress(ValueError):
                value = json.loads(body)
        for part in self.exists_field.split("."):
            if not isinstance(value, dict) or part not in value:
                return PluginAnswer(
                    exists=None,
                    query=query,
                    answer=f"{status}; no {self.exists_field!r} in the body",
                    reason="ambiguous",
                )
            value = value[part]
        shown = json.dumps(value)[:100]
        return PluginAnswer(
            exists=bool(value), query=query, answer=f"{status}; {self.exists_field}={shown}"
        )
