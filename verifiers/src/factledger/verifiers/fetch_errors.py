"""Why a request to a source gave no answer, as values the verifiers map in one place.

    FetchError(reason, retryable)   timeout, unreachable, reset, TLS or protocol failure
     ├─ Refused                     the address guard refused the host, port or address:
     │                              nothing was connected, so nothing was learnt
     └─ NameNotFound                the host name does not resolve (NXDOMAIN)

`reason` is the short text a `Verification.reason` carries (`timeout`, `refused: private
address`); `detail` says more for its `answer` (which address, which rule). Neither ever
holds a request header.
"""

from __future__ import annotations


class FetchError(Exception):
    def __init__(self, reason: str, *, retryable: bool, detail: str = "") -> None:
        super().__init__(reason if not detail else f"{reason} ({detail})")
        self.reason = reason
        self.retryable = retryable
        self.detail = detail


class Refused(FetchError):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"refused: {reason}", retryable=False, detail=detail)


class NameNotFound(FetchError):
    def __init__(self, host: str) -> None:
        super().__init__("name not found", retryable=False, detail=host)
        self.host = host
