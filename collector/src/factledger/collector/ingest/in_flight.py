"""The bytes of request bodies held by the receiver at once, shared fairly.

A request's share grows as its body arrives (never reserved from its Content-Length),
so a client that declares a large body and sends it slowly holds only what it has sent.
Bytes are taken while they fit under the bound; a request alone always gets its bytes,
so a body within `max_body_bytes` is never refused for good. When a request's bytes do
not fit:

| the request, with these bytes | what happens |
|---|---|
| past its fair share | it is refused: 503, retry later |
| within its fair share | others past theirs, still reading, are refused (503), largest first |

and if the bytes still do not fit, the request itself is refused.

A fair share is the bound split evenly between the tenants holding bytes (this one
counted), and a tenant's share split evenly between its requests. So one connection,
or one tenant with many connections, cannot hold more than its share while another
waits for room. A request refused this way answers 503 with Retry-After: it was not
acknowledged, and the same request sent again is taken once there is room. A request
already decoding or handing its spans over is never refused (its spans may be written
ahead already).

Runs on the event loop only: no lock.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from factledger.collector.refusals import BodiesInFlight

EVICTED = "its share of the bodies in flight was needed by another request"


class Share:
    """One request's share of an `InFlightBytes`, given back all at once."""

    def __init__(self, budget: InFlightBytes, tenant: str, task: asyncio.Task[object] | None):
        self._budget = budget
        self.tenant = tenant
        self.task = task
        self.amount = 0
        self.reading = True
        """Still reading its body: it may be refused to make room for another."""
        self.evicted = False

    def take(self, amount: int) -> None:
        """Count `amount` more bytes, or raise BodiesInFlight having taken nothing."""
        self._budget.take(self, amount)

    def release(self) -> None:
        self._budget.release(self)


class InFlightBytes:
    """The bound (`limit` bytes) and the shares of the requests holding bytes now."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._shares: set[Share] = set()

    def share(self, tenant: str) -> Share:
        """A new request's share (empty), refused in its own task when evicted."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no event loop: nothing to cancel
            task = None
        share = Share(self, tenant, task)
        self._shares.add(share)
        return share

    def take(self, share: Share, amount: int) -> None:
        if self.held + amount > self.limit and self.held > share.amount:
            self._make_room(share, amount)
        self.held += amount
        share.amount += amount

    def release(self, share: Share) -> None:
        self.held -= share.amount
        share.amount = 0
        self._shares.discard(share)

    def _make_room(self, share: Share, amount: int) -> None:
        """Refuse the requests past their fair share until `amount` fits beside the
        others, or raise BodiesInFlight when `share` is past its own or it cannot fit."""
        holders = [s for s in self._shares if s.amount > 0 or s is share]
        tenant_share = self.limit / len({s.tenant for s in holders})
        requests = Counter(s.tenant for s in holders)
        tenant_held = Counter[str]()
        for s in holders:
            tenant_held[s.tenant] += s.amount

        def past_share(s: Share) -> bool:
            return (
                s.amount > tenant_share / requests[s.tenant] or tenant_held[s.tenant] > tenant_share
            )

        refusal = BodiesInFlight(f"{self.held} bytes in flight, bound {self.limit}")
        # Its own request's share only: its tenant's other requests past theirs may be
        # the ones to give way, and requests within theirs keep a tenant within its own.
        if share.amount + amount > tenant_share / requests[share.tenant]:
            raise refusal
        hogs = [s for s in holders if s is not share and s.reading and past_share(s)]
        for hog in sorted(hogs, key=lambda s: s.amount, reverse=True):
            if self.held + amount <= self.limit:
                break
            tenant_held[hog.tenant] -= hog.amount
            self._evict(hog)
        if self.held + amount > self.limit:
            raise refusal

    def _evict(self, share: Share) -> None:
        self.release(share)
        share.evicted = True
        if share.task is not None:
            share.task.cancel(EVICTED)
