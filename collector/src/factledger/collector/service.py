"""The service's long-lived parts, as the routes reach them.

The lifespan (`collector.app`) builds one `Service` and keeps it on `app.state.service`.
Routes take it, or the part they need, as a typed dependency rather than reading the
untyped `request.app.state`, so every use is type-checked and a test may override one
(`app.dependency_overrides`). The dependencies are coroutines: FastAPI runs a plain
function dependency in a worker thread, a hop the ingest path does not need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from factledger.collector.ingest.base import Ingest
from factledger.collector.ingest.in_flight import InFlightBytes
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store


@dataclass
class Service:
    """What the routes need; stored on `app.state.service`."""

    settings: ServiceSettings
    store: Store
    pipeline: Pipeline
    metrics: Metrics
    bodies: InFlightBytes
    """The bytes of request bodies held at once, shared by every transport (they run on
    the one event loop, as `InFlightBytes` requires)."""


def service_of(request: Request) -> Service:
    """The app's `Service` (set by the lifespan before any request is served)."""
    service: Service = request.app.state.service
    return service


async def current_service(request: Request) -> Service:
    """`service_of`, as a dependency."""
    return service_of(request)


async def current_ingest(request: Request) -> Ingest:
    """The pipeline, as the receiver sees it."""
    return service_of(request).pipeline


CurrentService = Annotated[Service, Depends(current_service)]
CurrentIngest = Annotated[Ingest, Depends(current_ingest)]
