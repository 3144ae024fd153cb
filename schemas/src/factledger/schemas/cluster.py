"""Cluster DDL: the single-node schema rewritten for a ClickHouse cluster
(`FACTLEDGER_CLUSTER=name`).

Each `CREATE TABLE db.t` becomes a replicated `db.t_local` on every node plus a
`Distributed` table `db.t` in front of it, so queries and inserts keep their table names.
Materialized views run per shard: they read the local source table and write the local
target. Pure string work on the statements `collector.store.schema_statements` returns;
nothing here talks to ClickHouse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

LOCAL_SUFFIX = "_local"

# Rows that are read together live on one shard: every version and finding of a turn
# (the latest-version subquery then stays shard-local), every span of a trace, every row
# of an alert. A new table must choose its key here: rendering refuses unknown tables.
SHARDING_KEYS: Mapping[str, str] = {
    "spans": "cityHash64(Tenant, TraceId)",
    "turns": "cityHash64(Tenant, TurnId)",
    "findings": "cityHash64(Tenant, TurnId)",
    "reviews": "cityHash64(Tenant, TurnId)",
    "review_withdrawals": "cityHash64(Tenant, TurnId)",
    "turn_versions": "cityHash64(Tenant, TurnId)",
    "verifications": "cityHash64(Tenant, TurnId)",
    "turn_evidence": "cityHash64(Tenant, TurnId)",
    # A snapshot is looked up by its hash alone; whichever shard holds it answers.
    "snapshots": "cityHash64(Tenant, Hash)",
    "alerts": "cityHash64(Tenant, AlertId)",
    "alert_deliveries": "cityHash64(Tenant, AlertId)",
    # Written only by its view on the shard that holds the turn; readers merge the
    # states across shards, so any key is correct for a direct insert.
    "turn_stats_1m_data": "cityHash64(Tenant, Model, AgentName, ServiceName)",
}

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CREATE_TABLE = re.compile(r"^CREATE TABLE IF NOT EXISTS (\w+)\.(\w+)(?=\s)")
_CREATE_VIEW = re.compile(r"^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)\.(\w+)(?=\s)")
_ALTER_TABLE = re.compile(r"^ALTER TABLE (\w+)\.(\w+)(?=\s)")
_NON_REPLICATED_SETTING = "non_replicated_deduplication_window"
_ENGINE = re.compile(r"ENGINE = (\w*MergeTree)(?:\(([^()]*)\))?")


def cluster_database_statement(database: str, cluster: str) -> str:
    """`CREATE DATABASE` on every node of `cluster`."""
    _check_identifier("database", database)
    _check_identifier("cluster", cluster)
    return f"CREATE DATABASE IF NOT EXISTS {database} ON CLUSTER {cluster}"


def cluster_statements(statements: Sequence[str], database: str, cluster: str) -> list[str]:
    """The single-node `statements` (with `{db}` already filled in as `database`) rendered
    for `cluster`: replicated `<table>_local` tables, `Distributed` tables under the
    original names, views wired shard-locally, `ON CLUSTER` everywhere.

    Raises ValueError for a statement it cannot rewrite (an unknown statement kind, a
    table without a sharding key, an engine that is not a *MergeTree).
    """
    _check_identifier("database", database)
    _check_identifier("cluster", cluster)
    rendered: list[str] = []
    for statement in statements:
        rendered.extend(_render(statement.strip(), database, cluster))
    return rendered


def _render(statement: str, database: str, cluster: str) -> list[str]:
    if match := _CREATE_TABLE.match(statement):
        return _table(statement, match, database, cluster)
    if match := _CREATE_VIEW.match(statement):
        return [_view(statement, match, database, cluster)]
    if match := _ALTER_TABLE.match(statement):
        if _NON_REPLICATED_SETTING in statement:
            return []  # replicated tables deduplicate retried inserts by themselves
        # A migration: the column must exist on the local table and on the front table.
        db, table = match.group(1), match.group(2)
        rest = statement[match.end() :]
        return [
            f"ALTER TABLE {db}.{table}{LOCAL_SUFFIX} ON CLUSTER {cluster}{rest}",
            f"ALTER TABLE {db}.{table} ON CLUSTER {cluster}{rest}",
        ]
    raise ValueError(f"cannot render for a cluster: {statement[:60]!r}")


def _table(statement: str, match: re.Match[str], database: str, cluster: str) -> list[str]:
    db, table = match.group(1), match.group(2)
    if table not in SHARDING_KEYS:
        raise ValueError(f"table {table!r} has no sharding key in schemas/cluster.py")
    local = f"{table}{LOCAL_SUFFIX}"
    engine = _ENGINE.search(statement)
    if engine is None:
        raise ValueError(f"table {table!r}: engine is not a *MergeTree")
    path = f"'/clickhouse/tables/{{shard}}/{{database}}/{local}', '{{replica}}'"
    args = f"{path}, {engine.group(2)}" if engine.group(2) else path
    replicated = f"ENGINE = Replicated{engine.group(1)}({args})"
    head = f"CREATE TABLE IF NOT EXISTS {db}.{local} ON CLUSTER {cluster}"
    body = statement[match.end() : engine.start()] + replicated + statement[engine.end() :]
    front = (
        f"CREATE TABLE IF NOT EXISTS {db}.{table} ON CLUSTER {cluster} AS {db}.{local}\n"
        f"ENGINE = Distributed({cluster}, {database}, {local}, {SHARDING_KEYS[table]})"
    )
    return [head + body, front]


def _view(statement: str, match: re.Match[str], database: str, cluster: str) -> str:
    db, view = match.group(1), match.group(2)
    rest = statement[match.end() :]
    # Each shard's view sees the inserts into its own local source table and writes its
    # own local target; the Distributed tables then read across shards.
    rest, targets = re.subn(rf"\bTO {database}\.(\w+)", rf"TO {database}.\1{LOCAL_SUFFIX}", rest)
    rest, sources = re.subn(
        rf"\bFROM {database}\.(\w+)", rf"FROM {database}.\1{LOCAL_SUFFIX}", rest
    )
    if targets != 1 or sources != 1:
        raise ValueError(f"view {view!r}: expected one TO and one FROM table")
    return f"CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.{view} ON CLUSTER {cluster}{rest}"


def _check_identifier(what: str, value: str) -> None:
    if not _IDENTIFIER.fullmatch(value):
        raise ValueError(f"{what} name must be letters, digits and _, not {value!r}")
