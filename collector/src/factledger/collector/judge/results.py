"""Storing what judging produced: turn, finding, evidence and verification rows, counts,
the verdict delay; and handing verification requests on.

One insert per table for a round's results, through the pipeline's held inserts
(`collector.ingest.retry`): a verdict is never dropped while the store cannot write.
A version's findings, verification answers and evidence (snapshots, citation backings)
are stored before its turn row, the row readers find a version by: a reader that sees the
version sees all of it (`GET /api/v1/turns/{id}` read a version's turn row before its
findings were in, and answered it without them). Once a round's rows are stored, their
verdict versions go to the export outbox (`collector.export.outbox`), which only appends:
export costs judging a record's encoding and a write to the page cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from factledger.collector import rows
from factledger.collector.export.base import VerdictRecord
from factledger.collector.export.records import DEFAULT_DASHBOARD_URL, verdict_records
from factledger.collector.ingest.admission import Backlog
from factledger.collector.ingest.retry import Send
from factledger.collector.judge.turn_judge import Judged
from factledger.collector.metric_catalogue import VERDICT_DELAY as VERDICT_DELAY
from factledger.collector.metric_catalogue import VERDICT_DELAY_BUCKETS as VERDICT_DELAY_BUCKETS
from factledger.collector.metrics import Metrics
from factledger.processors.judging.core import VerificationRequest

Submit = Callable[[int, Sequence[VerificationRequest]], None]
"""Hands a judge's verification requests to the verification stage."""

Export = Callable[[Sequence[VerdictRecord]], None]
"""Accepts stored verdict versions for export; never blocks on a target (`Outbox.append`)."""


class VerdictWriter:
    """Stores judging results. Called by the turn processor alone."""

    def __init__(
        self,
        turns: Send,
        findings: Send,
        verifications: Send,
        backlog: Backlog,
        metrics: Metrics,
        verify: Submit | None = None,
        *,
        snapshots: Send,
        evidence: Send,
        export: Export | None = None,
        dashboard_url: str = DEFAULT_DASHBOARD_URL,
    ) -> None:
        self._turns = turns
        self._findings = findings
        self._verifications = verifications
        self._snapshots = snapshots
        self._evidence = evidence
        self._backlog = backlog
        self._metrics = metrics
        self._verify = verify
        self._export = export
        self._dashboard_url = dashboard_url

    def write(self, results: Sequence[Judged], judge: int = 0) -> None:
        """Store `results`' rows and count them; only then do their spans stop counting
        as unassembled (a flush of the pipeline waits for that), stored or not. Their
        verification requests go to the stage once their verdicts are stored; `judge` is
        the judge they came from, where the answers go back."""
        try:
            turn_rows = [row for judged in results for row in judged.turn_rows]
            finding_rows = [row for judged in results for row in judged.finding_rows]
            answer_rows = [row for judged in results for row in judged.verification_rows]
            snapshot_rows = [row for judged in results for row in judged.snapshot_rows]
            evidence_rows = [row for judged in results for row in judged.evidence_rows]
            if snapshot_rows:
                self._snapshots(snapshot_rows)
            if evidence_rows:
                self._evidence(evidence_rows)
            if finding_rows:
                self._findings(finding_rows)
            if answer_rows:
                self._verifications(answer_rows)
            turns_stored = bool(turn_rows) and self._turns(turn_rows)
            if turns_stored:
                delays = rows.first_verdict_delays(turn_rows, int(time.time() * 1000))
                self._metrics.observe(VERDICT_DELAY, *delays)
            if turns_stored and self._export is not None:
                replies = [reply for judged in results for reply in judged.replies]
                self._export(verdict_records(turn_rows, finding_rows, replies, self._dashboard_url))
            requests = [request for judged in results for request in judged.requests]
            if requests and self._verify is not None:
                self._verify(judge, requests)
            for judged in results:
                for count in judged.counts:
                    self._metrics.inc(count.name, count.amount, **dict(count.labels))
        finally:
            self._backlog.assembled(sum(judged.assembled for judged in results))
