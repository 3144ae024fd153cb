"""Beside each citation on the turn page: the snapshot that backs it, or none."""

from __future__ import annotations

import pytest

from factledger.dashboard.client import Citation, SnapshotRef
from factledger.dashboard.snapshot_notes import backing_note

DIGEST = "3f2a" + "0" * 60
SNAPSHOTS: list[SnapshotRef] = [
    {
        "hash": "9c41" + "1" * 60,
        "url_or_path": "https://docs.example.org/other",
        "tool": "http_get",
        "call_id": "call_1",
        "fetched_at": "2025-01-31T12:00:59Z",
        "size": 10,
    },
    {
        "hash": DIGEST,
        "url_or_path": "https://docs.example.org/limits",
        "tool": "fetch_url",
        "call_id": "call_3",
        "fetched_at": "2025-01-31T12:01:07.250000Z",
        "size": 1830,
    },
]


def cited(snapshot: str | None) -> Citation:
    return {
        "cited": "https://docs.example.org/limits/",
        "start": 0,
        "end": 32,
        "snapshot": snapshot,
    }


@pytest.mark.parametrize(
    ("citation", "snapshots", "note"),
    [
        pytest.param(
            cited(DIGEST),
            SNAPSHOTS,
            "backed by snapshot 3f2a… fetched 12:01:07 by fetch_url (call_3)",
            id="backed",
        ),
        pytest.param(cited(None), SNAPSHOTS, "no snapshot", id="unbacked"),
        pytest.param(cited(DIGEST), SNAPSHOTS[:1], "no snapshot", id="snapshot-not-listed"),
        pytest.param(
            cited(DIGEST),
            [{**SNAPSHOTS[1], "call_id": ""}],
            "backed by snapshot 3f2a… fetched 12:01:07 by fetch_url",
            id="no-call-id",
        ),
    ],
)
def test_backing_note(citation: Citation, snapshots: list[SnapshotRef], note: str) -> None:
    assert backing_note(citation, snapshots) == note
