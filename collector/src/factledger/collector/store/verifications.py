"""The store's verification queries: how the sources of truth answered per finding kind
over a time window, and the answers of the turns a page lists.

Only the latest version of a turn counts: it repeats the answers it still applies, so
its rows are the whole story (schemas/012_verifications.sql).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from factledger.processors.verification.base import VerificationOutcome
from factledger.processors.verification.subjects import CANDIDATE_KINDS

from ..rows import epoch_ms
from .connection import Connection
from .sql import LATEST, TURN_IDS_PER_QUERY

OUTCOMES: tuple[str, ...] = tuple(outcome.value for outcome in VerificationOutcome)
"""confirmed, refuted, unverifiable: the counts every tally has."""

# The kind an answer counts under: the finding's it settled; for a candidate no finding
# named (FindingKind empty), the finding a confirmation made of it. An unconfirmed
# candidate changed nothing and counts nowhere (an empty kind, left out).
_COUNTED_KIND = (
    "if(FindingKind != '', FindingKind, if(Outcome = 'confirmed',"
    f" if(ClaimedAbsent, '{CANDIDATE_KINDS[True].value}', '{CANDIDATE_KINDS[False].value}'),"
    " ''))"
)
_TALLY = ", ".join(f"countIf(Outcome = '{outcome}') AS {outcome}" for outcome in OUTCOMES)


def empty_tally() -> dict[str, int]:
    """A tally of no answers: `{confirmed: 0, refuted: 0, unverifiable: 0}`."""
    return dict.fromkeys(OUTCOMES, 0)


class VerificationQueries(Connection):
    """What verification answered, counted."""

    def verification_summary(
        self, tenant: str, *, since: datetime, until: datetime
    ) -> dict[str, Any]:
        """Answers of the latest version of the tenant's turns started in [since, until),
        per finding kind (sorted) and in total: `{kinds: [{kind, confirmed, refuted,
        unverifiable}], total: {confirmed, refuted, unverifiable}}`."""
        params = {"tenant": tenant, "since_ms": epoch_ms(since), "until_ms": epoch_ms(until)}
        answers = (
            f"SELECT {_COUNTED_KIND} AS kind, Outcome FROM {{db}}.verifications"
            f" WHERE Tenant = {{tenant:String}} AND {LATEST}"
            " AND StartedAt >= fromUnixTimestamp64Milli({since_ms:Int64})"
            " AND StartedAt < fromUnixTimestamp64Milli({until_ms:Int64})"
            # Duplicate rows of one answer (a retried insert) count once.
            " ORDER BY TurnId, Version, Idx LIMIT 1 BY TurnId, Version, Idx"
        )
        rows = self._query(
            f"SELECT kind, {_TALLY} FROM ({answers}) WHERE kind != '' GROUP BY kind ORDER BY kind",
            params,
        )
        kinds = [{"kind": row["kind"], **_tally(row)} for row in rows]
        total = {outcome: sum(k[outcome] for k in kinds) for outcome in OUTCOMES}
        return {"kinds": kinds, "total": total}

    def turn_verifications(
        self, tenant: str, versions: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], dict[str, Any]]:
        """Per (turn, version) of `versions` that has answers: the counts by outcome and
        the reasons (sorted, distinct) of the unverifiable ones: `{confirmed, refuted,
        unverifiable, reasons}`. A page's turns only: they are read by primary key."""
        found: dict[tuple[str, int], dict[str, Any]] = {}
        pairs = list(dict.fromkeys(versions))
        for start in range(0, len(pairs), TURN_IDS_PER_QUERY):
            answers = (
                "SELECT TurnId, Version, Outcome, Reason FROM {db}.verifications"
                " WHERE Tenant = {tenant:String}"
                " AND (TurnId, Version) IN {pairs:Array(Tuple(String, UInt32))}"
                " ORDER BY TurnId, Version, Idx LIMIT 1 BY TurnId, Version, Idx"
            )
            for row in self._query(
                f"SELECT TurnId, Version, {_TALLY}, arraySort(groupUniqArrayIf(Reason,"
                " Outcome = 'unverifiable' AND Reason != '')) AS reasons"
                f" FROM ({answers}) GROUP BY TurnId, Version",
                {"tenant": tenant, "pairs": pairs[start : start + TURN_IDS_PER_QUERY]},
            ):
                key = (row["TurnId"], int(row["Version"]))
                found[key] = {**_tally(row), "reasons": [str(r) for r in row["reasons"]]}
        return found


def _tally(row: Mapping[str, Any]) -> dict[str, int]:
    return {outcome: int(row[outcome]) for outcome in OUTCOMES}
