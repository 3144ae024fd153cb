"""Service settings: read once from the environment (and command-line overrides) into a
frozen object. A bad value fails at start-up and names the variable.

| variable | default | meaning |
|---|---|---|
| FACTLEDGER_STORE | chdb:///<data dir>/chdb | `chdb:///path` or `http(s)://user:pw@host:8123` |
| FACTLEDGER_DATA_DIR | ./.factledger | embedded store and write-ahead log |
| FACTLEDGER_DATABASE | factledger | ClickHouse database |
| FACTLEDGER_INGEST_TOKEN | (none) | one bearer token for /v1/traces, tenant `default` |
| FACTLEDGER_INGEST_TOKENS | (none) | `tenant:token,...`: ingest tokens and their tenants |
| FACTLEDGER_READ_TOKENS | (none) | `tenant:token,...` (`*` = every tenant): query API tokens |
| FACTLEDGER_REVIEW_TOKENS | (none) | `tenant:token,...`: tokens that read and label (reviews) |
| FACTLEDGER_TOKENS_FILE | (none) | TOML file of ingest, read and review tokens (access.py) |
| FACTLEDGER_API_OPEN | (unset) | `1`: no read token needed, `0`: read tokens required (access.py) |
| FACTLEDGER_REDACTION | (none) | redaction TOML (docs/redaction.md); none: built-in secrets |
| FACTLEDGER_CLUSTER | (none) | ClickHouse cluster name: replicated + distributed tables |
| FACTLEDGER_ALERTS_ENABLED | true | run the alert loop (one replica per deployment should) |
| FACTLEDGER_GRPC_PORT | 4317 | OTLP/gRPC port, on the HTTP port's host; 0: no gRPC |
| FACTLEDGER_OTLP_HTTP_ENABLED | true | `false`: /v1/traces and /v1/logs are gone (404) |
| FACTLEDGER_MAX_BODY_BYTES | 67108864 | decompressed request (and gRPC message) size limit |
| FACTLEDGER_MAX_API_BODY_BYTES | 1048576 | request size limit of the query API (413 above) |
| FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES | 67108864 | body bytes in flight, fair shares (503) |
| FACTLEDGER_HEADER_TIMEOUT_SECONDS | 10 | headers slower than this: the connection closes |
| FACTLEDGER_BODY_TIMEOUT_SECONDS | 60 | a request body not read within this is answered 408 |
| FACTLEDGER_IDLE_TIMEOUT_SECONDS | 5 | an idle keep-alive connection closes after this |
| FACTLEDGER_MAX_CONNECTIONS | 1000 | requests at once (503 above, health aside); idle shed |
| FACTLEDGER_GRPC_MAX_CONNECTIONS | 1000 | open gRPC connections; more are refused at connect |
| FACTLEDGER_GRPC_MAX_STREAMS | 100 | calls at once per gRPC connection (more wait) |
| FACTLEDGER_GRPC_KEEPALIVE_SECONDS | 60 | a quiet gRPC connection is pinged after this |
| FACTLEDGER_GRPC_KEEPALIVE_TIMEOUT_SECONDS | 20 | an unanswered ping closes it after this |
| FACTLEDGER_GRPC_IDLE_SECONDS | 300 | a gRPC connection without calls closes after this |
| FACTLEDGER_GRACE_SECONDS | 2 | quiet time after a turn's root ends before it is judged |
| FACTLEDGER_MAX_WAIT_SECONDS | 60 | a turn is judged at the latest this long after it opened |
| FACTLEDGER_QUEUE_SPANS | 50000 | spans held, not stored or judged (503 over; 413 a request over) |
| FACTLEDGER_QUEUE_BYTES | 67108864 | request bytes behind the spans held (503 over) |
| FACTLEDGER_WAL_SEGMENT_SECONDS | 10 | raw requests stay in the write-ahead log about this long |
| FACTLEDGER_JUDGE_WORKERS | 1 | judge worker processes; a conversation's spans meet in one |
| FACTLEDGER_RETENTION_DAYS | 30 | TTL of every table |
| FACTLEDGER_CONFIG | (none) | settings TOML: [validation], [verification], [export] |
| FACTLEDGER_ALERTS | (none) | alert rules TOML (docs/alerting.md); none: the built-in rule |
| FACTLEDGER_ALERT_INTERVAL_SECONDS | 30 | how often the alert rules are evaluated |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from factledger.collector.access import AccessConfig, check_query_access
from factledger.collector.address import DEFAULT_GRPC_PORT, DEFAULT_HOST, DEFAULT_PORT
from factledger.collector.export.settings import ExportSettings
from factledger.collector.export.targets import build_targets
from factledger.collector.ingest.wal import SEGMENT_SECONDS
from factledger.collector.redaction import Redactor
from factledger.processors.errors import ConfigError
from factledger.verifiers.settings import VerificationSettings

__all__ = [
    "DEFAULT_GRPC_PORT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MAX_JUDGE_WORKERS",
    "ServiceSettings",
]
MAX_JUDGE_WORKERS = 64
"""Each judge worker is a process of its own (about 170 MiB): more is a typo, not a plan."""


@dataclass(frozen=True)
class ServiceSettings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    grpc_port: int = 0
    """The OTLP/gRPC receiver's port (`collector.ingest.grpc_receiver`); 0: none. From
    the environment (`factledger serve` and `up`) it is DEFAULT_GRPC_PORT unless set; a
    `ServiceSettings` built in code (tests, embedding) listens on one port only unless
    it asks for a second."""
    otlp_http: bool = True
    """Whether the HTTP port takes OTLP (/v1/traces, /v1/logs) besides the query API."""
    data_dir: Path = Path(".factledger")
    store_dsn: str = ""
    database: str = "factledger"
    access: AccessConfig = field(default_factory=AccessConfig)
    api_open: bool | None = None
    """FACTLEDGER_API_OPEN (None: unset): whether the query API may go without read tokens
    (`check_query_access`)."""
    redactor: Redactor | None = field(default_factory=Redactor.default)
    """What is redacted before storage; None: nothing (FACTLEDGER_REDACTION file with
    `enabled = false`)."""
    cluster: str = ""
    alerts_enabled: bool = True
    max_body_bytes: int = 64 * 1024 * 1024
    max_api_body_bytes: int = 1024 * 1024
    """The body limit of the query API's routes (collector/request_bodies.py): labels and
    filters are a few kilobytes."""
    max_bodies_in_flight_bytes: int = 64 * 1024 * 1024
    """Bytes of request bodies read or decoded at one time; decoding costs several times
    a body's size, so this bounds the receiver's memory (a request past it gets a 503)."""
    header_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 60.0
    idle_timeout_seconds: float = 5.0
    max_connections: int = 1000
    grpc_max_connections: int = 1000
    """gRPC connections open at once (`grpc.max_allowed_incoming_connections`)."""
    grpc_max_streams: int = 100
    """Calls at once on one gRPC connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS): a
    client with more queues them, nothing is refused."""
    grpc_keepalive_seconds: float = 60.0
    grpc_keepalive_timeout_seconds: float = 20.0
    grpc_idle_seconds: float = 300.0
    grace_seconds: float = 2.0
    max_wait_seconds: float = 60.0
    queue_spans: int = 50_000
    queue_bytes: int = 64 * 1024 * 1024
    wal_segment_seconds: float = SEGMENT_SECONDS
    """How long a write-ahead log segment takes requests; it is deleted once closed and
    stored, so raw requests (secrets included) stay on disk about this long."""
    judge_workers: int = 1
    """Judge worker processes (`collector.judge.routing` keeps a conversation in one of them)."""
    retention_days: int = 30
    validation_config: Path | None = None
    verification: VerificationSettings = field(default_factory=VerificationSettings)
    """The [verification] section of `validation_config` (defaults without one)."""
    export: ExportSettings = field(default_factory=ExportSettings)
    """The [export] section of `validation_config`: outbox bounds and targets."""
    alerts_file: Path | None = None
    alert_interval_seconds: float = 30.0

    def __post_init__(self) -> None:
        check_query_access(self.access, self.api_open)

    @property
    def dsn(self) -> str:
        """The store DSN, defaulting to an embedded chDB path under the data directory."""
        if self.store_dsn:
            return self.store_dsn
        return f"chdb://{(self.data_dir / 'chdb').resolve()}"

    @property
    def wal_dir(self) -> Path:
        return self.data_dir / "wal"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> ServiceSettings:
        """Settings from `env` (default os.environ); non-None `overrides` win."""
        env = os.environ if env is None else env
        settings = cls(
            data_dir=Path(env.get("FACTLEDGER_DATA_DIR", ".factledger")),
            store_dsn=env.get("FACTLEDGER_STORE", ""),
            database=_identifier(env, "FACTLEDGER_DATABASE", "factledger"),
            access=AccessConfig.load(
                file=_path(env, "FACTLEDGER_TOKENS_FILE"),
                ingest_env=env.get("FACTLEDGER_INGEST_TOKENS", ""),
                read_env=env.get("FACTLEDGER_READ_TOKENS", ""),
                review_env=env.get("FACTLEDGER_REVIEW_TOKENS", ""),
                single_ingest_token=env.get("FACTLEDGER_INGEST_TOKEN", ""),
            ),
            api_open=_optional_flag(env, "FACTLEDGER_API_OPEN"),
            redactor=Redactor.load(_path(env, "FACTLEDGER_REDACTION")),
            cluster=_identifier(env, "FACTLEDGER_CLUSTER", ""),
            alerts_enabled=_flag(env, "FACTLEDGER_ALERTS_ENABLED", True),
            grpc_port=_port(env, "FACTLEDGER_GRPC_PORT", DEFAULT_GRPC_PORT),
            otlp_http=_flag(env, "FACTLEDGER_OTLP_HTTP_ENABLED", True),
            max_body_bytes=_number(env, "FACTLEDGER_MAX_BODY_BYTES", 64 * 1024 * 1024, int),
            max_api_body_bytes=_number(env, "FACTLEDGER_MAX_API_BODY_BYTES", 1024 * 1024, int),
            max_bodies_in_flight_bytes=_number(
                env, "FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES", 64 * 1024 * 1024, int
            ),
            header_timeout_seconds=_number(env, "FACTLEDGER_HEADER_TIMEOUT_SECONDS", 10.0, float),
            body_timeout_seconds=_number(env, "FACTLEDGER_BODY_TIMEOUT_SECONDS", 60.0, float),
            idle_timeout_seconds=_number(env, "FACTLEDGER_IDLE_TIMEOUT_SECONDS", 5.0, float),
            max_connections=_number(env, "FACTLEDGER_MAX_CONNECTIONS", 1000, int),
            grpc_max_connections=_number(env, "FACTLEDGER_GRPC_MAX_CONNECTIONS", 1000, int),
            grpc_max_streams=_number(env, "FACTLEDGER_GRPC_MAX_STREAMS", 100, int),
            grpc_keepalive_seconds=_number(env, "FACTLEDGER_GRPC_KEEPALIVE_SECONDS", 60.0, float),
            grpc_keepalive_timeout_seconds=_number(
                env, "FACTLEDGER_GRPC_KEEPALIVE_TIMEOUT_SECONDS", 20.0, float
            ),
            grpc_idle_seconds=_number(env, "FACTLEDGER_GRPC_IDLE_SECONDS", 300.0, float),
            grace_seconds=_number(env, "FACTLEDGER_GRACE_SECONDS", 2.0, float),
            max_wait_seconds=_number(env, "FACTLEDGER_MAX_WAIT_SECONDS", 60.0, float),
            queue_spans=_number(env, "FACTLEDGER_QUEUE_SPANS", 50_000, int),
            queue_bytes=_number(env, "FACTLEDGER_QUEUE_BYTES", 64 * 1024 * 1024, int),
            wal_segment_seconds=_number(
                env, "FACTLEDGER_WAL_SEGMENT_SECONDS", SEGMENT_SECONDS, float
            ),
            judge_workers=_number(env, "FACTLEDGER_JUDGE_WORKERS", 1, int),
            retention_days=_number(env, "FACTLEDGER_RETENTION_DAYS", 30, int),
            validation_config=Path(env["FACTLEDGER_CONFIG"])
            if env.get("FACTLEDGER_CONFIG")
            else None,
            alerts_file=Path(env["FACTLEDGER_ALERTS"]) if env.get("FACTLEDGER_ALERTS") else None,
            alert_interval_seconds=_number(env, "FACTLEDGER_ALERT_INTERVAL_SECONDS", 30.0, float),
        )
        chosen = {k: v for k, v in overrides.items() if v is not None}
        settings = replace(settings, **chosen)
        if settings.validation_config is not None and "verification" not in chosen:
            verification = VerificationSettings.from_toml(settings.validation_config)
            settings = replace(settings, verification=verification)
        if settings.validation_config is not None and "export" not in chosen:
            exporting = ExportSettings.from_toml(settings.validation_config)
            settings = replace(settings, export=exporting)
        # Every enabled target is built once here, so that a missing package or a bad
        # option stops the start in one line; the service builds its own in the lifespan.
        for target in build_targets(settings.export.enabled_targets):
            target.shutdown()
        if settings.store_dsn and not settings.store_dsn.startswith(
            ("chdb://", "http://", "https://")
        ):
            raise ConfigError("FACTLEDGER_STORE must start with chdb://, http:// or https://")
        if settings.cluster and settings.dsn.startswith("chdb://"):
            raise ConfigError(
                "FACTLEDGER_CLUSTER needs a ClickHouse server: set FACTLEDGER_STORE to an"
                " http(s):// DSN of one of the cluster's nodes"
            )
        if settings.judge_workers > MAX_JUDGE_WORKERS:
            raise ConfigError(
                f"FACTLEDGER_JUDGE_WORKERS must be at most {MAX_JUDGE_WORKERS},"
                f" not {settings.judge_workers}"
            )
        if not 0 < settings.port < 65536:
            raise ConfigError(f"--port must be between 1 and 65535, not {settings.port}")
        if not 0 <= settings.grpc_port < 65536:
            raise ConfigError(
                f"--grpc-port must be between 0 (no gRPC) and 65535, not {settings.grpc_port}"
            )
        if settings.grpc_port == settings.port:
            raise ConfigError(
                f"--grpc-port and --port are both {settings.port}: gRPC needs a port of its own"
            )
        return settings


def _number(env: Mapping[str, str], name: str, default: Any, kind: type) -> Any:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a {kind.__name__}, not {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, not {raw!r}")
    return value


def _port(env: Mapping[str, str], name: str, default: int) -> int:
    """A port number where 0 means "none" (the gRPC receiver is then not started)."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or int(raw) > 65535:
        raise ConfigError(f"{name} must be a port between 0 (none) and 65535, not {raw!r}")
    return int(raw)


def _identifier(env: Mapping[str, str], name: str, default: str) -> str:
    value = env.get(name) or default
    if value and not value.replace("_", "").isalnum():
        raise ConfigError(f"{name} must be letters, digits and underscores, not {value!r}")
    return value


def _path(env: Mapping[str, str], name: str) -> Path | None:
    raw = env.get(name)
    return Path(raw) if raw else None


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = _optional_flag(env, name)
    return default if value is None else value


def _optional_flag(env: Mapping[str, str], name: str) -> bool | None:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return None
    if raw in _TRUE | _FALSE:
        return raw in _TRUE
    raise ConfigError(f"{name} must be true or false, not {raw!r}")
