"""Cluster DDL rendering (schemas/cluster.py) on the shipped schema and on small cases."""

from __future__ import annotations

import re

import pytest

from factledger.collector.settings import ServiceSettings
from factledger.collector.store import (
    StoreConfig,
    client_settings,
    ddl_statements,
    deduplication_token,
    schema_statements,
)
from factledger.processors.errors import ConfigError
from factledger.schemas.cluster import (
    SHARDING_KEYS,
    cluster_database_statement,
    cluster_statements,
)

SHIPPED = schema_statements("factledger", 30)
RENDERED = cluster_statements(SHIPPED, "factledger", "prod")


def _tables(statements: list[str]) -> list[str]:
    found = (re.match(r"CREATE TABLE IF NOT EXISTS factledger\.(\w+)", s) for s in statements)
    return [m.group(1) for m in found if m]


def test_every_statement_runs_on_the_cluster() -> None:
    assert all(" ON CLUSTER prod" in s.splitlines()[0] for s in RENDERED)


def test_every_table_gets_a_replicated_local_table_and_a_distributed_front() -> None:
    tables = _tables(SHIPPED)
    assert tables and set(tables) <= set(SHARDING_KEYS)
    rendered = _tables(RENDERED)
    for table in tables:
        assert f"{table}_local" in rendered
        front = next(
            s for s in RENDERED if s.startswith(f"CREATE TABLE IF NOT EXISTS factledger.{table} ")
        )
        assert f"AS factledger.{table}_local" in front
        assert f"Distributed(prod, factledger, {table}_local, {SHARDING_KEYS[table]})" in front


PATH = "'/clickhouse/tables/{shard}/{database}/%s_local', '{replica}'"


@pytest.mark.parametrize(
    ("table", "engine"),
    [
        ("spans", "ReplicatedReplacingMergeTree(%s)" % (PATH % "spans")),
        ("turns", "ReplicatedReplacingMergeTree(%s, Version)" % (PATH % "turns")),
        ("reviews", "ReplicatedMergeTree(%s)" % (PATH % "reviews")),
        (
            "turn_stats_1m_data",
            "ReplicatedAggregatingMergeTree(%s)" % (PATH % "turn_stats_1m_data"),
        ),
    ],
    ids=["plain-replacing", "replacing-keeps-its-version-column", "merge-tree", "aggregating"],
)
def test_engines_become_replicated_with_their_arguments(table: str, engine: str) -> None:
    local = next(s for s in RENDERED if f"factledger.{table}_local ON CLUSTER" in s)
    assert f"ENGINE = {engine}" in local


def test_local_tables_keep_sort_key_partition_and_ttl() -> None:
    single = next(s for s in SHIPPED if "factledger.turns\n" in s)
    local = next(s for s in RENDERED if "factledger.turns_local ON CLUSTER" in s)
    for clause in ("PARTITION BY", "ORDER BY", "TTL", "INDEX idx_trace_id"):
        line = next(x for x in single.splitlines() if x.strip().startswith(clause))
        assert line in local


def test_views_read_and_write_shard_local_tables() -> None:
    views = [s for s in RENDERED if s.startswith("CREATE MATERIALIZED VIEW")]
    assert views
    for view in views:
        assert re.search(r"\bTO factledger\.\w+_local\b", view)
        assert re.search(r"\bFROM factledger\.\w+_local\b", view)


def test_a_migration_alters_the_local_and_the_front_table() -> None:
    alter = "ALTER TABLE factledger.turns ADD COLUMN IF NOT EXISTS X String"
    assert cluster_statements([alter], "factledger", "c") == [
        "ALTER TABLE factledger.turns_local ON CLUSTER c ADD COLUMN IF NOT EXISTS X String",
        "ALTER TABLE factledger.turns ON CLUSTER c ADD COLUMN IF NOT EXISTS X String",
    ]


def test_the_database_is_created_on_the_cluster() -> None:
    assert cluster_database_statement("factledger", "prod") == (
        "CREATE DATABASE IF NOT EXISTS factledger ON CLUSTER prod"
    )


@pytest.mark.parametrize(
    ("statements", "cluster", "message"),
    [
        (
            ["CREATE TABLE IF NOT EXISTS db.new_table (a Int8) ENGINE = MergeTree ORDER BY a"],
            "c",
            "no sharding key",
        ),
        (["CREATE TABLE IF NOT EXISTS db.turns (a Int8) ENGINE = Memory"], "c", "engine"),
        (["DROP TABLE db.turns"], "c", "cannot render"),
        ([], "bad-name", "cluster name"),
        ([], "x; DROP", "cluster name"),
    ],
    ids=[
        "new-table-without-key",
        "non-merge-tree-engine",
        "unknown-statement",
        "dash-in-cluster",
        "injection-in-cluster",
    ],
)
def test_what_cannot_be_rendered_is_refused(
    statements: list[str], cluster: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        cluster_statements(statements, "db", cluster)


def test_the_store_runs_the_cluster_ddl_and_reads_shard_locally() -> None:
    config = StoreConfig(dsn="http://ch-1:8123", cluster="analytics")
    statements = ddl_statements(config)
    assert statements[0] == "CREATE DATABASE IF NOT EXISTS factledger ON CLUSTER analytics"
    assert all(" ON CLUSTER analytics" in s for s in statements)
    assert not [s for s in statements if "non_replicated_deduplication_window" in s]
    assert client_settings(config) == {"distributed_product_mode": "local"}
    single = StoreConfig(dsn="http://ch-1:8123")
    assert ddl_statements(single)[0] == "CREATE DATABASE IF NOT EXISTS factledger"
    assert client_settings(single) == {}


@pytest.mark.parametrize(
    ("dsn", "cluster", "message"),
    [
        ("chdb:///tmp/x", "analytics", "needs a ClickHouse server"),
        ("http://ch-1:8123", "bad-name", "cluster name"),
    ],
    ids=["embedded-engine-has-no-cluster", "cluster-name-checked"],
)
def test_cluster_configuration_is_checked(dsn: str, cluster: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StoreConfig(dsn=dsn, cluster=cluster)


def test_the_cluster_setting_needs_a_server() -> None:
    with pytest.raises(ConfigError, match="FACTLEDGER_CLUSTER needs a ClickHouse server"):
        ServiceSettings.from_env({"FACTLEDGER_CLUSTER": "analytics"})
    env = {"FACTLEDGER_CLUSTER": "analytics", "FACTLEDGER_STORE": "http://ch-1:8123"}
    assert ServiceSettings.from_env(env).cluster == "analytics"


def test_deduplication_tokens_follow_row_identity() -> None:
    span = ["ts", "acme", "trace", "span", "other", "ingested-at-1"]
    resent = [*span[:-1], "ingested-at-2"]
    assert deduplication_token("spans", [span]) == deduplication_token("spans", [resent])
    assert deduplication_token("spans", [span]) != deduplication_token("turns", [span])
    other_tenant = [span[0], "globex", *span[2:]]
    assert deduplication_token("spans", [span]) != deduplication_token("spans", [other_tenant])
    review = ["acme", "turn", "review-1", "hallucination"]
    assert deduplication_token("reviews", [review]) != deduplication_token(
        "reviews", [[*review[:-1], "not_hallucination"]]
    )
