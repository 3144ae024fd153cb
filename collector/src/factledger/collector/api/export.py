"""The export part of the query API (`/api/v1/export/status`): what each verdict export
target took, retried and dropped since start, and what waits in its outbox now."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, BackgroundTasks, Request

from factledger.collector.api.models import ExportStatus, ExportTargetStatus
from factledger.collector.export.labels import LabelExport
from factledger.collector.export.outbox import Outbox

router = APIRouter(tags=["export"])


def export_labels(
    request: Request, tasks: BackgroundTasks, tenant: str, turn_ids: Sequence[str], label: str
) -> None:
    """After a review route has stored `label` on `turn_ids`: their export records are
    made once the answer is sent (nothing when no export target is configured)."""
    labels: LabelExport | None = getattr(request.app.state, "label_export", None)
    if labels is not None:
        tasks.add_task(labels, tenant, list(turn_ids), label)


@router.get("/export/status")
def export_status(request: Request) -> ExportStatus:
    """Per target: sent, retried, dropped by reason, pending and the oldest one's wait.
    Counts are the service's own since it started, across tenants."""
    outbox: Outbox | None = getattr(request.app.state, "outbox", None)
    statuses = outbox.status() if outbox is not None else []
    return ExportStatus(
        targets=[
            ExportTargetStatus(
                target=s.target,
                sent=s.sent,
                retried=s.retried,
                dropped=s.dropped,
                pending=s.pending,
                lag_seconds=round(s.lag_seconds, 3),
            )
            for s in statuses
        ]
    )
