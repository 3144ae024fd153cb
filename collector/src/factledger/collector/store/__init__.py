"""The store: FactLedger's one door to ClickHouse (embedded chDB or a server).

Rows come in already shaped by `collector.rows`; queries come out as plain dicts and
lists. Every value a caller passes reaches ClickHouse as a bound server-side parameter
(`{name:Type}`); only the database name (validated in `StoreConfig`) and fixed SQL
fragments are formatted in. One module talks to `clickhouse_connect` (`connection`); the
queries are grouped by what they serve:

    config       StoreConfig, the schema files rendered for a server or a cluster
    connection   Connection: queries, inserts, StoreError
    sql          limits, shared SQL fragments, row shaping
    turns        TurnQueries     the turns list, one turn
    evidence     EvidenceQueries a turn's snapshots and citations, one snapshot
    reviews      ReviewQueries   the review queue, precision, labelled turns for export
    verifications VerificationQueries  answers per finding kind, per listed turn
    guard        GuardQueries    what the in-loop guard did, per model and agent
    rates        RateQueries     reject-rate series, row counts
    alerts       AlertQueries    alert history, notices, deliveries
    recovery     RecoveryQueries owed traces and their spans, stored verdicts
    Store        all of them, plus opening and the writes

A `Store` is safe to share between threads: the chDB client serializes calls on its
handle, and HTTP clients are opened without a session so concurrent calls do not collide.

Exceptions::

    StoreError            a call to ClickHouse failed (`retryable`: trying again may help)
    ValueError            a bad argument (unknown group_by or bucket, negative limit, ...)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import clickhouse_connect

from factledger.collector.private_dirs import private_directory

from ..evidence_rows import SNAPSHOT_COLUMNS, TURN_EVIDENCE_COLUMNS
from ..rows import (
    ALERT_COLUMNS,
    ALERT_DELIVERY_COLUMNS,
    FINDING_COLUMNS,
    REVIEW_COLUMNS,
    REVIEW_WITHDRAWAL_COLUMNS,
    SPAN_COLUMNS,
    TURN_COLUMNS,
    VERIFICATION_COLUMNS,
)
from .alerts import AlertQueries
from .config import StoreConfig, client_settings, ddl_statements, schema_statements
from .connection import INSERT_CHUNK_ROWS, StoreError, _translated, deduplication_token
from .evidence import EvidenceQueries
from .guard import GuardQueries
from .rates import RateQueries
from .recovery import OwedTrace, RecoveryQueries
from .reviews import ReviewQueries
from .sql import (
    BUCKET_SECONDS,
    MAX_LIST_LIMIT,
    MAX_REVIEW_EXPORT,
    MAX_SERIES_POINTS,
    Bucket,
    GroupBy,
)
from .turns import TurnQueries

__all__ = [
    "BUCKET_SECONDS",
    "INSERT_CHUNK_ROWS",
    "MAX_LIST_LIMIT",
    "MAX_REVIEW_EXPORT",
    "MAX_SERIES_POINTS",
    "Bucket",
    "GroupBy",
    "OwedTrace",
    "Store",
    "StoreConfig",
    "StoreError",
    "client_settings",
    "ddl_statements",
    "deduplication_token",
    "schema_statements",
]


class Store(
    TurnQueries,
    EvidenceQueries,
    ReviewQueries,
    RateQueries,
    AlertQueries,
    RecoveryQueries,
    GuardQueries,
):
    """Writes rows and answers the query API's questions. Open with `Store.open`."""

    @classmethod
    def open(cls, config: StoreConfig) -> Store:
        """Connect, create the database if missing and apply every schema file.

        Safe to call on an existing database (the DDL is idempotent). Raises StoreError.
        """
        extra: dict[str, Any] = {} if config.embedded else {"autogenerate_session_id": False}
        if config.embedded and urlsplit(config.dsn).path:
            # chDB creates its files with the process umask: keep them out of reach.
            private_directory(Path(urlsplit(config.dsn).path))
        with _translated("connecting to ClickHouse"):
            client = clickhouse_connect.get_client(
                dsn=config.dsn, settings=client_settings(config), **extra
            )
        store = cls(client, config)
        try:
            with _translated("applying the schema"):
                for statement in ddl_statements(config):
                    client.command(statement)
        except BaseException:
            store.close()
            raise
        return store

    # --- writes ---------------------------------------------------------------------------

    def insert_spans(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `rows.span_row` rows; returns how many. Resending the same spans is
        harmless (they collapse, and every count is distinct)."""
        return self._insert("spans", SPAN_COLUMNS, rows)

    def insert_turns(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `rows.turn_row` rows (one per verdict version); returns how many."""
        return self._insert("turns", TURN_COLUMNS, rows)

    def insert_findings(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `rows.finding_rows` rows; returns how many."""
        return self._insert("findings", FINDING_COLUMNS, rows)

    def insert_verifications(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `rows.verification_rows` rows; returns how many."""
        return self._insert("verifications", VERIFICATION_COLUMNS, rows)

    def insert_snapshots(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `evidence_rows.snapshot_row` rows; returns how many. A document stored
        before collapses with it (the table replaces on tenant and hash)."""
        return self._insert("snapshots", SNAPSHOT_COLUMNS, rows)

    def insert_turn_evidence(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `evidence_rows.turn_evidence_row` rows (one per verdict version)."""
        return self._insert("turn_evidence", TURN_EVIDENCE_COLUMNS, rows)

    def insert_review(self, row: Sequence[Any]) -> None:
        """Insert one `rows.review_row` row."""
        self._insert("reviews", REVIEW_COLUMNS, [row])

    def insert_reviews(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert `rows.review_row` rows in one INSERT (a label covering several turns)."""
        return self._insert("reviews", REVIEW_COLUMNS, rows)

    def insert_review_withdrawal(self, row: Sequence[Any]) -> None:
        """Insert one `rows.review_withdrawal_row` row: that review no longer counts."""
        self._insert("review_withdrawals", REVIEW_WITHDRAWAL_COLUMNS, [row])

    def insert_alert(self, row: Sequence[Any]) -> None:
        """Insert one `rows.alert_row` row (an alert firing or resolving)."""
        self._insert("alerts", ALERT_COLUMNS, [row])

    def insert_alert_delivery(self, row: Sequence[Any]) -> None:
        """Insert one `rows.alert_delivery_row` row."""
        self._insert("alert_deliveries", ALERT_DELIVERY_COLUMNS, [row])
