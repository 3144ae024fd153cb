"""Where the store's data lives (`StoreConfig`) and the DDL that makes it: the schema
files of `factledger.schemas`, rendered for one server or for a cluster."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from factledger.schemas.cluster import cluster_database_statement, cluster_statements

_DATABASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_DSN_SCHEMES = ("chdb", "http", "https")


@dataclass(frozen=True)
class StoreConfig:
    """Where the data lives. `dsn` is `chdb:///abs/path` (embedded) or `http(s)://...`
    (a server); `database` is created if missing; `retention_days` sets the tables' TTL
    when they are created (an existing table keeps its TTL: see schemas/README.md)."""

    dsn: str
    database: str = "factledger"
    retention_days: int = 30
    cluster: str = ""
    """A ClickHouse cluster name: replicated tables behind Distributed ones (server only)."""

    def __post_init__(self) -> None:
        scheme = self.dsn.partition(":")[0].lower()
        if scheme not in _DSN_SCHEMES:
            raise ValueError(f"store DSN must be chdb://, http:// or https://: {self.dsn!r}")
        if not _DATABASE_NAME.fullmatch(self.database):
            raise ValueError(
                f"database name must be letters, digits and _ (not first a digit): "
                f"{self.database!r}"
            )
        if not 1 <= self.retention_days <= 36_500:
            raise ValueError(f"retention_days must be 1..36500, not {self.retention_days}")
        if self.cluster and not _DATABASE_NAME.fullmatch(self.cluster):
            raise ValueError(f"cluster name must be letters, digits and _: {self.cluster!r}")
        if self.cluster and self.embedded:
            raise ValueError("a cluster needs a ClickHouse server DSN (http:// or https://)")

    @property
    def embedded(self) -> bool:
        return self.dsn.lower().startswith("chdb:")


def schema_statements(database: str, retention_days: int) -> list[str]:
    """Every DDL statement of `factledger.schemas/*.sql`, in file order, with `{db}` and
    `{retention_days}` filled in. Each is idempotent (`IF NOT EXISTS`)."""
    folder = resources.files("factledger.schemas")
    files = sorted(
        (entry for entry in folder.iterdir() if entry.name.endswith(".sql")),
        key=lambda entry: entry.name,
    )
    statements: list[str] = []
    for entry in files:
        text = entry.read_text(encoding="utf-8")
        text = text.replace("{db}", database).replace("{retention_days}", str(retention_days))
        lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
        statements.extend(s.strip() for s in "\n".join(lines).split(";") if s.strip())
    return statements


def ddl_statements(config: StoreConfig) -> list[str]:
    """What `Store.open` runs: the database, then every schema statement; rendered with
    `ON CLUSTER`, replicated local tables and Distributed front tables for a cluster."""
    statements = schema_statements(config.database, config.retention_days)
    if not config.cluster:
        return [f"CREATE DATABASE IF NOT EXISTS {config.database}", *statements]
    return [
        cluster_database_statement(config.database, config.cluster),
        *cluster_statements(statements, config.database, config.cluster),
    ]


def client_settings(config: StoreConfig) -> dict[str, Any]:
    """Session settings of the store's connection. On a cluster, `IN (subquery)` reads the
    shard-local table: every version, finding and review of a turn lives on the turn's
    shard (schemas/cluster.py), so the answer is the same and no data crosses shards.
    Queries that must see other shards say `GLOBAL IN`."""
    return {"distributed_product_mode": "local"} if config.cluster else {}
