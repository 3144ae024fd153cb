"""The store's alert history: alerts (latest row per alert or per group), their notices
and their webhook delivery attempts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..rows import from_epoch_ms
from .connection import Connection
from .sql import MAX_LIST_LIMIT, check_limit


class AlertQueries(Connection):
    """The alert loop's memory and the alerts API's history."""

    def alert_summaries(
        self,
        tenant: str,
        *,
        limit: int = 100,
        rule: str | None = None,
        latest_per_group: bool = False,
    ) -> list[dict[str, Any]]:
        """Alerts (one per AlertId, folded from its rows), most recently active first.

        A firing notice is a `firing` row whose FiredAt is when it was sent (the first
        one: when the alert fired; later ones are repeats); the resolution is a `resolved`
        row. Keys: alert_id, rule, key, state (of its latest row), fired_at, notified_at
        (latest firing notice), resolved_at (None while firing), notices (firing rows),
        threshold (when it fired), value, turns and message (of its latest row), last_at.
        `latest_per_group` keeps only the newest alert of each (rule, key). At most `limit`.
        """
        check_limit("limit", limit, MAX_LIST_LIMIT)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit}
        where = "Tenant = {tenant:String}"
        if rule is not None:
            where += " AND Rule = {rule:String}"
            params["rule"] = rule
        last = "ifNull(ResolvedAt, FiredAt)"
        rows = self._query(
            "SELECT AlertId, any(Rule) AS rule, any(GroupKey) AS key,"
            f" argMax(State, {last}) AS state,"
            " toUnixTimestamp64Milli(minIf(FiredAt, State = 'firing')) AS fired_ms,"
            " toUnixTimestamp64Milli(maxIf(FiredAt, State = 'firing')) AS notified_ms,"
            " toUnixTimestamp64Milli(maxIf(ResolvedAt, State = 'resolved')) AS resolved_ms,"
            " countIf(State = 'firing') AS notices,"
            " argMinIf(Threshold, FiredAt, State = 'firing') AS threshold,"
            f" argMax(Value, {last}) AS value, argMax(Turns, {last}) AS turns,"
            f" argMax(Message, {last}) AS message,"
            f" toUnixTimestamp64Milli(max({last})) AS last_ms"
            f" FROM {{db}}.alerts WHERE {where} GROUP BY AlertId"
            " ORDER BY last_ms DESC, AlertId DESC"
            + (" LIMIT 1 BY rule, key" if latest_per_group else "")
            + " LIMIT {limit:UInt32}",
            params,
        )
        return [
            {
                "alert_id": r["AlertId"],
                "rule": r["rule"],
                "key": r["key"],
                "state": r["state"],
                "fired_at": from_epoch_ms(r["fired_ms"]),
                "notified_at": from_epoch_ms(r["notified_ms"]),
                "resolved_at": _optional_ms(r["resolved_ms"] if r["state"] == "resolved" else None),
                "notices": int(r["notices"]),
                "threshold": float(r["threshold"]),
                "value": float(r["value"]),
                "turns": int(r["turns"]),
                "message": r["message"],
                "last_at": from_epoch_ms(r["last_ms"]),
            }
            for r in rows
        ]

    def alert_events(
        self, tenant: str, alert_ids: Sequence[str], *, per_alert: int = 20
    ) -> list[dict[str, Any]]:
        """The rows of the given alerts, newest first, at most `per_alert` per alert.
        Keys: alert_id, rule, key, state, value, threshold, turns, fired_at, resolved_at,
        message, at (ResolvedAt, else FiredAt)."""
        check_limit("alert_ids", len(alert_ids), MAX_LIST_LIMIT)
        check_limit("per_alert", per_alert, MAX_LIST_LIMIT)
        if not alert_ids:
            return []
        rows = self._query(
            "SELECT AlertId, Rule, GroupKey, State, Value, Threshold, Turns, Message,"
            " toUnixTimestamp64Milli(FiredAt) AS fired_ms,"
            " toUnixTimestamp64Milli(ResolvedAt) AS resolved_ms,"
            " toUnixTimestamp64Milli(ifNull(ResolvedAt, FiredAt)) AS at_ms"
            " FROM {db}.alerts WHERE Tenant = {tenant:String}"
            " AND AlertId IN {alert_ids:Array(String)}"
            " ORDER BY at_ms DESC, State DESC LIMIT {per_alert:UInt32} BY AlertId",
            {"tenant": tenant, "alert_ids": list(alert_ids), "per_alert": per_alert},
        )
        return [
            {
                "alert_id": r["AlertId"],
                "rule": r["Rule"],
                "key": r["GroupKey"],
                "state": r["State"],
                "value": float(r["Value"]),
                "threshold": float(r["Threshold"]),
                "turns": int(r["Turns"]),
                "fired_at": from_epoch_ms(r["fired_ms"]),
                "resolved_at": _optional_ms(r["resolved_ms"]),
                "message": r["Message"],
                "at": from_epoch_ms(r["at_ms"]),
            }
            for r in rows
        ]

    def alert_deliveries(
        self, tenant: str, alert_ids: Sequence[str], *, per_alert: int = 50
    ) -> list[dict[str, Any]]:
        """Webhook delivery attempts of the given alerts, newest first, at most `per_alert`
        per alert. Keys: alert_id, target, attempt, ok, status_code (0: no answer), error,
        at."""
        check_limit("alert_ids", len(alert_ids), MAX_LIST_LIMIT)
        check_limit("per_alert", per_alert, MAX_LIST_LIMIT)
        if not alert_ids:
            return []
        rows = self._query(
            "SELECT AlertId, Target, Attempt, Ok, StatusCode, Error,"
            " toUnixTimestamp64Milli(At) AS at_ms FROM {db}.alert_deliveries"
            " WHERE Tenant = {tenant:String} AND AlertId IN {alert_ids:Array(String)}"
            " ORDER BY at_ms DESC, Attempt DESC LIMIT {per_alert:UInt32} BY AlertId",
            {"tenant": tenant, "alert_ids": list(alert_ids), "per_alert": per_alert},
        )
        return [
            {
                "alert_id": r["AlertId"],
                "target": r["Target"],
                "attempt": int(r["Attempt"]),
                "ok": bool(r["Ok"]),
                "status_code": int(r["StatusCode"]),
                "error": r["Error"],
                "at": from_epoch_ms(r["at_ms"]),
            }
            for r in rows
        ]


def _optional_ms(ms: int | None) -> datetime | None:
    return None if ms is None else from_epoch_ms(ms)
