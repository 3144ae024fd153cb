"""How one HTTP exchange of an export target ends, in one table.

    answer or failure                         error
    2xx                                       none: taken
    408, 425, 429, 500, 502, 503, 504         TargetUnavailable (Retry-After honoured)
    any other 5xx                             TargetUnavailable
    timeout, refused or reset connection      TargetUnavailable
    400, 401, 403, 404, 409, 413, 422, ...    TargetRefused (any other answer)

A target may read one status otherwise where its product means something else by it
(Phoenix answers 404 for a span it has not received yet); it says so where it sends.
Reasons name the target and the status, never a header or a body: a body may echo the
credentials or the text that was sent.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Collection, Mapping

import httpx

from factledger.collector.export.base import ExportError, TargetRefused, TargetUnavailable

RETRYABLE_STATUSES: frozenset[int] = frozenset(
    {
        408,  # the server gave up waiting for the request: try again
        425,  # too early: a replay the server would not risk yet
        429,  # throttled: back off, honouring Retry-After
        500,  # a failure of the server's own
        502,  # a proxy in front of the target could not reach it
        503,  # overloaded or starting: back off, honouring Retry-After
        504,  # a proxy in front of the target timed out
    }
)

MAX_RETRY_AFTER_SECONDS = 3600.0
"""A Retry-After beyond an hour is read as an hour: the outbox keeps its own limits."""


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None
    when there is none or it cannot be read."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return min(float(text), MAX_RETRY_AFTER_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when.timestamp() - now()), MAX_RETRY_AFTER_SECONDS)


def error_for_status(
    target: str,
    status: int,
    headers: Mapping[str, str],
    retryable: Collection[int] = (),
) -> ExportError | None:
    """The error an answer with `status` means for `target`, or None when it was taken.

    `retryable` adds statuses the target's product uses for a passing condition.
    """
    if 200 <= status < 300:
        return None
    reason = f"{target} answered HTTP {status}"
    if status in RETRYABLE_STATUSES or status >= 500 or status in retryable:
        return TargetUnavailable(reason, parse_retry_after(headers.get("retry-after")))
    return TargetRefused(reason)


def check_answer(
    target: str, response: httpx.Response, retryable: Collection[int] = ()
) -> httpx.Response:
    """`response` when it was taken; else raise what its status means."""
    error = error_for_status(target, response.status_code, response.headers, retryable)
    if error is not None:
        raise error
    return response


def error_for_transport(target: str, error: httpx.TransportError) -> TargetUnavailable:
    """A request that got no answer: slow, down or unreachable, all worth a retry."""
    if isinstance(error, httpx.TimeoutException):
        return TargetUnavailable(f"{target} did not answer in time")
    return TargetUnavailable(f"{target} could not be reached ({type(error).__name__})")


class Deadline:
    """The time left of one `deliver` call, which may send several requests: each
    request gets what is left, so the batch as a whole keeps `timeout_seconds`."""

    def __init__(
        self, target: str, seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._target = target
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> httpx.Timeout:
        """An httpx timeout of what is left; raise `TargetUnavailable` when nothing is."""
        left = self._end - self._clock()
        if left <= 0:
            raise TargetUnavailable(f"{self._target} did not take the batch in time")
        return httpx.Timeout(left)


def send(
    target: str,
    client: httpx.Client,
    request: httpx.Request,
    deadline: Deadline,
    retryable: Collection[int] = (),
) -> httpx.Response:
    """Send `request` within `deadline`; the answer when taken, else the mapped error."""
    request.extensions["timeout"] = deadline.remaining().as_dict()
    try:
        response = client.send(request)
    except httpx.TransportError as error:
        raise error_for_transport(target, error) from error
    return check_answer(target, response, retryable)
