"""The alerts part of the query API (`/api/v1/alerts`): current state, history, rules.

Current state comes from the running alert loop (its latest evaluation and the alerts it
holds as firing); the history and the delivery attempts come from the store. Handlers are
plain functions run in FastAPI's thread pool, since store calls block.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from factledger.collector.alerts.loop import AlertLoop
from factledger.collector.alerts.rules import AlertConfig
from factledger.collector.api.models import AlertRules, Alerts, error_responses
from factledger.collector.api.readers import ReadTenant
from factledger.collector.service import service_of
from factledger.collector.store import Store

router = APIRouter(tags=["alerts"])

EVENTS_PER_ALERT = 20
DELIVERIES_PER_ALERT = 50


def _loop(request: Request, tenant: str) -> AlertLoop | None:
    """The tenant's alert loop; None where this replica runs none (alerts disabled here,
    or a tenant the configuration does not name)."""
    loops: dict[str, AlertLoop] = request.app.state.alert_loops
    return loops.get(tenant)


def _config(request: Request, tenant: str) -> AlertConfig:
    """The rules `tenant`'s alerts are evaluated with."""
    config: AlertConfig = request.app.state.alert_config
    return config.for_tenant(tenant)


@router.get("/alerts", responses=error_responses(403))
def alerts(
    request: Request,
    tenant: ReadTenant,
    limit: Annotated[int, Query(ge=1, le=500, description="alerts in the history")] = 50,
    rule: Annotated[str | None, Query(description="only this rule's alerts")] = None,
    state: Annotated[
        Literal["firing", "resolved"] | None, Query(description="only alerts in this state")
    ] = None,
) -> Alerts:
    """Current state per rule and group, and the history of alerts (newest first), each
    with its firing/resolved notices and its webhook delivery attempts."""
    loop = _loop(request, tenant)
    config = _config(request, tenant)
    current = [
        entry
        for entry in (loop.current() if loop else [])
        if (rule is None or entry["rule"] == rule)
        and (state is None or entry["state"] == ("firing" if state == "firing" else "ok"))
    ]
    store: Store = service_of(request).store
    # Filtering by state after the query could leave the page short: fetch more, then cut.
    wanted = min(1000, limit * 4) if state else limit
    fetched = store.alert_summaries(tenant, limit=wanted, rule=rule)
    history = [a for a in fetched if state is None or a["state"] == state][:limit]
    ids = [a["alert_id"] for a in history]
    events = store.alert_events(tenant, ids, per_alert=EVENTS_PER_ALERT)
    deliveries = store.alert_deliveries(tenant, ids, per_alert=DELIVERIES_PER_ALERT)
    by_alert: dict[str, dict[str, list[dict[str, Any]]]] = {
        i: {"events": [], "deliveries": []} for i in ids
    }
    for event in events:
        by_alert[event["alert_id"]]["events"].append(event)
    for delivery in deliveries:
        by_alert[delivery["alert_id"]]["deliveries"].append(delivery)
    for alert in history:
        alert.update(by_alert[alert["alert_id"]])
        rule_config = config.rule(alert["rule"])
        alert["group_by"] = rule_config.group_by if rule_config else None
    return Alerts.model_validate(
        {
            "current": current,
            "history": history,
            "firing": sum(1 for entry in current if entry["state"] == "firing"),
            "evaluated_at": loop.evaluated_at if loop else None,
        }
    )


@router.get("/alerts/rules", responses=error_responses(403))
def alert_rules(request: Request, tenant: ReadTenant) -> AlertRules:
    """The rules the tenant's alerts are evaluated with (webhook URLs redacted), whether
    they come from a rules file or are the built-in default, how often they are evaluated
    and how notices are delivered. The file's path on the server is not shown."""
    config = _config(request, tenant)
    return AlertRules.model_validate(
        {
            "tenant": tenant,
            "source": "file" if config.source else "built-in",
            "interval_seconds": request.app.state.alert_interval,
            "dashboard_url": config.dashboard_url,
            "delivery": {
                "attempts": config.delivery.attempts,
                "backoff_seconds": config.delivery.backoff.total_seconds(),
                "timeout_seconds": config.delivery.timeout.total_seconds(),
            },
            "rules": [r.as_json() for r in config.rules],
        }
    )
