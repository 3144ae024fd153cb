"""Verdict records from human labels: a label given in the review API is a verdict too.

A turn labelled `hallucination` is exported as a `reject`, one labelled
`not_hallucination` as a `pass`, with cause `labelled`, under the turn's latest stored
version (a label judges what the reviewer saw) and its findings as stored. The reply's
span is found again among the turn's stored spans the way the assembler found it: the
last-ending LLM call the span normalizer recognises (`processors.normalize.dispatch`).

Records are made after the labels are stored, off the request: `LabelExport` is handed to
the route's background tasks, so a label of 500 turns answers as fast as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from factledger.collector import rows
from factledger.collector.export.base import ExportedFinding, Verdict, VerdictRecord
from factledger.collector.export.records import turn_url, validator_class
from factledger.processors.normalize.base import LlmStep
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.export")

LABEL_VERDICTS: Mapping[str, Verdict] = {"hallucination": "reject", "not_hallucination": "pass"}
_FINDING_VERDICTS: Mapping[str, Verdict] = {"reject": "reject", "flag": "flag"}


class LabelSource(Protocol):
    """What `LabelExport` reads of the store."""

    def get_turn(self, tenant: str, turn_id: str) -> dict[str, Any] | None: ...

    def spans_for_traces(self, tenant: str, trace_ids: Sequence[str]) -> list[dict[str, Any]]: ...


def reply_step(spans: Sequence[SpanRecord], span_ids: Sequence[str]) -> LlmStep | None:
    """The turn's last-ending LLM call among `spans` whose ids are the turn's."""
    mine = set(span_ids)
    steps = [
        step
        for span in spans
        if span.span_id in mine and isinstance(step := normalize(span), LlmStep)
    ]
    return max(steps, key=lambda s: s.end_time_unix_nano, default=None)


def labelled_record(
    tenant: str,
    turn: Mapping[str, Any],
    label: str,
    reply: LlmStep | None,
    dashboard_url: str,
    now_ms: int,
) -> VerdictRecord | None:
    """The record of `label` on `turn` (the query API's turn detail); None for a label
    that is no verdict."""
    verdict = LABEL_VERDICTS.get(label)
    if verdict is None:
        return None
    findings = tuple(
        ExportedFinding(
            kind=str(f["kind"]),
            verdict=_FINDING_VERDICTS.get(str(f["severity"]), "pass"),
            token=str(f["token"]),
            message=str(f["message"]),
            validator_class=validator_class(str(f["class"] or "")),
        )
        for f in turn.get("findings", ())
    )
    return VerdictRecord(
        tenant=tenant,
        turn_id=str(turn["turn_id"]),
        version=int(turn["version"]),
        cause="labelled",
        verdict=verdict,
        trace_id=str(turn["trace_id"]),
        span_id=reply.span_id if reply else "",
        response_id=(reply.response_id or None) if reply else None,
        service_name=str(turn["service"]),
        agent_name=str(turn["agent"]),
        model=str(turn["model"]),
        findings=findings,
        turn_url=turn_url(dashboard_url, str(turn["turn_id"])),
        judged_at_ms=now_ms,
    )


class LabelExport:
    """Makes and hands on the records of one labelling. Called after the labels are
    stored, on a background task of the review route; a turn that cannot be read is
    logged and skipped, never an error of the labelling itself."""

    def __init__(
        self,
        store: LabelSource,
        export: Callable[[Sequence[VerdictRecord]], None],
        dashboard_url: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._export = export
        self._dashboard_url = dashboard_url
        self._clock = clock

    def __call__(self, tenant: str, turn_ids: Sequence[str], label: str) -> None:
        if label not in LABEL_VERDICTS:
            return
        records = []
        for turn_id in turn_ids:
            try:
                record = self._record(tenant, turn_id, label)
            except Exception:  # one unreadable turn never costs the others their record
                log.exception("no export record for the label of turn %s", turn_id)
                continue
            if record is not None:
                records.append(record)
        if records:
            self._export(records)

    def _record(self, tenant: str, turn_id: str, label: str) -> VerdictRecord | None:
        turn = self._store.get_turn(tenant, turn_id)
        if turn is None:
            return None
        stored = self._store.spans_for_traces(tenant, [str(turn["trace_id"])])
        reply = reply_step([rows.span_from_row(r) for r in stored], turn.get("span_ids", []))
        now_ms = int(self._clock() * 1000)
        return labelled_record(tenant, turn, label, reply, self._dashboard_url, now_ms)
