"""What the pipeline needs of the store: a sink for rows, and the reads recovery makes.

The pipeline uses these and nothing else of `collector.store.Store`, so its stages run
as well against `collector.ingest.memory.InMemoryStore` (a test fake) as against
ClickHouse. Rows arrive shaped by `collector.rows` (one list per row, in the table's
column order). Every method may be called from any of the pipeline's threads at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from factledger.collector.store.recovery import OwedTrace
from factledger.processors.assembly.assembler import PriorVerdict

Rows = Sequence[Sequence[Any]]
"""A batch of rows for one table, in that table's column order."""


class RowSink(Protocol):
    """Inserts of the pipeline's tables. Each returns how many rows it wrote or
    raises `StoreError` (`retryable`: the same batch may succeed later; otherwise the
    store refuses a row of it for good). Resending rows already written is harmless."""

    def insert_spans(self, rows: Rows) -> int: ...

    def insert_turns(self, rows: Rows) -> int: ...

    def insert_findings(self, rows: Rows) -> int: ...

    def insert_verifications(self, rows: Rows) -> int: ...

    def insert_snapshots(self, rows: Rows) -> int: ...

    def insert_turn_evidence(self, rows: Rows) -> int: ...


class RecoveryReads(Protocol):
    """What a restart (or a late span) reads back: traces owed a verdict, their spans,
    and the verdicts already stored for them. May raise `StoreError`."""

    def recent_tenants(self, since: datetime) -> list[str]:
        """Tenants with spans ingested at or after `since`, sorted."""
        ...

    def owed_traces(
        self, tenant: str, since: datetime, limit: int = ..., after: OwedTrace | None = None
    ) -> list[OwedTrace]:
        """Traces with a span ingested since `since` that no verdict holds, oldest first
        (first ingest, then trace id), at most `limit`, from just past `after`."""
        ...

    def spans_for_traces(self, tenant: str, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Every span of the traces, once each, as rows keyed by `rows.SPAN_COLUMNS`."""
        ...

    def verdicts_for(
        self, tenant: str, trace_ids: Sequence[str], span_ids: Sequence[str], since: datetime
    ) -> list[PriorVerdict]:
        """The latest verdict of each turn of the traces, and of each turn validated since
        `since` holding one of `span_ids`, sorted by turn id."""
        ...


class PipelineStore(RowSink, RecoveryReads, Protocol):
    """Both: what `collector.pipeline.Pipeline` is given."""


if TYPE_CHECKING:
    from factledger.collector.store import Store

    def _the_store_is_a_pipeline_store(store: Store) -> PipelineStore:
        return store  # mypy checks the real store against the Protocol here
