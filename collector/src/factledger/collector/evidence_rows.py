"""Rows of the evidence tables (schemas/011_snapshots.sql): `snapshots`, one per tenant
and document content, and `turn_evidence`, one per verdict version of a turn.

Pure shaping, like `collector.rows`: each `*_row` returns a list in its table's
`*_COLUMNS` order; times are Unix milliseconds. Values arrive already redacted
(`Redactor.evidence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from factledger.collector.rows import epoch_ms
from factledger.processors.evidence.result_tokens import Backing
from factledger.processors.evidence.snapshots import CitationBacking, Snapshot

SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "Hash",
    "UrlOrPath",
    "Tool",
    "CallId",
    "TurnId",
    "TraceId",
    "FetchedAt",
    "Size",
    "Content",
)

TURN_EVIDENCE_COLUMNS: tuple[str, ...] = (
    "Tenant",
    "TurnId",
    "Version",
    "StartedAt",
    "Snapshots.Hash",
    "Snapshots.UrlOrPath",
    "Snapshots.Tool",
    "Snapshots.CallId",
    "Snapshots.FetchedAt",
    "Snapshots.Size",
    "Citations.Cited",
    "Citations.SpanStart",
    "Citations.SpanEnd",
    "Citations.SnapshotHash",
    "Backings.Token",
    "Backings.SpanStart",
    "Backings.SpanEnd",
    "Backings.Tool",
    "Backings.CallId",
)


def _ms(unix_ns: int) -> int:
    return unix_ns // 1_000_000


def snapshot_row(tenant: str, snapshot: Snapshot) -> list[Any]:
    """The `snapshots` row of one snapshot, in SNAPSHOT_COLUMNS order."""
    return [
        tenant,
        snapshot.hash,
        snapshot.url_or_path,
        snapshot.tool,
        snapshot.call_id,
        snapshot.turn_id,
        snapshot.trace_id,
        _ms(snapshot.fetched_at_ns),
        snapshot.size,
        snapshot.content,
    ]


def turn_evidence_row(
    tenant: str,
    turn_id: str,
    *,
    version: int,
    started_at: datetime,
    snapshots: Sequence[Snapshot],
    citations: Sequence[CitationBacking],
    backings: Sequence[Backing] = (),
) -> list[Any]:
    """The `turn_evidence` row of one verdict version, in TURN_EVIDENCE_COLUMNS order
    ('' for a citation no snapshot backs)."""
    return [
        tenant,
        turn_id,
        version,
        epoch_ms(started_at),
        *_columns(
            [
                (s.hash, s.url_or_path, s.tool, s.call_id, _ms(s.fetched_at_ns), s.size)
                for s in snapshots
            ],
            6,
        ),
        *_columns([(c.cited, c.start, c.end, c.snapshot_hash or "") for c in citations], 4),
        *_columns([(b.token, b.start, b.end, b.tool, b.call_id) for b in backings], 5),
    ]


def _columns(records: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """`records` (each `width` long) as `width` column lists: the row stores arrays."""
    if not records:
        return [[] for _ in range(width)]  # most turns: no snapshot, no citation
    return [list(column) for column in zip(*records, strict=True)]
