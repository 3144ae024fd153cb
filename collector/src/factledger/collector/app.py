"""The service: one FastAPI app wiring receivers, pipeline, query API and metrics.

Everything long-lived is created in the lifespan and torn down there, in reverse order:
store, write-ahead log, pipeline (which replays the log before it reports ready), the
OTLP/gRPC receiver on its own port (`collector.ingest.grpc_receiver`, on this app's event
loop; it stops taking calls before the pipeline stops). The data directory is made
private (0700) first: it holds raw requests (collector/private_dirs.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse

from factledger.collector.access import DEFAULT_TENANT, exposure_warning
from factledger.collector.alerts.loop import AlertLoop
from factledger.collector.alerts.rules import AlertConfig, load_alert_config
from factledger.collector.api.alerts import router as alerts_router
from factledger.collector.api.docs_pages import add_docs_pages
from factledger.collector.api.export import router as export_router
from factledger.collector.api.models import (
    API_VERSION,
    RECEIVER_RESPONSES,
    ErrorBody,
    Health,
    Readiness,
    error_refs,
    error_responses,
)
from factledger.collector.api.queries import router as api_router
from factledger.collector.api.readers import operator_scope, read_scope
from factledger.collector.api.reviews import router as reviews_router
from factledger.collector.api.text_fields import validation_error
from factledger.collector.export.labels import LabelExport
from factledger.collector.export.outbox import Outbox
from factledger.collector.export.targets import build_targets
from factledger.collector.ingest.grpc_receiver import GrpcReceiver
from factledger.collector.ingest.in_flight import InFlightBytes
from factledger.collector.ingest.receiver import router as receiver_router
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.private_dirs import private_directory
from factledger.collector.request_bodies import DRAIN_BYTES, RequestBodies, body_limit
from factledger.collector.service import CurrentIngest, CurrentService, Service
from factledger.collector.serving_cap import ServingCap
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig, StoreError
from factledger.collector.verify.stage import stage_limits
from factledger.processors.runner import ValidationRunner
from factledger.processors.settings import ValidationSettings

log = logging.getLogger("factledger.service")

_STORE_UNAVAILABLE = "the store is unavailable, retry later"
_STORE_FAILED = "the store could not answer this request; the service log has the cause"
_INTERNAL = "internal error; the service log has the cause"


def create_app(
    settings: ServiceSettings, *, store: Store | None = None, wal: WriteAheadLog | None = None
) -> FastAPI:
    """Build the app. Pass `store` to share an already opened store (tests on chDB,
    where one process can open one data path), `wal` to write through a log built by the
    caller (tests whose log runs out of disk); the app closes neither."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = store is None
        private_directory(settings.data_dir)
        opened = store or Store.open(
            StoreConfig(
                dsn=settings.dsn,
                database=settings.database,
                retention_days=settings.retention_days,
                cluster=settings.cluster,
            )
        )
        validation = (
            ValidationSettings.from_toml(settings.validation_config)
            if settings.validation_config
            else ValidationSettings()
        )
        metrics = Metrics()
        bodies = InFlightBytes(settings.max_bodies_in_flight_bytes)
        metrics.gauge("factledger_bodies_in_flight_bytes", lambda: bodies.held)
        log_file = wal or WriteAheadLog(
            settings.wal_dir, segment_seconds=settings.wal_segment_seconds
        )
        exporting = settings.export
        outbox = Outbox(
            build_targets(exporting.enabled_targets),
            settings.data_dir / "export",
            exporting.limits,
            metrics,
        )
        # Records left from before the restart go out while the log replays.
        outbox.start()
        app.state.outbox = outbox
        if outbox.targets:
            app.state.label_export = LabelExport(opened, outbox.append, exporting.dashboard_url)
        pipeline = Pipeline(
            opened,
            log_file,
            ValidationRunner.from_settings(validation),
            metrics,
            grace_seconds=settings.grace_seconds,
            max_wait_seconds=settings.max_wait_seconds,
            max_pending_spans=settings.queue_spans,
            max_pending_bytes=settings.queue_bytes,
            redactor=settings.redactor,
            judge_workers=settings.judge_workers,
            verifiers=settings.verification.verifiers(),
            verification_limits=stage_limits(settings.verification),
            export=outbox.append if outbox.targets else None,
            dashboard_url=exporting.dashboard_url,
        )
        pipeline.start()
        service = app.state.service = Service(settings, opened, pipeline, metrics, bodies)
        grpc_receiver = GrpcReceiver(service)
        alert_config = load_alert_config(settings.alerts_file)
        loops = _alert_loops(settings, opened, alert_config, metrics)
        for loop in loops.values():
            loop.start()
        app.state.alert_config = alert_config
        app.state.alert_interval = settings.alert_interval_seconds
        app.state.alert_loops = loops
        log.info(
            "factledger serving on %s:%d, store %s", settings.host, settings.port, settings.dsn
        )
        if not settings.otlp_http:
            log.info("OTLP/HTTP is off (FACTLEDGER_OTLP_HTTP_ENABLED=false): gRPC only")
        verification = settings.verification
        verifying = verification.enabled and verification.sources
        # The settings file is read once here: say what it switched on, or nothing shows it.
        log.info("export: %s", ", ".join(outbox.targets) or "off")
        log.info(
            "verification: %s",
            f"{', '.join(verification.sources)}, {verification.threads} threads"
            if verifying
            else "off",
        )
        exposed = exposure_warning(settings.access, settings.host)
        if exposed:
            log.warning(exposed)
        try:
            if settings.grpc_port:
                await grpc_receiver.start()
            yield
        finally:
            await grpc_receiver.shutdown()
            for loop in loops.values():
                loop.shutdown()
            pipeline.shutdown()
            outbox.shutdown()  # after the pipeline: its last verdicts are in the outbox
            if wal is None:
                log_file.close()
            if owned:
                opened.close()

    app = FastAPI(
        title="FactLedger",
        summary="Checks LLM agents' replies against their own tool trace.",
        version=API_VERSION,
        lifespan=lifespan,
        docs_url=None,  # /docs comes from add_docs_pages: no CDN
        redoc_url=None,
    )
    add_docs_pages(app)
    app.add_exception_handler(RequestValidationError, validation_error)
    # Outermost last: a request refused at the cap has its body drained too.
    app.add_middleware(ServingCap, limit=settings.max_connections)
    app.add_middleware(
        RequestBodies,
        limit_of=body_limit(settings.max_api_body_bytes),
        drain_bytes=max(DRAIN_BYTES, settings.max_body_bytes),
    )

    @app.exception_handler(StoreError)
    async def store_failed(request: Request, exc: StoreError) -> JSONResponse:
        """503 while the store is unreachable (retry later), 500 for anything else. The
        driver's text stays in the log: it names tables, settings and server internals."""
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        if exc.retryable:
            body = ErrorBody(detail=_STORE_UNAVAILABLE)
            return JSONResponse(body.model_dump(), status_code=503, headers={"Retry-After": "5"})
        return JSONResponse(ErrorBody(detail=_STORE_FAILED).model_dump(), status_code=500)

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> JSONResponse:
        """Anything unforeseen: a fixed 500 body; the server logs the traceback."""
        return JSONResponse(ErrorBody(detail=_INTERNAL).model_dump(), status_code=500)

    if settings.otlp_http:
        app.include_router(receiver_router, responses=RECEIVER_RESPONSES)
    # Every query route needs a read token once read tokens are configured, including
    # any route that does not ask for a tenant.
    readers = [Depends(read_scope)]
    answers = error_responses(401, 500, 503)
    app.include_router(api_router, prefix="/api/v1", dependencies=readers, responses=answers)
    app.include_router(alerts_router, prefix="/api/v1", dependencies=readers, responses=answers)
    app.include_router(reviews_router, prefix="/api/v1", dependencies=readers, responses=answers)
    app.include_router(export_router, prefix="/api/v1", dependencies=readers, responses=answers)

    @app.get(
        "/metrics",
        response_class=PlainTextResponse,
        tags=["operations"],
        dependencies=[Depends(operator_scope)],
        responses=error_refs(401, 403),
    )
    def metrics(request: Request, service: CurrentService) -> Response:
        """Prometheus text format: spans received/stored/dropped, turns, findings, queues,
        reject rates per model over the alert window, firing alerts. With read tokens
        configured, only a token for every tenant (`*`) may scrape it."""
        loops: dict[str, AlertLoop] = request.app.state.alert_loops
        families = [f for loop in loops.values() for f in loop.metric_families()]
        outbox: Outbox = request.app.state.outbox
        families.extend(outbox.metric_families())
        text = service.metrics.render(families)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    @app.get("/healthz", tags=["operations"])
    def healthz() -> Health:
        """The process is up."""
        return Health(status="ok")

    @app.get(
        "/readyz",
        tags=["operations"],
        responses={503: {"model": Readiness, "description": "starting, or restarting"}},
    )
    def readyz(ingest: CurrentIngest, response: Response) -> Readiness:
        """Ready once the write-ahead log is replayed and the store is open, while the
        pipeline's threads and its judge worker process run (503 while it restarts)."""
        if not ingest.ready:
            response.status_code = 503
            return Readiness(status="starting")
        return Readiness(status="ready")

    return app


def _alert_loops(
    settings: ServiceSettings, store: Store, config: AlertConfig, metrics: Metrics
) -> dict[str, AlertLoop]:
    """One alert loop per tenant; none on a replica with alerts disabled (in a deployment
    of several replicas exactly one should evaluate, or every alert would fire twice)."""
    if not settings.alerts_enabled:
        log.info("alerts are disabled on this replica (FACTLEDGER_ALERTS_ENABLED=false)")
        return {}
    tenants = sorted(settings.access.tenants)
    config.check_tenants(tenants)
    labelled = tenants != [DEFAULT_TENANT]
    return {
        tenant: AlertLoop(
            store,
            config,
            tenant=tenant,
            interval=settings.alert_interval_seconds,
            metrics=metrics,
            labels={"tenant": tenant} if labelled else None,
            redact=settings.redactor.text if settings.redactor else str,
        )
        for tenant in tenants
    }
