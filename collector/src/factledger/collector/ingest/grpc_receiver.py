"""The OTLP/gRPC receiver: TraceService/Export and LogsService/Export on `grpc_port`
(4317 by default), beside the HTTP port.

What becomes of a request is decided in `collector.ingest.intake`, exactly as for
OTLP/HTTP: the same ingest tokens (the `authorization` metadata, `Bearer <token>`) and
tenants, the same backlog and in-flight bounds, the write-ahead log written before the
reply, partial success in the response. This module keeps what is gRPC's own: the
server, its limits, reading the token from the metadata, and the status codes
(`collector.ingest.refusal_grpc`), as the OTLP specification maps them:

| situation | status |
|---|---|
| accepted (`partial_success`: how many spans or log records were rejected, why) | OK |
| a message that does not decode | INVALID_ARGUMENT |
| ingest tokens configured and the bearer token missing or unknown | UNAUTHENTICATED |
| a message above `max_body_bytes`, as sent or inflated (gRPC's own answer) | RESOURCE_EXHAUSTED |
| more spans than the backlog may ever hold (`FACTLEDGER_QUEUE_SPANS`) | RESOURCE_EXHAUSTED |
| pipeline full, bodies in flight, closing, the store or the log cannot write | UNAVAILABLE |
| a call to another service (metrics, profiles) | UNIMPLEMENTED |
| anything unforeseen (the log has the traceback) | INTERNAL |

RESOURCE_EXHAUSTED carries no RetryInfo, so OTLP clients do not retry it; UNAVAILABLE
carries RetryInfo asking for two seconds. A message above the limit never reaches the
handler, nor does a call to another service: gRPC answers both itself, so they are not
counted in `factledger_requests_refused_total` (every other refusal is, with
`transport="grpc"`). gRPC inflates gzip itself.

The server is `grpc.aio`, on the app's own event loop (started and stopped in the
lifespan), not a thread-pool server. Everything a request shares with the HTTP routes
lives on that loop: `InFlightBytes`, which keeps no lock and refuses requests by
cancelling their tasks, sees both transports' bodies and shares its bound fairly between
them; the intake hands decoding and the write-ahead log to the same worker threads (and
the same limit on them) as the HTTP routes; a handler that waits costs a coroutine, not
one of a fixed pool of threads. A thread-pool server would need a lock in the in-flight
bound, a second pool, and a hand-over back to the loop for every request.

Connections are bounded (`grpc_max_connections`, refused at connect past it) and so are
calls on each (`grpc_max_streams`, HTTP/2 flow: a client with more waits, none is
refused); a quiet connection is pinged after `grpc_keepalive_seconds` and closed when the
ping goes unanswered for `grpc_keepalive_timeout_seconds`; one with no call for
`grpc_idle_seconds` is closed (GOAWAY: the client reconnects when it has more to send).
gRPC collects a message before the handler runs: a message counts against
`max_bodies_in_flight_bytes` (shared with HTTP) once it has arrived whole, while one still
arriving is bounded only by `max_body_bytes` for its call, and its time by the sender's
deadline (gRPC has no server-side timeout for a message in transit, as HTTP's
`body_timeout_seconds` is; the bound on connections and streams caps how many).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import grpc
from grpc import aio
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from factledger.collector import otlp
from factledger.collector.ingest.in_flight import Share
from factledger.collector.ingest.intake import LOGS, TRACES, Intake, Signal, record_refusal
from factledger.collector.ingest.refusal_grpc import INTERNAL, answer
from factledger.collector.refusals import Refusal
from factledger.collector.service import Service
from factledger.collector.settings import ServiceSettings

log = logging.getLogger("factledger.receiver")

TRACE_SERVICE = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name
LOGS_SERVICE = logs_service_pb2.DESCRIPTOR.services_by_name["LogsService"].full_name
"""The services of opentelemetry-proto's `*_service_pb2_grpc` modules, by their names in
the .proto files. Their `add_*Servicer_to_server` is not used: it parses the message
before the handler runs, and gRPC answers a message that does not parse with UNKNOWN,
where OTLP asks for INVALID_ARGUMENT; the handlers here take the message's bytes, which
the intake decodes and the write-ahead log keeps as they came."""

SHUTDOWN_GRACE_SECONDS = 5.0
"""How long calls in progress may finish once the receiver stops."""

Handler = Callable[[bytes, aio.ServicerContext[bytes, bytes]], Awaitable[bytes]]


def server_options(settings: ServiceSettings) -> list[tuple[str, int]]:
    """The gRPC server's channel arguments: the limits in the module docstring."""
    return [
        ("grpc.max_receive_message_length", settings.max_body_bytes),
        ("grpc.max_allowed_incoming_connections", settings.grpc_max_connections),
        ("grpc.max_concurrent_streams", settings.grpc_max_streams),
        ("grpc.keepalive_time_ms", round(settings.grpc_keepalive_seconds * 1000)),
        ("grpc.keepalive_timeout_ms", round(settings.grpc_keepalive_timeout_seconds * 1000)),
        ("grpc.max_connection_idle_ms", round(settings.grpc_idle_seconds * 1000)),
        # An exporter pinging every 10 s (or as often as the server pings) is not sent
        # away with GOAWAY "too many pings", as gRPC's default of 5 minutes would.
        (
            "grpc.http2.min_recv_ping_interval_without_data_ms",
            round(min(settings.grpc_keepalive_seconds, 10.0) * 1000),
        ),
    ]


def listen_address(host: str, port: int) -> str:
    """`host:port` as gRPC binds it; an IPv6 literal in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class GrpcReceiver:
    """The OTLP/gRPC server of one service. `start` binds and serves; `shutdown` stops
    taking calls, lets those in progress finish within its timeout, and is safe to call
    twice or before `start`. Both run on the event loop the calls are served on."""

    def __init__(self, service: Service) -> None:
        self._service = service
        self._intake = Intake(service.settings, service.pipeline, service.metrics)
        self._server: aio.Server | None = None
        self.port: int | None = None
        """The bound port, once started."""

    async def start(self) -> int:
        """Bind the settings' `grpc_port` on their host and serve; the bound port. Raises
        OSError when the port cannot be bound."""
        settings = self._service.settings
        server = aio.server(options=server_options(settings))
        server.add_generic_rpc_handlers(
            [
                _service_handler(TRACE_SERVICE, self._handler(TRACES)),
                _service_handler(LOGS_SERVICE, self._handler(LOGS)),
            ]
        )
        address = listen_address(settings.host, settings.grpc_port)
        try:
            bound = server.add_insecure_port(address)
        except RuntimeError as exc:  # grpc's "Failed to bind"
            raise OSError(f"cannot listen for OTLP/gRPC on {address}: {exc}") from exc
        if not bound:
            raise OSError(f"cannot listen for OTLP/gRPC on {address}")
        await server.start()
        self._server = server
        self.port = bound
        log.info("OTLP/gRPC on %s", listen_address(settings.host, bound))
        return bound

    async def shutdown(self, timeout: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Refuse new calls, give those in progress `timeout` seconds, then cancel them."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(timeout)

    def _handler(self, signal: Signal) -> Handler:
        async def export(request: bytes, context: aio.ServicerContext[bytes, bytes]) -> bytes:
            return await self._export(request, context, signal)

        return export

    async def _export(
        self, request: bytes, context: aio.ServicerContext[bytes, bytes], signal: Signal
    ) -> bytes:
        """One Export call: the serialized request in, the serialized response out."""
        service = self._service
        held: Share | None = None
        try:
            tenant = self._intake.admit(_authorization(context), otlp.PROTOBUF, len(request))
            held = service.bodies.share(tenant)
            held.reading = False  # received whole: never given up for another request
            held.take(len(request))
            accepted = await self._intake.receive(request, otlp.PROTOBUF, tenant, signal, "grpc")
        except Refusal as refusal:
            record_refusal(refusal, service.metrics, "grpc")
            failed = answer(refusal)
        except Exception:  # one bad call never takes the server down, nor leaks internals
            log.exception("OTLP/gRPC %s export failed", signal.name)
            failed = INTERNAL
        else:
            return otlp.encode_response(
                otlp.PROTOBUF, accepted.rejected, accepted.error_message, signal.name
            )
        finally:
            if held is not None:
                held.release()
        await context.abort(failed.code, failed.details, failed.trailing_metadata)


def _service_handler(service: str, export: Handler) -> grpc.GenericRpcHandler:
    """`service`/Export taking and answering serialized messages."""
    method: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(export)
    return grpc.method_handlers_generic_handler(service, {"Export": method})


def _authorization(context: aio.ServicerContext[bytes, bytes]) -> str:
    """The call's `authorization` metadata ("" without one)."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return ""
