"""Store configuration and the schema files, without a database."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.collector.store import StoreConfig, schema_statements


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"dsn": "postgres://x"}, "DSN", id="unknown-scheme"),
        pytest.param({"dsn": "/var/lib/factledger"}, "DSN", id="bare-path"),
        pytest.param({"database": "fact-ledger"}, "database", id="dash-in-database"),
        pytest.param({"database": "db; DROP TABLE x"}, "database", id="sql-in-database"),
        pytest.param({"database": "1st"}, "database", id="database-starting-with-digit"),
        pytest.param({"database": ""}, "database", id="empty-database"),
        pytest.param({"retention_days": 0}, "retention", id="zero-retention"),
    ],
)
def test_bad_config_fails_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StoreConfig(**{"dsn": "chdb:///tmp/x", **kwargs})


@pytest.mark.parametrize(
    ("dsn", "embedded"),
    [
        pytest.param("chdb:///var/lib/factledger", True, id="chdb-path"),
        pytest.param("http://localhost:8123", False, id="http-server"),
        pytest.param("https://user:pw@ch.example:8443/db", False, id="https-server"),
    ],
)
def test_accepted_dsns(dsn: str, embedded: bool) -> None:
    assert StoreConfig(dsn=dsn).embedded is embedded


def test_schema_statements_are_rendered_and_idempotent() -> None:
    everything = schema_statements("ledger_x", 7)
    statements = [s for s in everything if s.startswith("CREATE ")]
    settings = [s for s in everything if not s.startswith("CREATE ")]
    assert len(statements) == 14  # snapshots and turn_evidence (011) among them
    # Migrations are idempotent too: setting the same value again changes nothing, and a
    # column is added only when missing.
    assert settings and all(
        s.startswith("ALTER TABLE ledger_x.")
        and (" MODIFY SETTING " in s or " ADD COLUMN IF NOT EXISTS " in s)
        for s in settings
    )
    for statement in statements:
        assert "IF NOT EXISTS ledger_x." in statement
        assert "{db}" not in statement
        assert "{retention_days}" not in statement
    assert sum("INTERVAL 7 DAY" in s for s in statements) == 12  # every table, not the views
    views = [s.split()[6] for s in statements if s.startswith("CREATE MATERIALIZED VIEW")]
    assert views == ["ledger_x.turn_stats_1m", "ledger_x.turn_versions_mv"]
