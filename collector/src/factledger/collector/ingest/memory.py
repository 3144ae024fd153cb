"""`InMemoryStore`: a `PipelineStore` in memory, for tests of the pipeline's stages.

It keeps rows as the store keeps them (the lists `collector.rows` shapes) and answers the
recovery reads with the store's semantics, so a stage tested against it behaves as it
would against ClickHouse, in microseconds. Failures are scripted, not random: `fail`
queues errors for the next inserts into a table, `refuse` makes any insert holding a
matching row fail for good (bad data: ClickHouse refuses the whole block).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from factledger.collector.evidence_rows import SNAPSHOT_COLUMNS, TURN_EVIDENCE_COLUMNS
from factledger.collector.rows import (
    FINDING_COLUMNS,
    SPAN_COLUMNS,
    TURN_COLUMNS,
    VERIFICATION_COLUMNS,
    epoch_ms,
)
from factledger.collector.store import StoreError
from factledger.collector.store.recovery import OwedTrace
from factledger.processors.assembly.assembler import PriorVerdict

from .sink import Rows

_COLUMNS = {
    "spans": SPAN_COLUMNS,
    "turns": TURN_COLUMNS,
    "findings": FINDING_COLUMNS,
    "verifications": VERIFICATION_COLUMNS,
    "snapshots": SNAPSHOT_COLUMNS,
    "turn_evidence": TURN_EVIDENCE_COLUMNS,
}

RowTest = Callable[[dict[str, Any]], bool]
"""A predicate over one row, keyed by its table's column names."""


class InMemoryStore:
    """The pipeline's store in memory. Thread-safe: every call holds one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[str, list[dict[str, Any]]] = {table: [] for table in _COLUMNS}
        self._attempts: dict[str, list[int]] = {table: [] for table in _COLUMNS}
        self._failures: dict[str, deque[Exception]] = {table: deque() for table in _COLUMNS}
        self._refusals: dict[str, RowTest] = {}

    # --- scripting and inspection ---------------------------------------------------

    def fail(self, table: str, *errors: Exception) -> None:
        """The next inserts into `table` raise `errors`, one each, in order."""
        with self._lock:
            self._failures[table].extend(errors)

    def refuse(self, table: str, row_test: RowTest) -> None:
        """From now on an insert into `table` holding a row `row_test` matches raises a
        permanent `StoreError` and writes nothing of its batch."""
        with self._lock:
            self._refusals[table] = row_test

    def rows(self, table: str) -> list[dict[str, Any]]:
        """The rows written to `table`, in order, keyed by column name."""
        with self._lock:
            return list(self._tables[table])

    def attempts(self, table: str) -> list[int]:
        """The size of every insert tried on `table`, failed ones included, in order."""
        with self._lock:
            return list(self._attempts[table])

    # --- RowSink --------------------------------------------------------------------

    def insert_spans(self, rows: Rows) -> int:
        return self._insert("spans", rows)

    def insert_turns(self, rows: Rows) -> int:
        return self._insert("turns", rows)

    def insert_findings(self, rows: Rows) -> int:
        return self._insert("findings", rows)

    def insert_verifications(self, rows: Rows) -> int:
        return self._insert("verifications", rows)

    def insert_snapshots(self, rows: Rows) -> int:
        return self._insert("snapshots", rows)

    def insert_turn_evidence(self, rows: Rows) -> int:
        return self._insert("turn_evidence", rows)

    def _insert(self, table: str, rows: Rows) -> int:
        columns = _COLUMNS[table]
        keyed = [dict(zip(columns, row, strict=True)) for row in rows]
        with self._lock:
            self._attempts[table].append(len(keyed))
            if self._failures[table]:
                raise self._failures[table].popleft()
            refused = self._refusals.get(table)
            if refused is not None and any(refused(row) for row in keyed):
                raise StoreError(f"{table}: a row the store cannot take", retryable=False)
            self._tables[table].extend(keyed)
        return len(keyed)

    # --- RecoveryReads --------------------------------------------------------------

    def recent_tenants(self, since: datetime) -> list[str]:
        since_ms = epoch_ms(since)
        with self._lock:
            return sorted(
                {s["Tenant"] for s in self._tables["spans"] if s["IngestedAt"] >= since_ms}
            )

    def owed_traces(
        self, tenant: str, since: datetime, limit: int = 1_000, after: OwedTrace | None = None
    ) -> list[OwedTrace]:
        since_ms = epoch_ms(since)
        start = after or OwedTrace(-1, "")
        with self._lock:
            held = {
                span_id
                for turn in self._tables["turns"]
                if turn["Tenant"] == tenant and turn["ValidatedAt"] >= since_ms
                for span_id in turn["SpanIds"]
            }
            first: dict[str, int] = {}
            for span in self._tables["spans"]:
                if (
                    span["Tenant"] == tenant
                    and span["IngestedAt"] >= since_ms
                    and span["SpanId"] not in held
                ):
                    trace = span["TraceId"]
                    first[trace] = min(first.get(trace, span["IngestedAt"]), span["IngestedAt"])
        owed = sorted(OwedTrace(ms, trace) for trace, ms in first.items())
        return [o for o in owed if o > start][:limit]

    def spans_for_traces(self, tenant: str, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
        wanted = set(trace_ids)
        with self._lock:
            spans = [
                s for s in self._tables["spans"] if s["Tenant"] == tenant and s["TraceId"] in wanted
            ]
        once: dict[tuple[str, str], dict[str, Any]] = {}
        for span in sorted(spans, key=lambda s: (s["TraceId"], s["Timestamp"], s["SpanId"])):
            once.setdefault((span["TraceId"], span["SpanId"]), span)
        return list(once.values())

    def verdicts_for(
        self, tenant: str, trace_ids: Sequence[str], span_ids: Sequence[str], since: datetime
    ) -> list[PriorVerdict]:
        traces, spans, since_ms = set(trace_ids), set(span_ids), epoch_ms(since)
        latest: dict[str, PriorVerdict] = {}
        with self._lock:
            turns = [t for t in self._tables["turns"] if t["Tenant"] == tenant]
        by_trace = [t for t in turns if t["TraceId"] in traces]
        by_span = [t for t in turns if t["ValidatedAt"] >= since_ms and spans & set(t["SpanIds"])]
        for turn in (*by_trace, *by_span):
            known = latest.get(turn["TurnId"])
            if known is None or turn["Version"] > known.version:
                latest[turn["TurnId"]] = PriorVerdict(
                    tenant, turn["TurnId"], int(turn["Version"]), tuple(turn["SpanIds"])
                )
        return [latest[turn_id] for turn_id in sorted(latest)]
