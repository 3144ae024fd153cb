"""Verdict records as bytes in the outbox's segment files, and back.

JSON, one object per record, with the time the outbox accepted it (wall seconds), which
the give-up time counts from across restarts. A record that no longer decodes (written
by a version with other fields) is reported as None and counted by the outbox.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from factledger.collector.export.base import ExportedFinding, VerdictRecord

CONTENT_TYPE = "application/x-factledger-verdict-record+json; v=1"


def encode(record: VerdictRecord, accepted_at: float) -> bytes:
    """The bytes of `record`, accepted at `accepted_at`."""
    fields = asdict(record)
    fields["accepted_at"] = accepted_at
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode()


def decode(body: bytes) -> tuple[VerdictRecord, float] | None:
    """The record and its acceptance time, or None for bytes that are no record."""
    try:
        fields: dict[str, Any] = json.loads(body)
        accepted_at = float(fields.pop("accepted_at"))
        findings = tuple(ExportedFinding(**f) for f in fields.pop("findings"))
        return VerdictRecord(**fields, findings=findings), accepted_at
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
