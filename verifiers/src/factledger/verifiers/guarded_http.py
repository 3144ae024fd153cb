"""One HTTP request through the address guard, bounded in time and size.

`request` checks the target with an `AddressPolicy`, resolves and checks every address,
then connects to a checked address itself (the Host header and the TLS server name and
certificate check use the host name), sends one request and reads at most `max_body`
bytes of the answer. It follows no redirect: the caller decides about each hop and sends
it through here again, so every hop is checked.

The whole exchange ends by `deadline` (a `time.monotonic()` value): the socket timeout
bounds each step, and a timer shuts the socket at the deadline so a server that trickles
bytes cannot stretch it. Failures come out as `fetch_errors` values, never as the
`OSError`/`http.client` zoo.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from urllib.parse import SplitResult

from .address_guard import AddressPolicy, resolve_checked
from .fetch_errors import FetchError

_CHUNK = 16 * 1024


def product_user_agent(product: str) -> str:
    """The User-Agent a source sees: the product, its version and where to read about it,
    so an operator who finds it in a log knows who asked and why."""
    try:
        version = metadata.version("factledger")
    except metadata.PackageNotFoundError:
        version = "0"
    return f"{product}/{version} (+https://github.com/factledger/factledger)"


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-cased names; a repeated header keeps its first value."""
    body: bytes = b""
    truncated: bool = False
    """True when the body was longer than `max_body` and was cut there."""


def target_of(url: SplitResult) -> tuple[str, str, int, str]:
    """Scheme, host, port and request target (path and query) of an http(s) URL.

    Raises FetchError `unsafe name` for a URL no request should be made from: no host,
    a bad port, credentials in it, or characters that could split a request line.
    """
    scheme = url.scheme.lower()
    try:
        port = url.port
    except ValueError:
        raise FetchError("unsafe name", retryable=False, detail="port") from None
    host = url.hostname or ""
    if not host or url.username is not None or url.password is not None:
        raise FetchError("unsafe name", retryable=False, detail="host")
    target = url.path or "/"
    if url.query:
        target += "?" + url.query
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in host + target):
        raise FetchError("unsafe name", retryable=False, detail="control character")
    try:
        # Non-ASCII names go on the wire in their IDNA form.
        host = host.encode("idna").decode("ascii")
        target.encode("ascii")
    except UnicodeError:
        raise FetchError("unsafe name", retryable=False, detail="encoding") from None
    return scheme, host, port or (443 if scheme == "https" else 80), target


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection to a fixed, already checked address for a host name."""

    def __init__(
        self, host: str, port: int, address: str, timeout: float, tls: ssl.SSLContext | None
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address
        self._tls = tls
        self.aborted = False
        # The Host header leaves the port out when it is the scheme's own.
        self.default_port = 443 if tls is not None else 80

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        if self._tls is not None:
            sock = self._tls.wrap_socket(sock, server_hostname=self.host)
        self.sock = sock

    def abort(self) -> None:
        self.aborted = True
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def request(
    method: str,
    url: SplitResult,
    policy: AddressPolicy,
    *,
    deadline: float,
    headers: Mapping[str, str],
    max_body: int,
    tls: ssl.SSLContext | None = None,
) -> Response:
    """Send `method` to `url` and return the response; raise a `FetchError` otherwise."""
    scheme, host, port, target = target_of(url)
    policy.check_target(scheme, host, port)
    addresses = resolve_checked(host, port, policy, _remaining(deadline))
    context = (tls or ssl.create_default_context()) if scheme == "https" else None
    last: FetchError | None = None
    for address in addresses:
        try:
            return _exchange(
                method, host, port, address, target, context, headers, deadline, max_body
            )
        except FetchError as error:
            # Another address may answer when this one refuses; a slow one used the time.
            if error.reason != "unreachable: connection refused":
                raise
            last = error
    assert last is not None
    raise last


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchError("timeout", retryable=True)
    return left


def _exchange(
    method: str,
    host: str,
    port: int,
    address: str,
    target: str,
    tls: ssl.SSLContext | None,
    headers: Mapping[str, str],
    deadline: float,
    max_body: int,
) -> Response:
    connection = _PinnedConnection(host, port, address, _remaining(deadline), tls)
    timer = threading.Timer(_remaining(deadline), connection.abort)
    timer.daemon = True
    timer.start()
    try:
        connection.request(method, target, headers={**headers, "Connection": "close"})
        answer = connection.getresponse()
        body = b"" if method == "HEAD" else _read_bounded(answer, max_body + 1)
        if connection.aborted:
            # The timer shut the socket mid-body: what was read is cut by time, not size.
            raise FetchError("timeout", retryable=True)
        found: dict[str, str] = {}
        for name, value in answer.getheaders():
            found.setdefault(name.lower(), value)
        return Response(
            status=answer.status,
            reason=answer.reason,
            headers=found,
            body=body[:max_body],
            truncated=len(body) > max_body,
        )
    except FetchError:
        raise
    except TimeoutError:
        raise FetchError("timeout", retryable=True) from None
    except ConnectionRefusedError:
        raise FetchError("unreachable: connection refused", retryable=True) from None
    except ssl.SSLCertVerificationError as error:
        raise FetchError("tls: certificate", retryable=False, detail=error.verify_message) from None
    except ssl.SSLError:
        raise FetchError("tls: handshake", retryable=True) from None
    except (ConnectionError, http.client.RemoteDisconnected, OSError) as error:
        if connection.aborted:
            raise FetchError("timeout", retryable=True) from None
        raise FetchError(
            "unreachable: connection reset", retryable=True, detail=type(error).__name__
        ) from None
    except http.client.HTTPException as error:
        if connection.aborted:
            raise FetchError("timeout", retryable=True) from None
        raise FetchError("protocol error", retryable=False, detail=type(error).__name__) from None
    finally:
        timer.cancel()
        connection.close()


def _read_bounded(answer: http.client.HTTPResponse, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while size < limit:
        chunk = answer.read(min(_CHUNK, limit - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)
