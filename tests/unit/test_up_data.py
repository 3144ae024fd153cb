"""`factledger up --fresh`: what it removes from the data directory, and what it refuses."""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import get_args

import pytest

from factledger import cli
from factledger.collector.settings import ServiceSettings
from factledger.processors.errors import FactLedgerError
from factledger.up import DemoMode, clear_data


def test_fresh_removes_the_store_the_log_and_the_dashboard_log_only(tmp_path: Path):
    data = tmp_path / "data"
    for directory in ("chdb/store", "wal"):
        (data / directory).mkdir(parents=True)
        (data / directory / "part").write_text("x")
    (data / "dashboard.log").write_text("log")
    (data / "notes.txt").write_text("mine")
    removed = clear_data(ServiceSettings(data_dir=data))
    assert removed == [data / "chdb", data / "wal", data / "dashboard.log"]
    assert sorted(p.name for p in data.iterdir()) == ["notes.txt"]


def test_fresh_on_an_empty_data_directory_removes_nothing(tmp_path: Path):
    assert clear_data(ServiceSettings(data_dir=tmp_path / "never-used")) == []


def test_fresh_refuses_a_store_outside_the_data_directory(tmp_path: Path):
    settings = ServiceSettings(data_dir=tmp_path, store_dsn="http://clickhouse:8123")
    with pytest.raises(FactLedgerError, match="FACTLEDGER_STORE"):
        clear_data(settings)


def test_fresh_refuses_a_store_a_running_service_has_open(tmp_path: Path):
    status = tmp_path / "chdb" / "status"
    status.parent.mkdir()
    status.write_text("PID: 1\n")
    with status.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the embedded ClickHouse does while it runs
        with pytest.raises(FactLedgerError, match="another process has open"):
            clear_data(ServiceSettings(data_dir=tmp_path))
    assert status.exists()
    assert clear_data(ServiceSettings(data_dir=tmp_path)) == [tmp_path / "chdb"]


def test_the_demo_choices_of_the_command_line_are_those_up_knows():
    assert get_args(DemoMode) == cli.DEMO_MODES
