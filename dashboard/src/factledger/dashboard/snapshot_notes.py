"""What backs each citation of a reply, in words: the evidence snapshot a read of the turn
made of the cited address (seed 003), or none. Pure: the turn page draws the lines."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.dashboard.client import Citation, SnapshotRef
from factledger.dashboard.figures import parse_time

HASH_CHARS = 4
"""Hex digits of a snapshot's hash shown: enough to tell a turn's snapshots apart."""


def backing_note(citation: Citation, snapshots: Sequence[SnapshotRef]) -> str:
    """`backed by snapshot 3f2a… fetched 12:01:07 by fetch_url (call_3)`, or `no snapshot`
    when no read of the turn retrieved the cited address."""
    digest = citation["snapshot"]
    snapshot = next((s for s in snapshots if s["hash"] == digest), None)
    if digest is None or snapshot is None:
        return "no snapshot"
    fetched = parse_time(snapshot["fetched_at"]).strftime("%H:%M:%S")
    call = f" ({snapshot['call_id']})" if snapshot["call_id"] else ""
    return (
        f"backed by snapshot {digest[:HASH_CHARS]}… fetched {fetched} by {snapshot['tool']}{call}"
    )
