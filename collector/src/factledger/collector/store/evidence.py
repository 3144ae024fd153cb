"""The store's evidence queries: a turn version's snapshots, citation backings and backed
identifiers, and one snapshot with its (redacted) content."""

from __future__ import annotations

from typing import Any

from ..rows import from_epoch_ms
from .connection import Connection


class EvidenceQueries(Connection):
    """Evidence snapshots as the query API shows them."""

    def turn_evidence(self, tenant: str, turn_id: str, version: int) -> dict[str, Any]:
        """`snapshots` (hash, url_or_path, tool, call_id, fetched_at, size), `citations`
        (cited, start, end, snapshot: a hash or None) and `backings` (token, start, end,
        tool, call_id or None: the reply's identifiers a tool result backs) of one verdict
        version of a turn; all empty for a version stored without evidence."""
        rows = self._query(
            "SELECT Snapshots.Hash, Snapshots.UrlOrPath, Snapshots.Tool, Snapshots.CallId,"
            " arrayMap(t -> toUnixTimestamp64Milli(t), Snapshots.FetchedAt) AS fetched_ms,"
            " Snapshots.Size, Citations.Cited, Citations.SpanStart, Citations.SpanEnd,"
            " Citations.SnapshotHash, Backings.Token, Backings.SpanStart, Backings.SpanEnd,"
            " Backings.Tool, Backings.CallId FROM {db}.turn_evidence"
            " WHERE Tenant = {tenant:String} AND TurnId = {turn_id:String}"
            " AND Version = {version:UInt32} LIMIT 1",
            {"tenant": tenant, "turn_id": turn_id, "version": version},
        )
        if not rows:
            return {"snapshots": [], "citations": [], "backings": []}
        row = rows[0]
        snapshots = zip(
            row["Snapshots.Hash"],
            row["Snapshots.UrlOrPath"],
            row["Snapshots.Tool"],
            row["Snapshots.CallId"],
            row["fetched_ms"],
            row["Snapshots.Size"],
            strict=True,
        )
        citations = zip(
            row["Citations.Cited"],
            row["Citations.SpanStart"],
            row["Citations.SpanEnd"],
            row["Citations.SnapshotHash"],
            strict=True,
        )
        backings = zip(
            row["Backings.Token"],
            row["Backings.SpanStart"],
            row["Backings.SpanEnd"],
            row["Backings.Tool"],
            row["Backings.CallId"],
            strict=True,
        )
        return {
            "snapshots": [
                {
                    "hash": digest,
                    "url_or_path": address,
                    "tool": tool,
                    "call_id": call_id,
                    "fetched_at": from_epoch_ms(int(ms)),
                    "size": int(size),
                }
                for digest, address, tool, call_id, ms, size in snapshots
            ],
            "citations": [
                {"cited": cited, "start": int(start), "end": int(end), "snapshot": digest or None}
                for cited, start, end, digest in citations
            ],
            "backings": [
                {
                    "token": token,
                    "start": int(start),
                    "end": int(end),
                    "tool": tool,
                    "call_id": call_id or None,
                }
                for token, start, end, tool, call_id in backings
            ],
        }

    def get_snapshot(self, tenant: str, digest: str) -> dict[str, Any] | None:
        """One snapshot of the tenant by its hash, as its first read stored it, with its
        content; None when the tenant has none with that hash."""
        rows = self._query(
            "SELECT Hash, UrlOrPath, Tool, CallId, TurnId, TraceId,"
            " toUnixTimestamp64Milli(FetchedAt) AS fetched_ms, Size, Content"
            " FROM {db}.snapshots WHERE Tenant = {tenant:String} AND Hash = {hash:String}"
            " ORDER BY FetchedAt LIMIT 1",
            {"tenant": tenant, "hash": digest},
        )
        if not rows:
            return None
        row = rows[0]
        return {
            "hash": row["Hash"],
            "url_or_path": row["UrlOrPath"],
            "tool": row["Tool"],
            "call_id": row["CallId"],
            "turn_id": row["TurnId"],
            "trace_id": row["TraceId"],
            "fetched_at": from_epoch_ms(int(row["fetched_ms"])),
            "size": int(row["Size"]),
            "content": row["Content"],
        }
