"""The seam the receiver sees: `Ingest`, and the refusals its `submit` raises.

A route asks `store_writable` and `has_capacity` before it reads a body, hands the
decoded spans to `submit`, and answers what `submit` raised with the status in the
receiver's table. Refusals are not drops: nothing of a refused request was acknowledged.

Refusals::

    PipelineFull        the backlog holds as much as it may; retry later      503
    RequestTooLarge     more spans than the backlog may ever hold             413
    PipelineClosed      shutting down                                         503
    StoreUnavailable    the store cannot write now; what was taken is held    503
    WalUnavailable      (collector.wal) the log cannot be written             503
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from factledger.processors.spans import SpanRecord


class Ingest(Protocol):
    """What the receiver needs of the pipeline. Every member is safe to call from any
    thread, and none blocks on storage or validation."""

    @property
    def ready(self) -> bool:
        """Started, not closing, and every stage running (False while one restarts)."""
        ...

    @property
    def store_writable(self) -> bool:
        """False while the store cannot write (a full disk, no memory, a lost server)."""
        ...

    def has_capacity(self, request_bytes: int = 0) -> bool:
        """Room for a request of `request_bytes` (0: size unknown); asked before its body
        is read, so a request refused for room is never decoded."""
        ...

    def submit(
        self, content_type: str, tenant: str, body: bytes, spans: Sequence[SpanRecord]
    ) -> int:
        """Make the request durable and queue its spans; returns the log sequence number
        once it is in the write-ahead log (never after storage or validation). Raises one
        of the refusals above, having kept nothing of the request."""
        ...


class PipelineFull(Exception):
    """The pipeline holds as many unstored spans as it may; retry later (503)."""


class RequestTooLarge(Exception):
    """One request holds more spans than the backlog may ever hold: no retry can succeed,
    so it is refused for good (413) rather than answered 503 again and again."""

    def __init__(self, spans: int, bound: int) -> None:
        super().__init__(
            f"the request holds {spans} spans, more than the backlog bound of {bound}"
            " (FACTLEDGER_QUEUE_SPANS); split it into smaller requests or raise the bound"
        )
        self.spans = spans
        self.bound = bound


class PipelineClosed(Exception):
    """The pipeline is shutting down and takes no more requests (503)."""


class StoreUnavailable(Exception):
    """The store cannot write now (a full disk, no memory, unreachable): what was accepted
    is held until it can, and new requests are refused meanwhile; retry later (503)."""
