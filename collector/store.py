"""The store: FactLedger's one door to ClickHouse (embedded chDB or a server).

This is the only module that imports `clickhouse_connect`. Rows come in already shaped
by `collector.rows`; queries come out as plain dicts and lists. Every value a caller
passes reaches ClickHouse as a bound server-side parameter (`{name:Type}`); only the
database name (validated in `StoreConfig`) and fixed SQL fragments are formatted in.

A `Store` is safe to share between threads: the chDB client serializes calls on its
handle, and HTTP clients are opened without a session so concurrent calls do not collide.

Exceptions::

    StoreError            a call to ClickHouse failed (`retryable`: trying again may help)
    ValueError            a bad argument (unknown group_by or bucket, negative limit, ...)
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

import clickhouse_connect
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError, OperationalError

from factledger.collector.private_dirs import private_directory
from factledger.processors.assembler import PriorVerdict
from factledger.schemas.cluster import cluster_database_statement, cluster_statements

from .rows import (
    ALERT_COLUMNS,
    ALERT_DELIVERY_COLUMNS,
    FINDING_COLUMNS,
    REVIEW_COLUMNS,
    REVIEW_WITHDRAWAL_COLUMNS,
    SPAN_COLUMNS,
    TURN_COLUMNS,
    epoch_ms,
    from_epoch_ms,
)
from .views import finding_view, max_score, span_view, tool_call_view

GroupBy = Literal["model", "agent", "service", "kind"]
Bucket = Literal["1m", "5m", "1h", "1d"]

BUCKET_SECONDS: dict[str, int] = {"1m": 60, "5m": 300, "1h": 3600, "1d": 86400}
_GROUP_COLUMNS: dict[str, str] = {"model": "Model", "agent": "AgentName", "service": "ServiceName"}

INSERT_CHUNK_ROWS = 50_000
"""Rows per INSERT at most: bounds one request's memory; batches below it go in whole."""
MAX_LIST_LIMIT = 1_000
MAX_SERIES_POINTS = 10_000
"""Buckets one reject-rate series may hold (a 1m bucket over a week is 10,080)."""
MAX_OPEN_TRACES = 10_000
MAX_SPAN_ROWS = 100_000
_TRACE_IDS_PER_QUERY = 1_000
_SPAN_IDS_PER_QUERY = 10_000

_DATABASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_DSN_SCHEMES = ("chdb", "http", "https")
# ClickHouse error codes worth a retry: timeouts, overload, network, too many parts, and
# the disk and resource errors (a full disk, no memory, a file that cannot be written or
# opened, a system call that failed). Those say nothing about the rows: refusing them as
# bad data would drop spans already acknowledged.
_RETRYABLE_CODES = frozenset(
    {
        74,  # CANNOT_READ_FROM_FILE_DESCRIPTOR
        75,  # CANNOT_WRITE_TO_FILE_DESCRIPTOR
        76,  # CANNOT_OPEN_FILE
        77,  # CANNOT_CLOSE_FILE
        159,  # TIMEOUT_EXCEEDED
        173,  # CANNOT_ALLOCATE_MEMORY
        202,  # TOO_MANY_SIMULTANEOUS_QUERIES
        209,  # SOCKET_TIMEOUT
        210,  # NETWORK_ERROR
        236,  # ABORTED
        241,  # MEMORY_LIMIT_EXCEEDED
        242,  # TABLE_IS_READ_ONLY
        243,  # NOT_ENOUGH_SPACE
        252,  # TOO_MANY_PARTS
        319,  # UNKNOWN_STATUS_OF_INSERT
        425,  # SYSTEM_ERROR
        439,  # CANNOT_SCHEDULE_TASK
    }
)
# The same failures seen in the text, for an error that carries no code (or the generic
# one of a wrapped system error): errno 28 is ENOSPC, 12 ENOMEM, 24 EMFILE.
_RESOURCE_TEXT = re.compile(
    r"not enough space|no space left on device|errno:? 28\b|cannot allocate memory"
    r"|errno:? 12\b|memory limit|too many open files|errno:? 24\b|disk quota exceeded",
    re.IGNORECASE,
)

# The spans columns as `rows.span_from_row` and `views.span_view` read them: times as
# Unix nanoseconds. Aliases differ from column names (an alias equal to the column it
# wraps would be cyclic), `_span_row` renames them back.
_SPAN_SELECT = """
    toUnixTimestamp64Nano(Timestamp) AS ts_ns, Tenant, TraceId, SpanId, ParentSpanId,
    TraceState, SpanName, SpanKind, ServiceName, ResourceAttributes, ScopeName, ScopeVersion,
    SpanAttributes, Duration, StatusCode, StatusMessage,
    arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp) AS event_ts_ns,
    Events.Name AS event_names, Events.Attributes AS event_attributes, AttributeTypes,
    toUnixTimestamp64Milli(IngestedAt) AS ingested_ms
"""
_SPAN_ALIASES = {
    "ts_ns": "Timestamp",
    "event_ts_ns": "Events.Timestamp",
    "event_names": "Events.Name",
    "event_attributes": "Events.Attributes",
    "ingested_ms": "IngestedAt",
}

# The latest version of every turn of a tenant, as "not a superseded version": the rows of
# every version below a turn's highest. Only re-judged turns (Version > 1) contribute, so
# the set stays small; the set of every turn's latest version (a GROUP BY over the whole
# table, probed row by row) took about a second per million turns. Duplicate rows of one
# version (a retried insert) are removed by `LIMIT 1 BY TurnId` in the queries using this.
_LATEST = """
    (TurnId, Version) NOT IN (
        SELECT TurnId, arrayJoin(range(toUInt32(max(Version)))) FROM {db}.turns
        WHERE Tenant = {tenant:String} AND Version > 1 GROUP BY TurnId
    )
"""

# A tenant's reviews that still count: every review no withdrawal names (an undo). A turn's
# label is the latest of these; a turn without any is back in the review queue.
_LIVE_REVIEWS = """
    SELECT * FROM {db}.reviews WHERE Tenant = {tenant:String} AND ReviewId NOT IN (
        SELECT ReviewId FROM {db}.review_withdrawals WHERE Tenant = {tenant:String}
    )
"""

MAX_REVIEW_EXPORT = 10_000
"""Labelled turns one export holds at most (newest labels first)."""
_TURN_IDS_PER_QUERY = 1_000

_TURN_SUMMARY = """
    TurnId, TraceId, ConversationId, ServiceName, AgentName, Model,
    toUnixTimestamp64Milli(StartedAt) AS started_ms, toUnixTimestamp64Milli(EndedAt) AS ended_ms,
    Verdict, Kinds, ReplyPreview, Version
"""


class StoreError(Exception):
    """A call to ClickHouse failed. `retryable` is True when the same call may succeed
    later (timeouts, overload, a lost connection, a full disk, no memory); False for bad
    data or bad SQL."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


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


_DEDUP_KEYS: Mapping[str, tuple[int, ...]] = {
    "spans": (1, 2, 3),  # Tenant, TraceId, SpanId
    "turns": (0, 1, 2),  # Tenant, TurnId, Version
    "findings": (0, 1, 2, 3),  # Tenant, TurnId, Version, Idx
}
"""Positions of the columns that identify a row, per table; other tables hash whole rows."""


def deduplication_token(table: str, rows: Sequence[Sequence[Any]]) -> str:
    """The `insert_deduplication_token` of one INSERT: equal for a resend of the same rows,
    so ClickHouse stores a retried batch once (tables keep a deduplication window: see
    schemas/008_deduplication.sql). Spans, turn versions and findings are identified by
    their ids; a span is immutable once ended, so equal ids mean an equal row."""
    digest = hashlib.blake2b(table.encode(), digest_size=16)
    positions = _DEDUP_KEYS.get(table)
    for row in rows:
        picked = [row[i] for i in positions] if positions else row
        digest.update(repr(picked).encode())
        digest.update(b"\0")
    return digest.hexdigest()


class _SerializationErrorFilter(logging.Filter):
    """The driver logs a full traceback for every value it cannot serialize, then raises;
    `_translated` turns that into a StoreError carrying the same reason, and the caller
    logs it once per row it drops. Without this filter one bad row in a batch of n logs
    about log2(n) tracebacks while the batch is halved down to it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error serializing column")


logging.getLogger("clickhouse_connect.driver.transform").addFilter(_SerializationErrorFilter())


def _retryable(exc: ClickHouseError) -> bool:
    """True for a failure of the store rather than of the data: the same call may succeed
    once the server is back, the disk has room or memory is free."""
    if isinstance(exc, OperationalError) or getattr(exc, "code", None) in _RETRYABLE_CODES:
        return True
    return _RESOURCE_TEXT.search(str(exc)) is not None


@contextmanager
def _translated(action: str) -> Iterator[None]:
    try:
        yield
    except ClickHouseError as exc:
        raise StoreError(f"{action} failed: {exc}", retryable=_retryable(exc)) from exc
    except (ValueError, TypeError, OverflowError, struct.error) as exc:
        # The driver serializes rows itself and lets Python's own errors through: a value
        # of the wrong type for its column. Sending the same rows again cannot help.
        raise StoreError(f"{action} failed: {exc!r}", retryable=False) from exc


def _check_limit(name: str, value: int, most: int) -> None:
    if not 0 <= value <= most:
        raise ValueError(f"{name} must be 0..{most}, not {value}")


class Store:
    """Writes rows and answers the query API's questions. Open with `Store.open`."""

    def __init__(self, client: Client, config: StoreConfig) -> None:
        self._client: Client | None = client
        self._config = config
        self._db = config.database
        self._close_lock = threading.Lock()

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

    @property
    def config(self) -> StoreConfig:
        return self._config

    def close(self) -> None:
        """Release the connection. Idempotent; later calls raise StoreError."""
        with self._close_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # --- plumbing -------------------------------------------------------------------------

    def _live(self) -> Client:
        client = self._client
        if client is None:
            raise StoreError("the store is closed", retryable=False)
        return client

    def _sql(self, text: str) -> str:
        return text.replace("{db}", self._db)

    def _query(self, sql: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        client = self._live()
        with _translated("query"):
            result = client.query(self._sql(sql), parameters=dict(params))
            return list(result.named_results())

    def _scalar(self, sql: str, params: Mapping[str, Any]) -> int:
        rows = self._query(sql, params)
        return int(next(iter(rows[0].values()))) if rows else 0

    def _insert(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
        width = len(columns)
        for row in rows:
            if len(row) != width:
                raise ValueError(f"a {table} row has {len(row)} values, not {width}")
        client = self._live()
        for start in range(0, len(rows), INSERT_CHUNK_ROWS):
            chunk = rows[start : start + INSERT_CHUNK_ROWS]
            data = [list(column) for column in zip(*chunk, strict=True)]
            with _translated(f"insert into {table}"):
                client.insert(
                    table,
                    data,
                    column_names=list(columns),
                    database=self._db,
                    column_oriented=True,
                    settings={
                        "insert_deduplication_token": deduplication_token(table, chunk),
                        # A view's target (turn_versions) skips the block its source skipped.
                        "deduplicate_blocks_in_dependent_materialized_views": 1,
                    },
                )
        return len(rows)

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

    # --- turns ----------------------------------------------------------------------------

    def list_turns(
        self,
        tenant: str,
        *,
        verdict: str | Sequence[str] | None = None,
        model: str | None = None,
        agent: str | None = None,
        kind: str | None = None,
        trace_id: str | None = None,
        conversation_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """The latest version of the tenant's turns, newest first, and how many match.

        Filters apply to the latest version; `since` <= StartedAt < `until`; `verdict` is
        one verdict or several (any of them); `q` matches replies containing it, ignoring
        case. Keys:
        turn_id, trace_id, conversation_id, service, agent, model, started_at, ended_at
        (aware UTC datetimes), verdict, kinds, reply_preview, version, and why (the
        message of the finding that decides the verdict, see `_reasons`; empty without
        findings).
        """
        _check_limit("limit", limit, MAX_LIST_LIMIT)
        _check_limit("offset", offset, 2**32 - 1)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit, "offset": offset}
        conditions = ["Tenant = {tenant:String}", _LATEST]
        verdicts = None if verdict is None or isinstance(verdict, str) else list(verdict)
        filters: list[tuple[str, Any, str]] = [
            (
                "verdict",
                verdict if isinstance(verdict, str) else None,
                "Verdict = {verdict:String}",
            ),
            ("verdicts", verdicts, "Verdict IN {verdicts:Array(String)}"),
            ("q", q or None, "positionCaseInsensitiveUTF8(Reply, {q:String}) > 0"),
            ("model", model, "Model = {model:String}"),
            ("agent", agent, "AgentName = {agent:String}"),
            ("kind", kind, "has(Kinds, {kind:String})"),
            ("trace_id", trace_id, "TraceId = {trace_id:String}"),
            ("conversation_id", conversation_id, "ConversationId = {conversation_id:String}"),
            (
                "since_ms",
                None if since is None else epoch_ms(since),
                "StartedAt >= fromUnixTimestamp64Milli({since_ms:Int64})",
            ),
            (
                "until_ms",
                None if until is None else epoch_ms(until),
                "StartedAt < fromUnixTimestamp64Milli({until_ms:Int64})",
            ),
        ]
        for name, value, condition in filters:
            if value is not None:
                params[name] = value
                conditions.append(condition)
        where = " AND ".join(conditions)
        # Counted before the page is read: turns only arrive, so a page never holds fewer
        # of them than the count says.
        total = self._scalar(f"SELECT uniqExact(TurnId) FROM {{db}}.turns WHERE {where}", params)
        # The page's ids first, reading only the filtered and sorted columns; the wide
        # columns then for those ids alone, through the primary key.
        page = (
            f"SELECT TurnId FROM {{db}}.turns WHERE {where}"
            " ORDER BY StartedAt DESC, TurnId DESC LIMIT 1 BY TurnId"
            " LIMIT {limit:UInt32} OFFSET {offset:UInt32}"
        )
        rows = self._query(
            f"SELECT {_TURN_SUMMARY} FROM {{db}}.turns"
            f" WHERE Tenant = {{tenant:String}} AND TurnId IN ({page})"
            " ORDER BY StartedAt DESC, TurnId DESC, Version DESC LIMIT 1 BY TurnId",
            params,
        )
        reasons = self._reasons(tenant, [row["TurnId"] for row in rows])
        turns = [_turn_summary(row) for row in rows]
        for turn in turns:
            turn["why"] = reasons.get((turn["turn_id"], turn["version"]), "")
        return turns, total

    def _reasons(self, tenant: str, turn_ids: Sequence[str]) -> dict[tuple[str, int], str]:
        """Per (turn, version) of `turn_ids`, the message of the finding that decides the
        verdict: the first (by Idx) of the highest severity. A list page's turns only, so
        the filter on TurnId reads them through the primary key."""
        if not turn_ids:
            return {}
        rows = self._query(
            "SELECT TurnId, Version, argMin(Message,"
            " (multiIf(Severity = 'reject', 0, Severity = 'flag', 1, 2), Idx)) AS why"
            " FROM {db}.findings"
            " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}"
            " GROUP BY TurnId, Version",
            {"tenant": tenant, "turn_ids": list(turn_ids)},
        )
        return {(row["TurnId"], int(row["Version"])): str(row["why"]) for row in rows}

    def get_turn(self, tenant: str, turn_id: str) -> dict[str, Any] | None:
        """The latest version of one turn with its findings, spans, reviews and the verdict
        history (`versions`, oldest first); None when the tenant has no such turn."""
        params = {"tenant": tenant, "turn_id": turn_id}
        where = "Tenant = {tenant:String} AND TurnId = {turn_id:String}"

        # The history lives in turn_versions: merges of `turns` keep only the latest version.
        def history(table: str) -> list[dict[str, Any]]:
            return self._query(
                "SELECT Version, Verdict, Kinds,"
                " toUnixTimestamp64Milli(ValidatedAt) AS validated_ms"
                f" FROM {{db}}.{table} WHERE {where} ORDER BY Version LIMIT 1 BY Version",
                params,
            )

        versions = history("turn_versions") or history("turns")
        if not versions:
            return None
        latest = self._query(
            f"SELECT {_TURN_SUMMARY}, Provider, UserMessage, Reply, ToolCalls, SpanIds,"
            " Validators, MaxScore, HasClass5,"
            " toUnixTimestamp64Milli(ValidatedAt) AS validated_ms"
            f" FROM {{db}}.turns WHERE {where} ORDER BY Version DESC LIMIT 1",
            params,
        )[0]
        turn = _turn_summary(latest)
        turn.update(
            provider=latest["Provider"],
            validated_at=from_epoch_ms(latest["validated_ms"]),
            user_message=latest["UserMessage"],
            reply=latest["Reply"],
            tool_calls=[tool_call_view(c) for c in json.loads(latest["ToolCalls"] or "[]")],
            span_ids=list(latest["SpanIds"]),
            validators=list(latest["Validators"]),
            max_score=max_score(float(latest["MaxScore"]), bool(latest["HasClass5"])),
            has_class5=bool(latest["HasClass5"]),
            findings=self._findings(tenant, turn_id, int(latest["Version"])),
            spans=self._spans_of_turn(tenant, latest),
            reviews=self._reviews(tenant, turn_id),
            versions=[
                {
                    "version": int(v["Version"]),
                    "verdict": v["Verdict"],
                    "kinds": list(v["Kinds"]),
                    "validated_at": from_epoch_ms(v["validated_ms"]),
                }
                for v in versions
            ],
        )
        return turn

    def _findings(self, tenant: str, turn_id: str, version: int) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT Kind, Class, Severity, Message, Token, CheckedAgainst, SpanStart, SpanEnd,"
            " Validator, Score, CallId FROM {db}.findings"
            " WHERE Tenant = {tenant:String} AND TurnId = {turn_id:String}"
            " AND Version = {version:UInt32} ORDER BY Idx LIMIT 1 BY Idx",
            {"tenant": tenant, "turn_id": turn_id, "version": version},
        )
        return [finding_view(r) for r in rows]

    def _spans_of_turn(self, tenant: str, turn: Mapping[str, Any]) -> list[dict[str, Any]]:
        span_ids = list(turn["SpanIds"])
        if not span_ids:
            return []
        # SpanId is not in the sort key: the time window around the turn prunes the daily
        # partitions to the turn's days (a day's margin for clock skew between services).
        rows = self._query(
            f"SELECT {_SPAN_SELECT} FROM {{db}}.spans"
            " WHERE Tenant = {tenant:String} AND SpanId IN {span_ids:Array(String)}"
            " AND Timestamp >= fromUnixTimestamp64Milli({started_ms:Int64}) - INTERVAL 1 DAY"
            " AND Timestamp <= fromUnixTimestamp64Milli({ended_ms:Int64}) + INTERVAL 1 DAY"
            " ORDER BY Timestamp, SpanId LIMIT 1 BY TraceId, SpanId",
            {
                "tenant": tenant,
                "span_ids": span_ids,
                "started_ms": turn["started_ms"],
                "ended_ms": turn["ended_ms"],
            },
        )
        return [span_view(_span_row(row)) for row in rows]

    def _reviews(self, tenant: str, turn_id: str) -> list[dict[str, Any]]:
        # Withdrawn reviews are left out: an undone label is as if never given.
        rows = self._query(
            "SELECT ReviewId, Label, Note, Reviewer,"
            f" toUnixTimestamp64Milli(CreatedAt) AS created_ms FROM ({_LIVE_REVIEWS})"
            " WHERE TurnId = {turn_id:String} ORDER BY CreatedAt, ReviewId",
            {"tenant": tenant, "turn_id": turn_id},
        )
        return [
            {
                "review_id": r["ReviewId"],
                "label": r["Label"],
                "note": r["Note"],
                "reviewer": r["Reviewer"],
                "created_at": from_epoch_ms(r["created_ms"]),
            }
            for r in rows
        ]

    def known_turns(self, tenant: str, turn_ids: Sequence[str]) -> set[str]:
        """Those of `turn_ids` the tenant has a turn for."""
        unique = sorted(set(turn_ids))
        known: set[str] = set()
        for start in range(0, len(unique), _TURN_IDS_PER_QUERY):
            rows = self._query(
                "SELECT DISTINCT TurnId FROM {db}.turns"
                " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}",
                {"tenant": tenant, "turn_ids": unique[start : start + _TURN_IDS_PER_QUERY]},
            )
            known.update(row["TurnId"] for row in rows)
        return known

    def review(self, tenant: str, review_id: str) -> dict[str, Any] | None:
        """One review by id, withdrawn or not: `{review_id, turn_id, label, withdrawn}`;
        None when the tenant has no such review."""
        rows = self._query(
            "SELECT TurnId, Label, ReviewId IN (SELECT ReviewId FROM {db}.review_withdrawals"
            " WHERE Tenant = {tenant:String}) AS withdrawn FROM {db}.reviews"
            " WHERE Tenant = {tenant:String} AND ReviewId = {review_id:String} LIMIT 1",
            {"tenant": tenant, "review_id": review_id},
        )
        if not rows:
            return None
        row = rows[0]
        return {
            "review_id": review_id,
            "turn_id": row["TurnId"],
            "label": row["Label"],
            "withdrawn": bool(row["withdrawn"]),
        }

    def review_queue(
        self,
        tenant: str,
        limit: int = 50,
        *,
        kind: str | None = None,
        model: str | None = None,
        agent: str | None = None,
        reply_chars: int = 0,
    ) -> list[dict[str, Any]]:
        """Flagged turns (latest version) without a review that counts (none, or every
        one withdrawn): class-5 suspicions first, then by score (highest first), then
        newest. `kind`, `model` and `agent` narrow it to turns with a finding of that
        kind, of that model, of that agent. Keys: those of `list_turns` plus max_score and
        has_class5, and `reply` (its first `reply_chars` characters) when that is not 0."""
        _check_limit("limit", limit, MAX_LIST_LIMIT)
        where, params = self._queue_where(tenant, kind=kind, model=model, agent=agent)
        params["limit"] = limit
        order = "HasClass5 DESC, MaxScore DESC, StartedAt DESC, TurnId DESC"
        page = (
            f"SELECT TurnId FROM {{db}}.turns WHERE {where}"
            f" ORDER BY {order} LIMIT 1 BY TurnId LIMIT {{limit:UInt32}}"
        )
        _check_limit("reply_chars", reply_chars, 2**20)
        if reply_chars:
            params["reply_chars"] = reply_chars
        extra = (
            ", substringUTF8(Reply, 1, {reply_chars:UInt32}) AS reply_head" if reply_chars else ""
        )
        # Versions differ in score: take each turn's latest row, then order the page.
        rows = self._query(
            f"SELECT * FROM (SELECT {_TURN_SUMMARY}, MaxScore, HasClass5, StartedAt{extra}"
            f" FROM {{db}}.turns WHERE Tenant = {{tenant:String}} AND TurnId IN ({page})"
            f" ORDER BY Version DESC LIMIT 1 BY TurnId) ORDER BY {order}",
            params,
        )
        queue = []
        for row in rows:
            turn = _turn_summary(row)
            has_class5 = bool(row["HasClass5"])
            turn.update(
                max_score=max_score(float(row["MaxScore"]), has_class5), has_class5=has_class5
            )
            if reply_chars:
                turn["reply"] = row["reply_head"]
            queue.append(turn)
        return queue

    def review_queue_count(self, tenant: str) -> int:
        """How many turns the whole review queue holds (`review_queue` pages through them)."""
        where, params = self._queue_where(tenant)
        return self._scalar(f"SELECT uniqExact(TurnId) FROM {{db}}.turns WHERE {where}", params)

    def review_queue_facets(self, tenant: str) -> dict[str, Any]:
        """What the whole review queue holds, for choosing a filter: `{total, kinds,
        models, agents}` (names sorted)."""
        where, params = self._queue_where(tenant)
        rows = self._query(
            "SELECT uniqExact(TurnId) AS total, groupUniqArrayArray(Kinds) AS kinds,"
            " groupUniqArray(Model) AS models, groupUniqArray(AgentName) AS agents"
            f" FROM {{db}}.turns WHERE {where}",
            params,
        )
        if not rows:
            return {"total": 0, "kinds": [], "models": [], "agents": []}
        row = rows[0]
        return {
            "total": int(row["total"]),
            "kinds": sorted(row["kinds"]),
            "models": sorted(row["models"]),
            "agents": sorted(row["agents"]),
        }

    def _queue_where(
        self,
        tenant: str,
        *,
        kind: str | None = None,
        model: str | None = None,
        agent: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        conditions = [
            "Tenant = {tenant:String}",
            _LATEST,
            "Verdict = 'flag'",
            f"TurnId NOT IN (SELECT TurnId FROM ({_LIVE_REVIEWS}))",
        ]
        params: dict[str, Any] = {"tenant": tenant}
        for name, value, condition in (
            ("kind", kind, "has(Kinds, {kind:String})"),
            ("model", model, "Model = {model:String}"),
            ("agent", agent, "AgentName = {agent:String}"),
        ):
            if value:
                params[name] = value
                conditions.append(condition)
        return " AND ".join(conditions), params

    def review_precision(self, tenant: str) -> dict[str, Any]:
        """How often the human labels confirm the validators, from each reviewed turn's
        latest label (withdrawn reviews left out): `{turns: {reviewed, confirmed,
        precision}, kinds: [{kind, reviewed, confirmed, precision}, ...]}`, kinds sorted by
        name; a turn counts under every kind its latest verdict has. `precision` is
        confirmed over reviewed (None when none)."""
        labels = (
            f"SELECT TurnId, argMax(Label, CreatedAt) AS label FROM ({_LIVE_REVIEWS})"
            " GROUP BY TurnId"
        )
        latest_kinds = (
            "SELECT TurnId, Kinds FROM {db}.turns WHERE Tenant = {tenant:String}"
            f" AND TurnId IN (SELECT TurnId FROM ({_LIVE_REVIEWS}))"
            " ORDER BY Version DESC LIMIT 1 BY TurnId"
        )
        params = {"tenant": tenant}
        per_kind = self._query(
            "SELECT kind, count() AS reviewed, countIf(label = 'hallucination') AS confirmed"
            f" FROM ({labels}) AS r INNER JOIN"
            f" (SELECT TurnId, kind FROM ({latest_kinds}) ARRAY JOIN Kinds AS kind) AS t"
            " ON r.TurnId = t.TurnId GROUP BY kind ORDER BY kind",
            params,
        )
        overall = self._query(
            "SELECT count() AS reviewed, countIf(label = 'hallucination') AS confirmed"
            f" FROM ({labels})",
            params,
        )
        return {
            "turns": _precision(overall[0] if overall else {"reviewed": 0, "confirmed": 0}),
            "kinds": [{"kind": row["kind"], **_precision(row)} for row in per_kind],
        }

    def labelled_turns(
        self, tenant: str, limit: int = MAX_REVIEW_EXPORT, label: str | None = None
    ) -> list[dict[str, Any]]:
        """Each labelled turn with its latest review that counts, newest label first, at
        most `limit`; only turns whose label is `label` when given. Keys: those of
        `list_turns`, `review` ({review_id, label, note, reviewer, created_at}),
        `findings` ([{kind, severity}] of the latest version) and `spans` (the turn's
        spans as rows keyed by SPAN_COLUMNS, for `rows.span_from_row`)."""
        _check_limit("limit", limit, MAX_REVIEW_EXPORT)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit}
        having = ""
        if label:
            params["label"] = label
            having = " HAVING review.2 = {label:String}"
        labels = self._query(
            "SELECT TurnId, argMax((ReviewId, Label, Note, Reviewer,"
            " toUnixTimestamp64Milli(CreatedAt)), CreatedAt) AS review"
            f" FROM ({_LIVE_REVIEWS}) GROUP BY TurnId{having}"
            " ORDER BY review.5 DESC, TurnId LIMIT {limit:UInt32}",
            params,
        )
        reviews = {
            row["TurnId"]: {
                "review_id": row["review"][0],
                "label": row["review"][1],
                "note": row["review"][2],
                "reviewer": row["review"][3],
                "created_at": from_epoch_ms(row["review"][4]),
            }
            for row in labels
        }
        turns: dict[str, dict[str, Any]] = {}
        span_ids: dict[str, list[str]] = {}
        ids = list(reviews)
        for start in range(0, len(ids), _TURN_IDS_PER_QUERY):
            for row in self._query(
                f"SELECT {_TURN_SUMMARY}, SpanIds FROM {{db}}.turns"
                " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}"
                " ORDER BY Version DESC LIMIT 1 BY TurnId",
                {"tenant": tenant, "turn_ids": ids[start : start + _TURN_IDS_PER_QUERY]},
            ):
                turn = _turn_summary(row)
                turn.update(review=reviews[row["TurnId"]], findings=[], spans=[])
                turns[row["TurnId"]] = turn
                span_ids[row["TurnId"]] = list(row["SpanIds"])
        self._attach_findings(tenant, turns)
        self._attach_spans(tenant, turns, span_ids)
        # A label whose turn expired (retention) has nothing left to export.
        return [turns[turn_id] for turn_id in ids if turn_id in turns]

    def _attach_findings(self, tenant: str, turns: Mapping[str, dict[str, Any]]) -> None:
        pairs = [(turn_id, turn["version"]) for turn_id, turn in turns.items()]
        for start in range(0, len(pairs), _TURN_IDS_PER_QUERY):
            for row in self._query(
                "SELECT TurnId, Kind, Severity FROM {db}.findings"
                " WHERE Tenant = {tenant:String}"
                " AND (TurnId, Version) IN {pairs:Array(Tuple(String, UInt32))}"
                " ORDER BY TurnId, Idx LIMIT 1 BY TurnId, Version, Idx",
                {"tenant": tenant, "pairs": pairs[start : start + _TURN_IDS_PER_QUERY]},
            ):
                turns[row["TurnId"]]["findings"].append(
                    {"kind": row["Kind"], "severity": row["Severity"]}
                )

    def _attach_spans(
        self,
        tenant: str,
        turns: Mapping[str, dict[str, Any]],
        span_ids: Mapping[str, Sequence[str]],
    ) -> None:
        # A span may belong to several turns (a root span around a conversation's turns).
        owners: dict[str, list[str]] = {}
        for turn_id, ids in span_ids.items():
            for span_id in ids:
                owners.setdefault(span_id, []).append(turn_id)
        ordered = sorted(owners)
        if not ordered:
            return
        # SpanId is not in the sort key: the turns' time window (a day's margin for clock
        # skew) prunes the daily partitions, as for one turn's spans.
        started = min(epoch_ms(turn["started_at"]) for turn in turns.values())
        ended = max(epoch_ms(turn["ended_at"]) for turn in turns.values())
        for start in range(0, len(ordered), _SPAN_IDS_PER_QUERY):
            for row in self._query(
                f"SELECT {_SPAN_SELECT} FROM {{db}}.spans"
                " WHERE Tenant = {tenant:String} AND SpanId IN {span_ids:Array(String)}"
                " AND Timestamp >= fromUnixTimestamp64Milli({started_ms:Int64}) - INTERVAL 1 DAY"
                " AND Timestamp <= fromUnixTimestamp64Milli({ended_ms:Int64}) + INTERVAL 1 DAY"
                " ORDER BY Timestamp, SpanId LIMIT 1 BY TraceId, SpanId",
                {
                    "tenant": tenant,
                    "span_ids": ordered[start : start + _SPAN_IDS_PER_QUERY],
                    "started_ms": started,
                    "ended_ms": ended,
                },
            ):
                span = _span_row(row)
                for turn_id in owners[row["SpanId"]]:
                    turns[turn_id]["spans"].append(span)

    # --- reject rates ---------------------------------------------------------------------

    def reject_rate(
        self,
        tenant: str,
        *,
        group_by: GroupBy,
        bucket: Bucket,
        since: datetime,
        until: datetime,
    ) -> list[dict[str, Any]]:
        """Rejected and flagged turns over all turns, per group and time bucket.

        `since`/`until` are widened to whole buckets (UTC). Returns one series per key,
        sorted by key: `{key, points: [{t, turns, rejected, flagged, rate}]}` with `t` the
        bucket start (aware UTC). Like the materialized view it reads, a turn counts under
        every verdict any of its versions had. For `group_by="kind"`, `turns` is every turn
        in the bucket and `rejected`/`flagged` the turns with a finding of that kind at that
        severity; each kind has a point for every bucket that has turns.
        Raises ValueError for an unknown group_by or bucket, or too many buckets.
        """
        if bucket not in BUCKET_SECONDS:
            raise ValueError(f"bucket must be one of {sorted(BUCKET_SECONDS)}, not {bucket!r}")
        if group_by not in (*_GROUP_COLUMNS, "kind"):
            raise ValueError(f"group_by must be model, agent, service or kind, not {group_by!r}")
        width = BUCKET_SECONDS[bucket]
        first = epoch_ms(since) // 1000 // width * width
        end = -(-epoch_ms(until) // (width * 1000)) * width
        if (end - first) // width > MAX_SERIES_POINTS:
            raise ValueError(f"more than {MAX_SERIES_POINTS} {bucket} buckets; widen the bucket")
        params = {"tenant": tenant, "width": width, "first": first, "end": end}
        window = (
            "Tenant = {tenant:String} AND Minute >= toDateTime({first:Int64})"
            " AND Minute < toDateTime({end:Int64})"
        )
        bucket_expr = "intDiv(toUInt32(Minute), {width:UInt32}) * {width:UInt32}"
        if group_by != "kind":
            rows = self._query(
                f"SELECT {_GROUP_COLUMNS[group_by]} AS key, {bucket_expr} AS t,"
                " uniqExactMerge(turns) AS n_turns, uniqExactIfMerge(rejected) AS n_rejected,"
                " uniqExactIfMerge(flagged) AS n_flagged"
                f" FROM {{db}}.turn_stats_1m_data WHERE {window}"
                " GROUP BY key, t ORDER BY key, t",
                params,
            )
            return _series(rows)
        totals = {
            row["t"]: row["n_turns"]
            for row in self._query(
                f"SELECT {bucket_expr} AS t, uniqExactMerge(turns) AS n_turns"
                f" FROM {{db}}.turn_stats_1m_data WHERE {window} GROUP BY t",
                params,
            )
        }
        by_kind = self._query(
            "SELECT Kind AS key,"
            " intDiv(toUInt32(toDateTime(StartedAt)), {width:UInt32}) * {width:UInt32} AS t,"
            " uniqExactIf(TurnId, Severity = 'reject') AS n_rejected,"
            " uniqExactIf(TurnId, Severity = 'flag') AS n_flagged"
            " FROM {db}.findings WHERE Tenant = {tenant:String}"
            " AND StartedAt >= fromUnixTimestamp64Milli({first:Int64} * 1000)"
            " AND StartedAt < fromUnixTimestamp64Milli({end:Int64} * 1000)"
            " GROUP BY key, t",
            params,
        )
        found = {(row["key"], row["t"]): row for row in by_kind}
        rows = [
            {
                "key": key,
                "t": t,
                "n_turns": n_turns,
                "n_rejected": found.get((key, t), {}).get("n_rejected", 0),
                "n_flagged": found.get((key, t), {}).get("n_flagged", 0),
            }
            for key in sorted({key for key, _ in found})
            for t, n_turns in sorted(totals.items())
        ]
        return _series(rows)

    # --- alerts ---------------------------------------------------------------------------

    def alert_summaries(
        self,
        tenant: str,
        *,
        limit: int = 100,
        rule: str | None = None,
        latest_per_group: bool = False,
    ) -> list[dict[str, Any]]:
        """Alerts (one per AlertId, folded from its rows), most recently active first.

        A firing notice is a `firing` row whose FiredAt is when it was sent (the first
        one: when the alert fired; later ones are repeats); the resolution is a `resolved`
        row. Keys: alert_id, rule, key, state (of its latest row), fired_at, notified_at
        (latest firing notice), resolved_at (None while firing), notices (firing rows),
        threshold (when it fired), value, turns and message (of its latest row), last_at.
        `latest_per_group` keeps only the newest alert of each (rule, key). At most `limit`.
        """
        _check_limit("limit", limit, MAX_LIST_LIMIT)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit}
        where = "Tenant = {tenant:String}"
        if rule is not None:
            where += " AND Rule = {rule:String}"
            params["rule"] = rule
        last = "ifNull(ResolvedAt, FiredAt)"
        rows = self._query(
            "SELECT AlertId, any(Rule) AS rule, any(GroupKey) AS key,"
            f" argMax(State, {last}) AS state,"
            " toUnixTimestamp64Milli(minIf(FiredAt, State = 'firing')) AS fired_ms,"
            " toUnixTimestamp64Milli(maxIf(FiredAt, State = 'firing')) AS notified_ms,"
            " toUnixTimestamp64Milli(maxIf(ResolvedAt, State = 'resolved')) AS resolved_ms,"
            " countIf(State = 'firing') AS notices,"
            " argMinIf(Threshold, FiredAt, State = 'firing') AS threshold,"
            f" argMax(Value, {last}) AS value, argMax(Turns, {last}) AS turns,"
            f" argMax(Message, {last}) AS message,"
            f" toUnixTimestamp64Milli(max({last})) AS last_ms"
            f" FROM {{db}}.alerts WHERE {where} GROUP BY AlertId"
            " ORDER BY last_ms DESC, AlertId DESC"
            + (" LIMIT 1 BY rule, key" if latest_per_group else "")
            + " LIMIT {limit:UInt32}",
            params,
        )
        return [
            {
                "alert_id": r["AlertId"],
                "rule": r["rule"],
                "key": r["key"],
                "state": r["state"],
                "fired_at": from_epoch_ms(r["fired_ms"]),
                "notified_at": from_epoch_ms(r["notified_ms"]),
                "resolved_at": _optional_ms(r["resolved_ms"] if r["state"] == "resolved" else None),
                "notices": int(r["notices"]),
                "threshold": float(r["threshold"]),
                "value": float(r["value"]),
                "turns": int(r["turns"]),
                "message": r["message"],
                "last_at": from_epoch_ms(r["last_ms"]),
            }
            for r in rows
        ]

    def alert_events(
        self, tenant: str, alert_ids: Sequence[str], *, per_alert: int = 20
    ) -> list[dict[str, Any]]:
        """The rows of the given alerts, newest first, at most `per_alert` per alert.
        Keys: alert_id, rule, key, state, value, threshold, turns, fired_at, resolved_at,
        message, at (ResolvedAt, else FiredAt)."""
        _check_limit("alert_ids", len(alert_ids), MAX_LIST_LIMIT)
        _check_limit("per_alert", per_alert, MAX_LIST_LIMIT)
        if not alert_ids:
            return []
        rows = self._query(
            "SELECT AlertId, Rule, GroupKey, State, Value, Threshold, Turns, Message,"
            " toUnixTimestamp64Milli(FiredAt) AS fired_ms,"
            " toUnixTimestamp64Milli(ResolvedAt) AS resolved_ms,"
            " toUnixTimestamp64Milli(ifNull(ResolvedAt, FiredAt)) AS at_ms"
            " FROM {db}.alerts WHERE Tenant = {tenant:String}"
            " AND AlertId IN {alert_ids:Array(String)}"
            " ORDER BY at_ms DESC, State DESC LIMIT {per_alert:UInt32} BY AlertId",
            {"tenant": tenant, "alert_ids": list(alert_ids), "per_alert": per_alert},
        )
        return [
            {
                "alert_id": r["AlertId"],
                "rule": r["Rule"],
                "key": r["GroupKey"],
                "state": r["State"],
                "value": float(r["Value"]),
                "threshold": float(r["Threshold"]),
                "turns": int(r["Turns"]),
                "fired_at": from_epoch_ms(r["fired_ms"]),
                "resolved_at": _optional_ms(r["resolved_ms"]),
                "message": r["Message"],
                "at": from_epoch_ms(r["at_ms"]),
            }
            for r in rows
        ]

    def alert_deliveries(
        self, tenant: str, alert_ids: Sequence[str], *, per_alert: int = 50
    ) -> list[dict[str, Any]]:
        """Webhook delivery attempts of the given alerts, newest first, at most `per_alert`
        per alert. Keys: alert_id, target, attempt, ok, status_code (0: no answer), error,
        at."""
        _check_limit("alert_ids", len(alert_ids), MAX_LIST_LIMIT)
        _check_limit("per_alert", per_alert, MAX_LIST_LIMIT)
        if not alert_ids:
            return []
        rows = self._query(
            "SELECT AlertId, Target, Attempt, Ok, StatusCode, Error,"
            " toUnixTimestamp64Milli(At) AS at_ms FROM {db}.alert_deliveries"
            " WHERE Tenant = {tenant:String} AND AlertId IN {alert_ids:Array(String)}"
            " ORDER BY at_ms DESC, Attempt DESC LIMIT {per_alert:UInt32} BY AlertId",
            {"tenant": tenant, "alert_ids": list(alert_ids), "per_alert": per_alert},
        )
        return [
            {
                "alert_id": r["AlertId"],
                "target": r["Target"],
                "attempt": int(r["Attempt"]),
                "ok": bool(r["Ok"]),
                "status_code": int(r["StatusCode"]),
                "error": r["Error"],
                "at": from_epoch_ms(r["at_ms"]),
            }
            for r in rows
        ]

    # --- counts ---------------------------------------------------------------------------

    def span_count(self, tenant: str) -> int:
        """Distinct (TraceId, SpanId) of the tenant: a resent span counts once."""
        return self._scalar(
            "SELECT uniqExact(TraceId, SpanId) FROM {db}.spans WHERE Tenant = {tenant:String}",
            {"tenant": tenant},
        )

    def turn_count(self, tenant: str) -> int:
        """Distinct turns of the tenant (every version of a turn counts once)."""
        return self._scalar(
            "SELECT uniqExact(TurnId) FROM {db}.turns WHERE Tenant = {tenant:String}",
            {"tenant": tenant},
        )

    def finding_count(self, tenant: str) -> int:
        """Findings of the latest version of each of the tenant's turns."""
        return self._scalar(
            "SELECT uniqExact(TurnId, Version, Idx) FROM {db}.findings"
            f" WHERE Tenant = {{tenant:String}} AND {_LATEST}",
            {"tenant": tenant},
        )

    # --- recovery -------------------------------------------------------------------------

    def recent_tenants(self, since: datetime) -> list[str]:
        """The tenants with spans ingested at or after `since`, sorted."""
        rows = self._query(
            "SELECT DISTINCT Tenant FROM {db}.spans"
            " WHERE IngestedAt >= fromUnixTimestamp64Milli({since_ms:Int64}) ORDER BY Tenant",
            {"since_ms": epoch_ms(since)},
        )
        return [row["Tenant"] for row in rows]

    def owed_traces(
        self,
        tenant: str,
        since: datetime,
        limit: int = MAX_OPEN_TRACES,
        after: OwedTrace | None = None,
    ) -> list[OwedTrace]:
        """Traces with a span ingested at or after `since` that no verdict holds (its id
        is in no turn's SpanIds): turns in flight when the process stopped, the next turn
        of a trace, late spans; also a judged trace with a span outside every turn (such
        as an HTTP server span around the agent): reading it back judges nothing again.
        Oldest first (by the first ingest of such a span, then trace id), at most `limit`,
        from just past `after`: a caller pages through every owed trace however old, and
        one whose spans are judged meanwhile only moves later.

        Verdicts count from `since` on: one that holds a span ingested since then was
        made after it."""
        _check_limit("limit", limit, MAX_OPEN_TRACES)
        start = after or OwedTrace(-1, "")
        rows = self._query(
            "SELECT TraceId, toUnixTimestamp64Milli(min(IngestedAt)) AS first_ms"
            " FROM {db}.spans WHERE Tenant = {tenant:String}"
            " AND IngestedAt >= fromUnixTimestamp64Milli({since_ms:Int64})"
            # GLOBAL: on a cluster a trace's spans and its turns may sit on different shards.
            " AND SpanId GLOBAL NOT IN"
            " (SELECT arrayJoin(SpanIds) FROM {db}.turns WHERE Tenant = {tenant:String}"
            "  AND ValidatedAt >= fromUnixTimestamp64Milli({since_ms:Int64}))"
            " GROUP BY TraceId"
            " HAVING (first_ms, TraceId) > ({after_ms:Int64}, {after_trace:String})"
            " ORDER BY first_ms, TraceId LIMIT {limit:UInt32}",
            {
                "tenant": tenant,
                "since_ms": epoch_ms(since),
                "limit": limit,
                "after_ms": start.first_ingested_ms,
                "after_trace": start.trace_id,
            },
        )
        return [OwedTrace(int(row["first_ms"]), row["TraceId"]) for row in rows]

    def verdicts_for(
        self, tenant: str, trace_ids: Sequence[str], span_ids: Sequence[str], since: datetime
    ) -> list[PriorVerdict]:
        """The latest verdict of each turn of the given traces (any age), and of each turn
        validated at or after `since` that holds one of `span_ids` (a turn joined from
        several traces is stored under its first), sorted by turn id: what judging them
        again must go on from."""
        latest: dict[str, PriorVerdict] = {}

        def keep(where: str, params: dict[str, Any]) -> None:
            for row in self._query(
                "SELECT TurnId, max(Version) AS version, argMax(SpanIds, Version) AS span_ids"
                f" FROM {{db}}.turns WHERE Tenant = {{tenant:String}} AND {where}"
                " GROUP BY TurnId",
                {"tenant": tenant, **params},
            ):
                known = latest.get(row["TurnId"])
                if known is None or row["version"] > known.version:
                    latest[row["TurnId"]] = PriorVerdict(
                        tenant, row["TurnId"], int(row["version"]), tuple(row["span_ids"])
                    )

        traces = sorted(set(trace_ids))
        for start in range(0, len(traces), _TRACE_IDS_PER_QUERY):
            batch = traces[start : start + _TRACE_IDS_PER_QUERY]
            keep("TraceId IN {trace_ids:Array(String)}", {"trace_ids": batch})
        spans = sorted(set(span_ids))
        for start in range(0, len(spans), _SPAN_IDS_PER_QUERY):
            keep(
                "ValidatedAt >= fromUnixTimestamp64Milli({since_ms:Int64})"
                " AND hasAny(SpanIds, {span_ids:Array(String)})",
                {
                    "since_ms": epoch_ms(since),
                    "span_ids": spans[start : start + _SPAN_IDS_PER_QUERY],
                },
            )
        return [latest[turn_id] for turn_id in sorted(latest)]

    def spans_for_traces(self, tenant: str, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Every span of the given traces, once each, ordered by trace then start time, as
        rows keyed by SPAN_COLUMNS for `rows.span_from_row`. At most MAX_SPAN_ROWS."""
        unique = sorted(set(trace_ids))
        spans: list[dict[str, Any]] = []
        for start in range(0, len(unique), _TRACE_IDS_PER_QUERY):
            batch = unique[start : start + _TRACE_IDS_PER_QUERY]
            rows = self._query(
                f"SELECT {_SPAN_SELECT} FROM {{db}}.spans WHERE Tenant = {{tenant:String}}"
                " AND TraceId IN {trace_ids:Array(String)}"
                " ORDER BY TraceId, Timestamp, SpanId LIMIT 1 BY TraceId, SpanId"
                " LIMIT {limit:UInt32}",
                {"tenant": tenant, "trace_ids": batch, "limit": MAX_SPAN_ROWS - len(spans)},
            )
            spans.extend(_span_row(row) for row in rows)
            if len(spans) >= MAX_SPAN_ROWS:
                break
        return spans


class OwedTrace(NamedTuple):
    """A trace owed a verdict, and where it stands in `Store.owed_traces`' order."""

    first_ingested_ms: int
    """IngestedAt of its earliest span that no verdict holds."""
    trace_id: str


def _turn_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "turn_id": row["TurnId"],
        "trace_id": row["TraceId"],
        "conversation_id": row["ConversationId"],
        "service": row["ServiceName"],
        "agent": row["AgentName"],
        "model": row["Model"],
        "started_at": from_epoch_ms(row["started_ms"]),
        "ended_at": from_epoch_ms(row["ended_ms"]),
        "verdict": row["Verdict"],
        "kinds": list(row["Kinds"]),
        "reply_preview": row["ReplyPreview"],
        "version": int(row["Version"]),
    }


def _precision(row: Mapping[str, Any]) -> dict[str, Any]:
    reviewed, confirmed = int(row["reviewed"]), int(row["confirmed"])
    return {
        "reviewed": reviewed,
        "confirmed": confirmed,
        "precision": confirmed / reviewed if reviewed else None,
    }


def _optional_ms(ms: int | None) -> datetime | None:
    return None if ms is None else from_epoch_ms(ms)


def _span_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {_SPAN_ALIASES.get(name, name): value for name, value in row.items()}


def _series(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    series: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        turns = int(row["n_turns"])
        rejected = int(row["n_rejected"])
        series.setdefault(row["key"], []).append(
            {
                "t": from_epoch_ms(int(row["t"]) * 1000),
                "turns": turns,
                "rejected": rejected,
                "flagged": int(row["n_flagged"]),
                "rate": rejected / turns if turns else 0.0,
            }
        )
    return [{"key": key, "points": points} for key, points in sorted(series.items())]
