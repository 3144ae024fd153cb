"""Where the service listens unless told otherwise: constants only, so the light command
line (which has no service dependencies) and the service settings agree on them."""

DEFAULT_PORT = 4318
"""The service's port (OTLP/HTTP's, the query API's), where every client looks first."""
DEFAULT_GRPC_PORT = 4317
"""OTLP/gRPC's port (the Python SDK's and the Collector's default protocol)."""
DEFAULT_HOST = "127.0.0.1"
