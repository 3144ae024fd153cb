"""The store's guard query: per model and agent, what the in-loop guard did over a window.

Reads the Guard* columns of `turns` (schemas/016_guard.sql): the latest version of each
turn of its own (a sub-agent's turn nested in another is counted by the one it is in),
guarded turns only. What a turn came to is its stored `GuardResult`, decided once by
`processors.guard_activity.guard_outcome`; nothing here restates that rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from factledger.processors.guard_activity import GUARD_OUTCOMES

from ..rows import epoch_ms
from .connection import Connection
from .sql import LATEST

GUARDED_RESULTS: tuple[str, ...] = tuple(r for r in GUARD_OUTCOMES if r != "unguarded")
"""passed, footnoted, corrected, refused: the counts every guard tally has."""
MAX_GUARD_GROUPS = 1_000
"""Model and agent pairs one answer lists at most (the most guarded first)."""

COUNTS: tuple[str, ...] = ("turns", "checks", "nudges", *GUARDED_RESULTS)
_TALLY = ", ".join(f"countIf(GuardResult = '{result}') AS {result}" for result in GUARDED_RESULTS)


def empty_guard_tally() -> dict[str, int]:
    """A tally of no guarded turns: every count of `COUNTS` at 0."""
    return dict.fromkeys(COUNTS, 0)


class GuardQueries(Connection):
    """What the in-loop guard did, counted."""

    def guard_summary(
        self, tenant: str, *, since: datetime, until: datetime, service: str | None = None
    ) -> dict[str, Any]:
        """The guarded turns of the tenant started in [since, until) (of `service` when
        given), per model and agent and in total: `{groups: [{model, agent, turns, checks,
        nudges, passed, footnoted, corrected, refused}], total: {...}}`, `turns` the
        guarded turns, `checks` and `nudges` summed over them; groups sorted by most
        guarded turns, then model and agent, at most `MAX_GUARD_GROUPS`."""
        params: dict[str, Any] = {
            "tenant": tenant,
            "since_ms": epoch_ms(since),
            "until_ms": epoch_ms(until),
            "limit": MAX_GUARD_GROUPS,
        }
        service_filter = ""
        if service is not None:
            params["service"] = service
            service_filter = " AND ServiceName = {service:String}"
        guarded = (
            "SELECT TurnId, Model, AgentName, GuardChecks, GuardNudges, GuardResult"
            f" FROM {{db}}.turns WHERE Tenant = {{tenant:String}} AND ParentTurnId = ''"
            f" AND {LATEST} AND GuardChecks > 0{service_filter}"
            " AND StartedAt >= fromUnixTimestamp64Milli({since_ms:Int64})"
            " AND StartedAt < fromUnixTimestamp64Milli({until_ms:Int64})"
            # Duplicate rows of one version (a retried insert) count once.
            " ORDER BY TurnId, Version DESC LIMIT 1 BY TurnId"
        )
        rows = self._query(
            "SELECT Model, AgentName, count() AS turns, sum(GuardChecks) AS checks,"
            f" sum(GuardNudges) AS nudges, {_TALLY} FROM ({guarded})"
            " GROUP BY Model, AgentName ORDER BY turns DESC, Model, AgentName"
            " LIMIT {limit:UInt32}",
            params,
        )
        groups = [{"model": r["Model"], "agent": r["AgentName"], **_tally(r)} for r in rows]
        total = empty_guard_tally()
        for group in groups:
            for name in COUNTS:
                total[name] += group[name]
        return {"groups": groups, "total": total}


def _tally(row: Mapping[str, Any]) -> dict[str, int]:
    return {name: int(row[name]) for name in COUNTS}
