"""docker-compose.yml, the Dockerfile and the Collector config agree with the code:
ports, environment variable names, the store DSN, health endpoints, CLI subcommands and
the load balancer's OTLP/gRPC route to every replica. Nothing here runs Docker."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from fastapi.routing import APIRoute

from factledger.cli import _parser
from factledger.collector.app import create_app
from factledger.collector.settings import DEFAULT_GRPC_PORT, DEFAULT_PORT, ServiceSettings
from factledger.collector.store import StoreConfig
from factledger.dashboard.client import TOKEN_ENV
from factledger.processors.errors import ConfigError
from factledger.processors.normalize.values import CONVERSATION_KEYS

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
SETTINGS_SOURCE = (
    ROOT / "collector" / "src" / "factledger" / "collector" / "settings.py"
).read_text()
FACTLEDGER_SERVICES = ["factledger", "factledger-1", "factledger-2"]
ATTRIBUTE_ROUTING_SINCE = (0, 154, 0)
"""The contrib release whose load-balancing exporter documents `routing_key: attributes`
for spans under its `load_balancing` name (the version pinned in docker-compose.yml)."""
ROUTES = {
    route.path
    for route in create_app(ServiceSettings()).routes
    if isinstance(route, APIRoute) and "GET" in (route.methods or ())
}


OPERATOR_SET = {
    "FACTLEDGER_READ_TOKENS": "*:ops-read-token-000000000001",
    "FACTLEDGER_DASHBOARD_TOKEN": "ops-read-token-000000000001",
}
"""What an operator sets before `docker compose up` (docs/deploy.md)."""


def _substituted(value: str, given: dict[str, str]) -> str:
    """Compose's `${VAR:-default}`: VAR's value in `given`, else the default."""
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: given.get(m.group(1)) or m.group(2), value)


def _env(service: str, given: dict[str, str] = OPERATOR_SET) -> dict[str, str]:
    env = SERVICES[service].get("environment", {})
    return {key: _substituted(str(value), given) for key, value in env.items()}


def _container_ports(service: str) -> set[int]:
    return {int(str(p).rsplit(":", 1)[1]) for p in SERVICES[service].get("ports", [])}


def _dockerfile_stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuations joined), one list per FROM."""
    joined = DOCKERFILE.replace("\\\n", " ")
    lines = [line.strip() for line in joined.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("FROM ")]
    return [lines[start:end] for start, end in zip(starts, [*starts[1:], len(lines)], strict=True)]


def _dockerfile_final_stage() -> list[str]:
    return _dockerfile_stages()[-1]


def _dockerfile_builder_stage() -> list[str]:
    return _dockerfile_stages()[0]


def _instruction(stage: list[str], name: str) -> list[str]:
    return [line[len(name) + 1 :].strip() for line in stage if line.startswith(name + " ")]


def _health_url(test: list[str]) -> str:
    found = re.search(r"https?://[^'\" ]+", " ".join(test))
    assert found, test
    return found.group(0)


def _dashboard_default_port() -> int:
    port: int = _parser().parse_args(["dashboard"]).port
    return port


@pytest.mark.parametrize("service", FACTLEDGER_SERVICES)
def test_service_environment_is_what_the_settings_read(service: str) -> None:
    env = _env(service)
    for name in env:
        assert f'"{name}"' in SETTINGS_SOURCE, (
            f"{name} is not read by collector/src/factledger/collector/settings.py"
        )
    settings = ServiceSettings.from_env(env)
    StoreConfig(dsn=settings.dsn, database=settings.database)
    dsn = urlsplit(settings.dsn)
    assert dsn.scheme == "http"
    assert dsn.hostname in SERVICES and dsn.port in _container_ports(dsn.hostname or "")


@pytest.mark.parametrize("service", FACTLEDGER_SERVICES)
def test_service_command_binds_all_interfaces_on_the_default_ports(service: str) -> None:
    args = _parser().parse_args(SERVICES[service]["command"])
    assert args.handler.__name__ == "_cmd_serve"
    assert args.host == "0.0.0.0"
    assert args.port in (None, DEFAULT_PORT)
    settings = ServiceSettings.from_env(_env(service), grpc_port=args.grpc_port)
    assert settings.grpc_port == DEFAULT_GRPC_PORT and settings.otlp_http
    assert _container_ports(service) <= {DEFAULT_PORT, DEFAULT_GRPC_PORT}


@pytest.mark.parametrize("service", FACTLEDGER_SERVICES)
def test_service_health_check_is_an_app_route(service: str) -> None:
    url = urlsplit(_health_url(SERVICES[service]["healthcheck"]["test"]))
    assert url.port == DEFAULT_PORT
    assert url.path in ROUTES


def test_dashboard_command_parses_and_points_at_the_service() -> None:
    dashboard = SERVICES["dashboard"]
    args = _parser().parse_args(dashboard["command"])
    assert args.handler.__name__ == "_cmd_dashboard"
    assert args.port == _dashboard_default_port()
    assert _container_ports("dashboard") == {args.port}
    assert args.host == "0.0.0.0"
    api = urlsplit(args.api)
    assert api.hostname in SERVICES and api.port == DEFAULT_PORT
    assert urlsplit(_health_url(dashboard["healthcheck"]["test"])).port == args.port


def test_clickhouse_is_pinned_persistent_and_health_checked() -> None:
    clickhouse = SERVICES["clickhouse"]
    image, _, tag = clickhouse["image"].partition(":")
    assert image == "clickhouse/clickhouse-server" and re.fullmatch(r"\d+\.\d+(\.\d+)*", tag)
    assert any(v.endswith(":/var/lib/clickhouse") for v in clickhouse["volumes"])
    assert urlsplit(_health_url(clickhouse["healthcheck"]["test"])).path == "/ping"
    password = _substituted(clickhouse["environment"]["CLICKHOUSE_PASSWORD"], {})
    assert urlsplit(ServiceSettings.from_env(_env("factledger")).dsn).password == password


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_every_image_is_pinned(service: str) -> None:
    image = SERVICES[service]["image"]
    assert ":" in image and not image.endswith(":latest")


def test_dockerfile_final_stage_is_slim_and_unprivileged() -> None:
    stage = _dockerfile_final_stage()
    assert stage[0] == "FROM python:3.11-slim"
    assert not any("build-essential" in line or "gcc" in line for line in stage)
    assert _instruction(stage, "USER") and _instruction(stage, "USER")[-1] not in ("root", "0")
    exposed = {int(p) for line in _instruction(stage, "EXPOSE") for p in line.split()}
    assert exposed == {DEFAULT_PORT, DEFAULT_GRPC_PORT, _dashboard_default_port()}


def test_dockerfile_installs_the_compiled_wheel_with_the_extras_compose_runs() -> None:
    stage = _dockerfile_builder_stage()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    copied = {source for line in _instruction(stage, "COPY") for source in line.split()[:-1]}
    folders = {
        path.split("/")[0] for path in pyproject["tool"]["setuptools"]["package-dir"].values()
    }
    # What the wheel's build reads: setup.py runs tools/mypyc_build.py over the sources.
    assert folders | {"pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "tools"} <= copied
    assert any("build-essential" in line for line in _instruction(stage, "RUN")), "no compiler"
    (install,) = [line for line in _instruction(stage, "RUN") if "pip wheel" in line]
    extras = re.search(r"\.whl\)\[([\w,]+)\]", install)
    assert extras, install
    installed = set(extras.group(1).split(","))
    if "all" in installed:
        (everything,) = pyproject["project"]["optional-dependencies"]["all"]
        installed |= set(everything.split("[")[1].rstrip("]").split(","))
    commands = {
        _parser().parse_args(SERVICES[name]["command"]).command
        for name in SERVICES
        if SERVICES[name].get("image", "").startswith("factledger:")
    }
    assert commands == {"serve", "dashboard"}
    assert {"service", "dashboard"} <= installed
    # The image fails to build unless the installed package runs its compiled modules, and
    # compiles them itself: a checkout's own build is never sent to the builder.
    assert "compiled_status()" in install and "assert status.active" in install
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "factledger/_mypyc" in ignored


@pytest.mark.parametrize("service", FACTLEDGER_SERVICES)
def test_compose_default_is_no_open_api_on_all_interfaces(service: str) -> None:
    assert "FACTLEDGER_API_OPEN" in SERVICES[service]["environment"]
    with pytest.raises(ConfigError, match=r"FACTLEDGER_READ_TOKENS.*FACTLEDGER_API_OPEN=1"):
        ServiceSettings.from_env(_env(service, given={}))
    assert ServiceSettings.from_env(_env(service)).access.read_required


def test_compose_dashboard_reads_with_one_of_the_read_tokens() -> None:
    access = ServiceSettings.from_env(_env("factledger")).access
    token = _env("dashboard")[TOKEN_ENV]
    assert access.read_scope(f"Bearer {token}") is not None


def test_container_default_is_no_open_api_on_all_interfaces() -> None:
    stage = _dockerfile_final_stage()
    env = dict(
        item.split("=", 1) for line in _instruction(stage, "ENV") for item in shlex.split(line)
    )
    (command,) = (yaml.safe_load(x) for x in _instruction(stage, "CMD"))
    host = _parser().parse_args(command).host
    with pytest.raises(ConfigError, match=r"FACTLEDGER_READ_TOKENS.*FACTLEDGER_API_OPEN=1"):
        ServiceSettings.from_env(env, host=host)


def test_dockerfile_entrypoint_and_command_are_the_cli() -> None:
    stage = _dockerfile_final_stage()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    (entrypoint,) = (yaml.safe_load(x) for x in _instruction(stage, "ENTRYPOINT"))
    assert entrypoint == ["factledger"] and "factledger" in scripts
    (command,) = (yaml.safe_load(x) for x in _instruction(stage, "CMD"))
    assert _parser().parse_args(command).host == "0.0.0.0"
    (health,) = _instruction(stage, "HEALTHCHECK")
    url = urlsplit(_health_url(shlex.split(health)))
    assert url.port == DEFAULT_PORT and url.path in ROUTES


def _mounted_config(service: str) -> dict[str, Any]:
    (config_arg,) = SERVICES[service]["command"]
    target = config_arg.removeprefix("--config=")
    (volume,) = (v for v in SERVICES[service]["volumes"] if v.split(":")[1] == target)
    loaded: dict[str, Any] = yaml.safe_load((ROOT / volume.split(":")[0]).read_text())
    return loaded


def test_load_balancer_routes_by_conversation_id_to_every_replica_over_grpc() -> None:
    """Every attribute FactLedger reads a conversation id from, in the same order: the
    replicas join per-call traces by the id the routing kept together. The exporter
    speaks OTLP/gRPC to each replica's own gRPC port, with the Collector's ingest token."""
    config = _mounted_config("otel-collector")
    exporter = config["exporters"]["load_balancing"]
    assert exporter["routing_key"] == "attributes"
    assert exporter["routing_attributes"] == list(CONVERSATION_KEYS)
    assert config["service"]["pipelines"]["traces"]["exporters"] == ["load_balancing"]
    tag = SERVICES["otel-collector"]["image"].rpartition(":")[2]
    assert tuple(int(part) for part in tag.split(".")) >= ATTRIBUTE_ROUTING_SINCE
    replicas = []
    for hostname in exporter["resolver"]["static"]["hostnames"]:
        replica, port = hostname.rsplit(":", 1)
        assert replica in FACTLEDGER_SERVICES and "scale" in SERVICES[replica]["profiles"]
        args = _parser().parse_args(SERVICES[replica]["command"])
        grpc_port = ServiceSettings.from_env(_env(replica), grpc_port=args.grpc_port).grpc_port
        assert int(port) == grpc_port
        replicas.append(replica)
    assert sorted(replicas) == ["factledger-1", "factledger-2"]
    headers = exporter["protocol"]["otlp"]["headers"]
    assert headers == {"authorization": "Bearer ${env:FACTLEDGER_COLLECTOR_TOKEN}"}
    assert "FACTLEDGER_COLLECTOR_TOKEN" in SERVICES["otel-collector"]["environment"]
    assert set(SERVICES["otel-collector"]["depends_on"]) == set(replicas)


def test_no_two_services_publish_one_host_port() -> None:
    published = [
        str(p).rsplit(":", 1)[0] for service in SERVICES.values() for p in service.get("ports", [])
    ]
    assert len(published) == len(set(published)), published


def test_exactly_one_service_per_deployment_runs_the_alert_loop() -> None:
    def alerts_on(service: str) -> bool:
        return ServiceSettings.from_env(_env(service)).alerts_enabled

    assert alerts_on("factledger")
    assert not [s for s in FACTLEDGER_SERVICES if s != "factledger" and alerts_on(s)]


def test_dashboard_reads_with_the_token_variable_it_knows() -> None:
    environment = SERVICES["dashboard"].get("environment", {})
    assert set(environment) == {TOKEN_ENV}
