"""The store's review queries: the verification queue (grouped facets, counts), one review,
precision per finding kind, and the labelled turns an export writes as eval cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..api.views import max_score
from ..rows import epoch_ms, from_epoch_ms
from .sql import (
    LATEST,
    LIVE_REVIEWS,
    MAX_LIST_LIMIT,
    MAX_REVIEW_EXPORT,
    SPAN_IDS_PER_QUERY,
    SPANS_BY_ID,
    TURN_IDS_PER_QUERY,
    TURN_SUMMARY,
    check_limit,
    turn_summary,
    unaliased_span,
)
from .verifications import VerificationQueries, empty_tally

QueueVerification = Literal["any", "unverified", "unsettled"]
"""Which queued turns by what verification answered of their latest version: `any`;
`unverified`, no answer at all; `unsettled`, answers that are all unverifiable (no source
could settle the suspicion)."""

# Both read the answers of the version the queue row is: LATEST leaves only the latest.
_VERIFICATION_FILTERS: dict[str, str] = {
    "unverified": "(TurnId, Version) NOT IN (SELECT TurnId, Version FROM {db}.verifications"
    " WHERE Tenant = {tenant:String})",
    "unsettled": "(TurnId, Version) IN (SELECT TurnId, Version FROM {db}.verifications"
    " WHERE Tenant = {tenant:String} GROUP BY TurnId, Version"
    " HAVING countIf(Outcome != 'unverifiable') = 0)",
}


class ReviewQueries(VerificationQueries):
    """What humans review and what their labels say."""

    def review(self, tenant: str, review_id: str) -> dict[str, Any] | None:
        """One review by id, withdrawn or not: `{review_id, turn_id, label, withdrawn}`;
        None when the tenant has no such review."""
        rows = self._query(
            "SELECT TurnId, Label, ReviewId IN (SELECT ReviewId FROM {db}.review_withdrawals"
            " WHERE Tenant = {tenant:String}) AS withdrawn FROM {db}.reviews"
            " WHERE Tenant = {tenant:String} AND ReviewId = {review_id:String} LIMIT 1",
            {"tenant": tenant, "review_id": review_id},
        )
        if not rows:
            return None
        row = rows[0]
        return {
            "review_id": review_id,
            "turn_id": row["TurnId"],
            "label": row["Label"],
            "withdrawn": bool(row["withdrawn"]),
        }

    def review_queue(
        self,
        tenant: str,
        limit: int = 50,
        *,
        kind: str | None = None,
        model: str | None = None,
        agent: str | None = None,
        verification: QueueVerification = "any",
        reply_chars: int = 0,
    ) -> list[dict[str, Any]]:
        """Flagged turns (latest version) without a review that counts (none, or every
        one withdrawn): class-5 suspicions first, then by score (highest first), then
        newest. `kind`, `model` and `agent` narrow it to turns with a finding of that
        kind, of that model, of that agent; `verification` to what verification answered
        (`QueueVerification`). Keys: those of `list_turns` plus max_score, has_class5 and
        `verification` (`turn_verifications`, zeros without answers), and `reply` (its
        first `reply_chars` characters) when that is not 0."""
        check_limit("limit", limit, MAX_LIST_LIMIT)
        where, params = self._queue_where(
            tenant, kind=kind, model=model, agent=agent, verification=verification
        )
        params["limit"] = limit
        order = "HasClass5 DESC, MaxScore DESC, StartedAt DESC, TurnId DESC"
        page = (
            f"SELECT TurnId FROM {{db}}.turns WHERE {where}"
            f" ORDER BY {order} LIMIT 1 BY TurnId LIMIT {{limit:UInt32}}"
        )
        check_limit("reply_chars", reply_chars, 2**20)
        if reply_chars:
            params["reply_chars"] = reply_chars
        extra = (
            ", substringUTF8(Reply, 1, {reply_chars:UInt32}) AS reply_head" if reply_chars else ""
        )
        # Versions differ in score: take each turn's latest row, then order the page.
        rows = self._query(
            f"SELECT * FROM (SELECT {TURN_SUMMARY}, MaxScore, HasClass5, StartedAt{extra}"
            f" FROM {{db}}.turns WHERE Tenant = {{tenant:String}} AND TurnId IN ({page})"
            f" ORDER BY Version DESC LIMIT 1 BY TurnId) ORDER BY {order}",
            params,
        )
        queue = []
        for row in rows:
            turn = turn_summary(row)
            has_class5 = bool(row["HasClass5"])
            turn.update(
                max_score=max_score(float(row["MaxScore"]), has_class5), has_class5=has_class5
            )
            if reply_chars:
                turn["reply"] = row["reply_head"]
            queue.append(turn)
        answers = self.turn_verifications(tenant, [(t["turn_id"], t["version"]) for t in queue])
        for turn in queue:
            tally = answers.get((turn["turn_id"], turn["version"]))
            turn["verification"] = tally or {**empty_tally(), "reasons": []}
        return queue

    def review_queue_count(self, tenant: str, verification: QueueVerification = "any") -> int:
        """How many turns the whole review queue holds (`review_queue` pages through them),
        or the part of it `verification` chooses."""
        where, params = self._queue_where(tenant, verification=verification)
        return self._scalar(f"SELECT uniqExact(TurnId) FROM {{db}}.turns WHERE {where}", params)

    def review_queue_facets(self, tenant: str) -> dict[str, Any]:
        """What the whole review queue holds, for choosing a filter: `{total, kinds,
        models, agents}` (names sorted)."""
        where, params = self._queue_where(tenant)
        rows = self._query(
            "SELECT uniqExact(TurnId) AS total, groupUniqArrayArray(Kinds) AS kinds,"
            " groupUniqArray(Model) AS models, groupUniqArray(AgentName) AS agents"
            f" FROM {{db}}.turns WHERE {where}",
            params,
        )
        if not rows:
            return {"total": 0, "kinds": [], "models": [], "agents": []}
        row = rows[0]
        return {
            "total": int(row["total"]),
            "kinds": sorted(row["kinds"]),
            "models": sorted(row["models"]),
            "agents": sorted(row["agents"]),
        }

    def _queue_where(
        self,
        tenant: str,
        *,
        kind: str | None = None,
        model: str | None = None,
        agent: str | None = None,
        verification: QueueVerification = "any",
    ) -> tuple[str, dict[str, Any]]:
        if verification != "any" and verification not in _VERIFICATION_FILTERS:
            raise ValueError(
                f"verification must be any, unverified or unsettled, not {verification!r}"
            )
        conditions = [
            "Tenant = {tenant:String}",
            LATEST,
            "Verdict = 'flag'",
            f"TurnId NOT IN (SELECT TurnId FROM ({LIVE_REVIEWS}))",
        ]
        if verification in _VERIFICATION_FILTERS:
            conditions.append(_VERIFICATION_FILTERS[verification])
        params: dict[str, Any] = {"tenant": tenant}
        for name, value, condition in (
            ("kind", kind, "has(Kinds, {kind:String})"),
            ("model", model, "Model = {model:String}"),
            ("agent", agent, "AgentName = {agent:String}"),
        ):
            if value:
                params[name] = value
                conditions.append(condition)
        return " AND ".join(conditions), params

    def review_precision(self, tenant: str) -> dict[str, Any]:
        """How often the human labels confirm the validators, from each reviewed turn's
        latest label (withdrawn reviews left out): `{turns: {reviewed, confirmed,
        precision}, kinds: [{kind, reviewed, confirmed, precision}, ...]}`, kinds sorted by
        name; a turn counts under every kind its latest verdict has. `precision` is
        confirmed over reviewed (None when none)."""
        labels = (
            f"SELECT TurnId, argMax(Label, CreatedAt) AS label FROM ({LIVE_REVIEWS})"
            " GROUP BY TurnId"
        )
        latest_kinds = (
            "SELECT TurnId, Kinds FROM {db}.turns WHERE Tenant = {tenant:String}"
            f" AND TurnId IN (SELECT TurnId FROM ({LIVE_REVIEWS}))"
            " ORDER BY Version DESC LIMIT 1 BY TurnId"
        )
        params = {"tenant": tenant}
        per_kind = self._query(
            "SELECT kind, count() AS reviewed, countIf(label = 'hallucination') AS confirmed"
            f" FROM ({labels}) AS r INNER JOIN"
            f" (SELECT TurnId, kind FROM ({latest_kinds}) ARRAY JOIN Kinds AS kind) AS t"
            " ON r.TurnId = t.TurnId GROUP BY kind ORDER BY kind",
            params,
        )
        overall = self._query(
            "SELECT count() AS reviewed, countIf(label = 'hallucination') AS confirmed"
            f" FROM ({labels})",
            params,
        )
        return {
            "turns": _precision(overall[0] if overall else {"reviewed": 0, "confirmed": 0}),
            "kinds": [{"kind": row["kind"], **_precision(row)} for row in per_kind],
        }

    def withdrawals(self, tenant: str, limit: int = 100) -> list[dict[str, Any]]:
        """The tenant's withdrawn reviews, latest withdrawal first, at most `limit`: `{review_id,
        turn_id, label, reviewer, token, withdrawn_at}`, where `reviewer` is the name the
        request gave and `token` the fingerprint of the token that withdrew it ('' on an
        open API). A review withdrawn twice at once is listed by its first withdrawal."""
        check_limit("limit", limit, MAX_LIST_LIMIT)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit}
        withdrawn = self._query(
            "SELECT * FROM (SELECT ReviewId, TurnId, Reviewer, TokenId,"
            " toUnixTimestamp64Milli(WithdrawnAt) AS at FROM {db}.review_withdrawals"
            " WHERE Tenant = {tenant:String} ORDER BY WithdrawnAt LIMIT 1 BY ReviewId)"
            " ORDER BY at DESC, ReviewId LIMIT {limit:UInt32}",
            params,
        )
        labels: dict[str, str] = {}
        if withdrawn:
            for row in self._query(
                "SELECT ReviewId, any(Label) AS Label FROM {db}.reviews"
                " WHERE Tenant = {tenant:String} AND ReviewId IN {ids:Array(String)}"
                " GROUP BY ReviewId",
                {"tenant": tenant, "ids": [row["ReviewId"] for row in withdrawn]},
            ):
                labels[row["ReviewId"]] = row["Label"]
        return [
            {
                "review_id": row["ReviewId"],
                "turn_id": row["TurnId"],
                "label": labels.get(row["ReviewId"], ""),
                "reviewer": row["Reviewer"],
                "token": row["TokenId"],
                "withdrawn_at": from_epoch_ms(row["at"]),
            }
            for row in withdrawn
        ]

    def labelled_turns(
        self,
        tenant: str,
        limit: int = MAX_REVIEW_EXPORT,
        label: str | None = None,
        offset: int = 0,
    ) -> tuple[list[dict[str, Any]], int]:
        """Each labelled turn with its latest review that counts, newest label first, at
        most `limit` labels after skipping `offset`, and how many labels the page read (a
        label whose turn expired is read but has no turn: a page of fewer turns than
        `limit` is not necessarily the last). Only turns whose label is `label` when
        given. Keys: those of
        `list_turns`, `review` ({review_id, label, note, reviewer, created_at}),
        `findings` ([{kind, severity}] of the latest version) and `spans` (the turn's
        spans as rows keyed by SPAN_COLUMNS, for `rows.span_from_row`)."""
        check_limit("limit", limit, MAX_REVIEW_EXPORT)
        check_limit("offset", offset, 2**32 - 1)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit, "offset": offset}
        having = ""
        if label:
            params["label"] = label
            having = " HAVING review.2 = {label:String}"
        labels = self._query(
            "SELECT TurnId, argMax((ReviewId, Label, Note, Reviewer,"
            " toUnixTimestamp64Milli(CreatedAt)), CreatedAt) AS review"
            f" FROM ({LIVE_REVIEWS}) GROUP BY TurnId{having}"
            " ORDER BY review.5 DESC, TurnId LIMIT {limit:UInt32} OFFSET {offset:UInt32}",
            params,
        )
        reviews = {
            row["TurnId"]: {
                "review_id": row["review"][0],
                "label": row["review"][1],
                "note": row["review"][2],
                "reviewer": row["review"][3],
                "created_at": from_epoch_ms(row["review"][4]),
            }
            for row in labels
        }
        turns: dict[str, dict[str, Any]] = {}
        span_ids: dict[str, list[str]] = {}
        ids = list(reviews)
        for start in range(0, len(ids), TURN_IDS_PER_QUERY):
            for row in self._query(
                f"SELECT {TURN_SUMMARY}, SpanIds FROM {{db}}.turns"
                " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}"
                " ORDER BY Version DESC LIMIT 1 BY TurnId",
                {"tenant": tenant, "turn_ids": ids[start : start + TURN_IDS_PER_QUERY]},
            ):
                turn = turn_summary(row)
                turn.update(review=reviews[row["TurnId"]], findings=[], spans=[])
                turns[row["TurnId"]] = turn
                span_ids[row["TurnId"]] = list(row["SpanIds"])
        self._attach_findings(tenant, turns)
        self._attach_spans(tenant, turns, span_ids)
        # A label whose turn expired (retention) has nothing left to export.
        return [turns[turn_id] for turn_id in ids if turn_id in turns], len(ids)

    def _attach_findings(self, tenant: str, turns: Mapping[str, dict[str, Any]]) -> None:
        pairs = [(turn_id, turn["version"]) for turn_id, turn in turns.items()]
        for start in range(0, len(pairs), TURN_IDS_PER_QUERY):
            for row in self._query(
                "SELECT TurnId, Kind, Severity FROM {db}.findings"
                " WHERE Tenant = {tenant:String}"
                " AND (TurnId, Version) IN {pairs:Array(Tuple(String, UInt32))}"
                " ORDER BY TurnId, Idx LIMIT 1 BY TurnId, Version, Idx",
                {"tenant": tenant, "pairs": pairs[start : start + TURN_IDS_PER_QUERY]},
            ):
                turns[row["TurnId"]]["findings"].append(
                    {"kind": row["Kind"], "severity": row["Severity"]}
                )

    def _attach_spans(
        self,
        tenant: str,
        turns: Mapping[str, dict[str, Any]],
        span_ids: Mapping[str, Sequence[str]],
    ) -> None:
        # A span may belong to several turns (a root span around a conversation's turns).
        owners: dict[str, list[str]] = {}
        for turn_id, ids in span_ids.items():
            for span_id in ids:
                owners.setdefault(span_id, []).append(turn_id)
        ordered = sorted(owners)
        if not ordered:
            return
        # SpanId is not in the sort key: the turns' time window (a day's margin for clock
        # skew) prunes the daily partitions, as for one turn's spans.
        started = min(epoch_ms(turn["started_at"]) for turn in turns.values())
        ended = max(epoch_ms(turn["ended_at"]) for turn in turns.values())
        for start in range(0, len(ordered), SPAN_IDS_PER_QUERY):
            for row in self._query(
                SPANS_BY_ID,
                {
                    "tenant": tenant,
                    "span_ids": ordered[start : start + SPAN_IDS_PER_QUERY],
                    "started_ms": started,
                    "ended_ms": ended,
                },
            ):
                span = unaliased_span(row)
                for turn_id in owners[row["SpanId"]]:
                    turns[turn_id]["spans"].append(span)


def _precision(row: Mapping[str, Any]) -> dict[str, Any]:
    reviewed, confirmed = int(row["reviewed"]), int(row["confirmed"])
    return {
        "reviewed": reviewed,
        "confirmed": confirmed,
        "precision": confirmed / reviewed if reviewed else None,
    }
