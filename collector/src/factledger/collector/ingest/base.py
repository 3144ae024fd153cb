"""The seam the receiver sees: `Ingest`, and the refusals its `submit` raises.

A receiver asks `closed`, `store_writable` and `has_capacity` before it reads a body, hands the
decoded spans to `submit`, and answers what `submit` raised with the outcome its class
declares (`collector.refusals`). Refusals are not drops: nothing of a refused request was
acknowledged.

Refusals (defined in `collector.refusals`, re-exported here)::

    PipelineFull        the backlog holds as much as it may; retry later      503
    RequestTooLarge     more spans than the backlog may ever hold             413
    PipelineClosed      shutting down                                         503
    StoreUnavailable    the store cannot write now; what was taken is held    503
    WalUnavailable      (collector.ingest.wal) the log cannot be written             503
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from factledger.collector.refusals import PipelineClosed as PipelineClosed
from factledger.collector.refusals import PipelineFull as PipelineFull
from factledger.collector.refusals import RequestTooLarge as RequestTooLarge
from factledger.collector.refusals import StoreUnavailable as StoreUnavailable
from factledger.processors.spans import SpanRecord


class Ingest(Protocol):
    """What the receiver needs of the pipeline. Every member is safe to call from any
    thread, and none blocks on storage or validation."""

    @property
    def ready(self) -> bool:
        """Started, not closing, and every stage running (False while one restarts)."""
        ...

    @property
    def closed(self) -> bool:
        """Shutting down: no request is taken any more (`PipelineClosed`)."""
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
