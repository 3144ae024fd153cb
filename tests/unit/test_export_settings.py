"""The [export] settings section and the target registry (collector.export.settings,
collector.export.targets): bounds and targets read once, a bad value names its key and
never its value, a target that cannot be imported is one line naming the package."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from factledger.collector.export.otel import OtelTarget
from factledger.collector.export.settings import ExportSettings
from factledger.collector.export.targets import build_targets, builder
from factledger.collector.settings import ServiceSettings
from factledger.processors.errors import ConfigError

TOKEN = "s3cr3t-t0k3n"


def test_defaults_without_a_section() -> None:
    settings = ExportSettings.from_mapping({})
    assert settings.targets == ()
    assert settings.limits.give_up_seconds == 24 * 3600
    assert (settings.limits.max_records, settings.limits.batch_size) == (100_000, 100)


def test_bounds_and_targets_are_read() -> None:
    settings = ExportSettings.from_mapping(
        {
            "max_records": 10,
            "max_bytes": 4096,
            "give_up_seconds": 60,
            "batch_size": 5,
            "backoff_initial_seconds": 0.5,
            "backoff_max_seconds": 8,
            "dashboard_url": "https://fl.example",
            "otel": {"enabled": True, "endpoint": "http://127.0.0.1:1/v1/logs"},
            "phoenix": {"enabled": False, "token": TOKEN},
        }
    )
    limits = settings.limits
    assert (limits.max_records, limits.max_bytes, limits.batch_size) == (10, 4096, 5)
    assert (limits.backoff.initial_seconds, limits.backoff.max_seconds) == (0.5, 8.0)
    assert settings.dashboard_url == "https://fl.example"
    assert [t.name for t in settings.enabled_targets] == ["otel"]
    assert settings.targets[1].options == {"token": TOKEN}  # passed through, as given


@pytest.mark.parametrize(
    ("section", "key"),
    [
        pytest.param({"max_records": 0}, "export.max_records", id="records-zero"),
        pytest.param({"max_bytes": "big"}, "export.max_bytes", id="bytes-text"),
        pytest.param({"give_up_seconds": -1}, "export.give_up_seconds", id="give-up-negative"),
        pytest.param({"batch_size": True}, "export.batch_size", id="batch-bool"),
        pytest.param({"dashboard_url": TOKEN}, "export.dashboard_url", id="url-not-a-url"),
        pytest.param({"colour": TOKEN}, "export.colour", id="unknown-key"),
        pytest.param({"splunk": {"token": TOKEN}}, "export.splunk", id="unknown-target"),
        pytest.param({"otel": {"enabled": TOKEN}}, "export.otel.enabled", id="enabled-text"),
    ],
)
def test_a_bad_value_names_its_key_only(section: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ExportSettings.from_mapping(section)
    assert key in str(caught.value)
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize(
    ("options", "key"),
    [
        pytest.param({}, "endpoint", id="endpoint-missing"),
        pytest.param({"endpoint": 5}, "endpoint", id="endpoint-number"),
        pytest.param({"endpoint": "ftp://x"}, "endpoint", id="endpoint-scheme"),
        pytest.param({"headers": {"authorization": 1}}, "headers", id="header-number"),
        pytest.param({"timeout_seconds": 0}, "timeout_seconds", id="timeout-zero"),
        pytest.param({"protocol": "thrift"}, "protocol", id="protocol"),
        pytest.param({"api_key": TOKEN}, "api_key", id="unknown-option"),
    ],
)
def test_a_bad_otel_option_names_the_target_and_key(options: dict[str, Any], key: str) -> None:
    settings = ExportSettings.from_mapping({"otel": options})
    with pytest.raises(ConfigError) as caught:
        build_targets(settings.enabled_targets)
    assert f"export.otel: {key}" in str(caught.value)
    assert TOKEN not in str(caught.value)


def test_the_otel_target_builds_without_a_connection() -> None:
    settings = ExportSettings.from_mapping(
        {"otel": {"endpoint": "http://127.0.0.1:9/v1/logs", "headers": {"x-token": TOKEN}}}
    )
    (target,) = build_targets(settings.enabled_targets)
    assert isinstance(target, OtelTarget) and target.name == "otel"
    target.shutdown()
    target.shutdown()


def test_a_target_whose_package_is_missing_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "needs_missing.py").write_text(
        "import factledger_no_such_package  # noqa\n\n"
        "def build(options):\n    raise AssertionError\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = {"fancy": "needs_missing"}
    with pytest.raises(ConfigError) as caught:
        builder("fancy", modules)
    message = str(caught.value)
    assert "export.fancy" in message and "factledger_no_such_package" in message
    assert "\n" not in message
    sys.modules.pop("needs_missing", None)


def test_a_target_module_that_is_not_there_is_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        builder("fancy", {"fancy": "factledger.collector.export.no_such_target"})
    assert str(caught.value) == (
        "export.fancy: this installation has no fancy target"
        " (factledger.collector.export.no_such_target)"
    )


def test_the_service_settings_read_the_section(tmp_path: Path) -> None:
    config = tmp_path / "factledger.toml"
    config.write_text(
        '[export]\ngive_up_seconds = 120\n[export.otel]\nendpoint = "http://127.0.0.1:9/v1/logs"\n'
    )
    settings = ServiceSettings.from_env({"FACTLEDGER_CONFIG": str(config)})
    assert settings.export.limits.give_up_seconds == 120
    assert [t.name for t in settings.export.enabled_targets] == ["otel"]
    config.write_text(f'[export.otel]\nendpoint = "http://x/v1/logs"\nheaders = "{TOKEN}"\n')
    with pytest.raises(ConfigError, match=r"export\.otel: headers") as caught:
        ServiceSettings.from_env({"FACTLEDGER_CONFIG": str(config)})
    assert TOKEN not in str(caught.value)
