"""Start-up errors are one line naming what is wrong: a data directory the service cannot
create or write stops `factledger serve` before the server starts, without a traceback;
a configuration file with unknown keys is named by its first wrong key, never by the
other keys or any value of a file that may hold secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.cli import main
from factledger.collector.access import AccessConfig
from factledger.collector.alerts.rules import load_alert_config
from factledger.processors.errors import ConfigError
from factledger.service_process import free_port

SECRET = "fl-ingest-9f2c51aa77e0d4"


def test_a_data_directory_below_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Below a regular file no directory can be made, for root too (chmod does not stop it).
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    data_dir = blocker / "data"
    code = main(["serve", "--data-dir", str(data_dir), "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "data directory" in err and str(data_dir) in err


def _secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.toml"
    path.write_text(f'"{SECRET}" = "acme"\napi_password = "hunter2-hunter2"\n[zz]\nx = 1\n')
    return path


def test_a_tokens_file_of_other_content_names_no_key_or_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        AccessConfig.load(file=_secret_file(tmp_path))
    message = str(raised.value)
    assert SECRET not in message and "hunter2" not in message
    assert "unknown" in message


def test_an_alerts_file_of_other_content_names_no_key_or_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_alert_config(_secret_file(tmp_path))
    message = str(raised.value)
    assert SECRET not in message and "hunter2" not in message
    assert "api_password" in message or "zz" in message or "a key" in message


def test_an_entry_without_a_tenant_does_not_echo_the_token() -> None:
    with pytest.raises(ConfigError) as raised:
        AccessConfig.load(read_env=SECRET)
    assert SECRET[:10] not in str(raised.value)


def test_a_tenant_given_a_token_by_mistake_is_not_echoed(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(f'[ingest]\n"acme-tenant-name-x" = "{SECRET} x"\n')
    with pytest.raises(ConfigError) as raised:
        AccessConfig.load(file=path)
    assert SECRET[:10] not in str(raised.value)
