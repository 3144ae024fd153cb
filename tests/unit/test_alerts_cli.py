"""The alert settings and command-line checks that need no store: a bad rules file stops
`serve`, `up` and `alerts check` before anything starts; a missing or locked store is
refused with a clear message."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from factledger.alerts_cli import embedded_path, ensure_unlocked
from factledger.cli import main
from factledger.collector.settings import ServiceSettings
from factledger.processors.errors import ConfigError, FactLedgerError


def test_settings_read_the_alert_variables(tmp_path: Path) -> None:
    env = {"FACTLEDGER_ALERTS": "rules.toml", "FACTLEDGER_ALERT_INTERVAL_SECONDS": "2.5"}
    settings = ServiceSettings.from_env(env)
    assert settings.alerts_file == Path("rules.toml")
    assert settings.alert_interval_seconds == 2.5
    assert ServiceSettings.from_env({}).alerts_file is None
    assert ServiceSettings.from_env({}).alert_interval_seconds == 30.0
    assert ServiceSettings.from_env(env, alerts_file=tmp_path).alerts_file == tmp_path


@pytest.mark.parametrize("value", ["0", "-1", "soon"], ids=["zero", "negative", "not a number"])
def test_a_bad_interval_names_the_variable(value: str) -> None:
    with pytest.raises(ConfigError, match="FACTLEDGER_ALERT_INTERVAL_SECONDS"):
        ServiceSettings.from_env({"FACTLEDGER_ALERT_INTERVAL_SECONDS": value})


@pytest.mark.parametrize(
    "command",
    [
        ["serve", "--alerts"],
        ["up", "--demo-turns", "0", "--alerts"],
        ["alerts", "check", "--rules"],
    ],
    ids=["serve", "up", "alerts check"],
)
def test_a_bad_rules_file_stops_the_command_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    bad = tmp_path / "alerts.toml"
    bad.write_text('[[rules]]\nname = "r"\nwindow = "7s"\n', encoding="utf-8")
    assert main([*command, str(bad)]) == 2
    err = capsys.readouterr().err
    assert "alerts.toml" in err and "window" in err


def test_check_refuses_a_store_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["alerts", "check", "--store", f"chdb://{tmp_path / 'none'}"]) == 2
    assert "no store at" in capsys.readouterr().err


def test_check_refuses_a_locked_store(tmp_path: Path) -> None:
    (tmp_path / "status").write_text("pid\n")
    fd = os.open(tmp_path / "status", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running engine holds it
        with pytest.raises(FactLedgerError, match="in use by another process"):
            ensure_unlocked(tmp_path)
    finally:
        os.close(fd)
    ensure_unlocked(tmp_path)  # released: no complaint


@pytest.mark.parametrize(
    ("dsn", "path"),
    [
        ("chdb:///var/lib/fl", Path("/var/lib/fl")),
        ("chdb:///var/lib/fl?x=1", Path("/var/lib/fl")),
        ("http://ch:8123", None),
    ],
    ids=["embedded", "embedded with options", "server"],
)
def test_embedded_path(dsn: str, path: Path | None) -> None:
    assert embedded_path(dsn) == path


def test_check_help_says_the_service_must_not_hold_the_store(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["alerts", "check", "--help"])
    out = capsys.readouterr().out
    assert "one process" in out and "GET /api/v1/alerts" in out
