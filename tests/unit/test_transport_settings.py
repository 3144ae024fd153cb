"""Which transports the service listens on and the gRPC server's limits: read from the
environment and the command line, a bad value refused at start-up naming its variable,
and each limit handed to gRPC under the channel argument that enforces it."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.cli import _parser
from factledger.collector.ingest.grpc_receiver import listen_address, server_options
from factledger.collector.settings import DEFAULT_GRPC_PORT, ServiceSettings
from factledger.processors.errors import ConfigError


@pytest.mark.parametrize(
    ("env", "grpc_port", "otlp_http"),
    [
        pytest.param({}, DEFAULT_GRPC_PORT, True, id="both-by-default"),
        pytest.param({"FACTLEDGER_GRPC_PORT": "14317"}, 14317, True, id="another-grpc-port"),
        pytest.param({"FACTLEDGER_GRPC_PORT": "0"}, 0, True, id="no-grpc"),
        pytest.param(
            {"FACTLEDGER_OTLP_HTTP_ENABLED": "false"}, DEFAULT_GRPC_PORT, False, id="grpc-only"
        ),
    ],
)
def test_the_transports_come_from_the_environment(
    env: dict[str, str], grpc_port: int, otlp_http: bool
) -> None:
    settings = ServiceSettings.from_env(env)
    assert (settings.grpc_port, settings.otlp_http) == (grpc_port, otlp_http)


def test_settings_built_in_code_listen_on_one_port_unless_asked() -> None:
    """Tests and embedding build ServiceSettings themselves: no second well-known port is
    bound behind their back (from_env, i.e. `serve` and `up`, defaults to 4317)."""
    assert ServiceSettings().grpc_port == 0


@pytest.mark.parametrize(
    ("env", "overrides", "message"),
    [
        pytest.param({"FACTLEDGER_GRPC_PORT": "x"}, {}, "FACTLEDGER_GRPC_PORT", id="not-a-number"),
        pytest.param({"FACTLEDGER_GRPC_PORT": "-1"}, {}, "FACTLEDGER_GRPC_PORT", id="negative"),
        pytest.param({"FACTLEDGER_GRPC_PORT": "70000"}, {}, "FACTLEDGER_GRPC_PORT", id="too-high"),
        pytest.param({}, {"grpc_port": 70000}, "--grpc-port", id="option-too-high"),
        pytest.param({}, {"grpc_port": 4318}, "--grpc-port and --port", id="the-http-port"),
        pytest.param(
            {"FACTLEDGER_OTLP_HTTP_ENABLED": "maybe"},
            {},
            "FACTLEDGER_OTLP_HTTP_ENABLED",
            id="not-a-flag",
        ),
        pytest.param(
            {"FACTLEDGER_GRPC_MAX_STREAMS": "0"}, {}, "FACTLEDGER_GRPC_MAX_STREAMS", id="no-streams"
        ),
        pytest.param(
            {"FACTLEDGER_GRPC_KEEPALIVE_SECONDS": "soon"},
            {},
            "FACTLEDGER_GRPC_KEEPALIVE_SECONDS",
            id="keepalive-not-a-number",
        ),
    ],
)
def test_a_bad_transport_setting_stops_start_up_naming_it(
    env: dict[str, str], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        ServiceSettings.from_env(env, **overrides)


@pytest.mark.parametrize(
    ("argv", "grpc_port", "otlp_http"),
    [
        pytest.param(["serve"], None, None, id="serve-as-configured"),
        pytest.param(["serve", "--grpc-port", "5317"], 5317, None, id="serve-grpc-port"),
        pytest.param(["serve", "--no-grpc"], 0, None, id="serve-no-grpc"),
        pytest.param(["serve", "--no-otlp-http"], None, False, id="serve-grpc-only"),
        pytest.param(["up", "--grpc-port", "5317"], 5317, None, id="up-grpc-port"),
        pytest.param(["up", "--no-grpc"], 0, None, id="up-no-grpc"),
    ],
)
def test_the_command_line_chooses_the_transports(
    argv: list[str], grpc_port: int | None, otlp_http: bool | None
) -> None:
    """None leaves the environment's (or the default's) choice standing."""
    args = _parser().parse_args(argv)
    assert args.grpc_port == grpc_port
    assert getattr(args, "otlp_http", None) == otlp_http


def test_every_grpc_limit_reaches_the_server_under_its_channel_argument() -> None:
    settings = ServiceSettings.from_env(
        {
            "FACTLEDGER_MAX_BODY_BYTES": "1000000",
            "FACTLEDGER_GRPC_MAX_CONNECTIONS": "7",
            "FACTLEDGER_GRPC_MAX_STREAMS": "9",
            "FACTLEDGER_GRPC_KEEPALIVE_SECONDS": "30",
            "FACTLEDGER_GRPC_KEEPALIVE_TIMEOUT_SECONDS": "4.5",
            "FACTLEDGER_GRPC_IDLE_SECONDS": "120",
        }
    )
    assert dict(server_options(settings)) == {
        "grpc.max_receive_message_length": 1_000_000,
        "grpc.max_allowed_incoming_connections": 7,
        "grpc.max_concurrent_streams": 9,
        "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 4_500,
        "grpc.max_connection_idle_ms": 120_000,
        "grpc.http2.min_recv_ping_interval_without_data_ms": 10_000,
    }


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1:4317"),
        ("0.0.0.0", "0.0.0.0:4317"),
        ("localhost", "localhost:4317"),
        ("::1", "[::1]:4317"),
        ("::", "[::]:4317"),
    ],
)
def test_the_listen_address_brackets_ipv6(host: str, address: str) -> None:
    assert listen_address(host, 4317) == address
