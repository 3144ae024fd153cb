"""The store's turn queries: the turns list with its filters, one turn with its findings,
spans, reviews and verdict history, and which turns exist."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..api.views import finding_view, max_score, span_view, tool_call_view, verification_view
from ..rows import epoch_ms, from_epoch_ms
from .connection import Connection
from .preview import LEAD_CHARS, flagged_window
from .sql import (
    LATEST,
    LIVE_REVIEWS,
    MAX_LIST_LIMIT,
    SPANS_BY_ID,
    TURN_IDS_PER_QUERY,
    TURN_SUMMARY,
    check_limit,
    turn_summary,
    unaliased_span,
)


@dataclass(frozen=True)
class _Reason:
    """What a list shows of a turn's findings: the deciding message, and where in the
    reply the first flagged token sits (None when no reject or flag is located)."""

    why: str
    first_span: tuple[int, int] | None


class TurnQueries(Connection):
    """Turns as the query API lists and shows them."""

    def list_turns(
        self,
        tenant: str,
        *,
        verdict: str | Sequence[str] | None = None,
        model: str | None = None,
        agent: str | None = None,
        kind: str | None = None,
        trace_id: str | None = None,
        conversation_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
        service: str | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """The latest version of the tenant's turns, newest first, and how many match.

        Filters apply to the latest version; `since` <= StartedAt < `until`; `verdict` is
        one verdict or several (any of them); `q` matches replies containing it, ignoring
        case. Keys:
        turn_id, trace_id, conversation_id, service, agent, model, started_at, ended_at
        (aware UTC datetimes), verdict, kinds, reply_preview, version, why (the
        message of the finding that decides the verdict, see `_reasons`; empty without
        findings) and flagged_preview (the reply around its first flagged token,
        `preview.flagged_window`; the reply_preview when no finding locates one).
        """
        check_limit("limit", limit, MAX_LIST_LIMIT)
        check_limit("offset", offset, 2**32 - 1)
        params: dict[str, Any] = {"tenant": tenant, "limit": limit, "offset": offset}
        # Turns of their own: a sub-agent's turn is shown by the turn it is nested in.
        conditions = ["Tenant = {tenant:String}", "ParentTurnId = ''", LATEST]
        verdicts = None if verdict is None or isinstance(verdict, str) else list(verdict)
        filters: list[tuple[str, Any, str]] = [
            (
                "verdict",
                verdict if isinstance(verdict, str) else None,
                "Verdict = {verdict:String}",
            ),
            ("verdicts", verdicts, "Verdict IN {verdicts:Array(String)}"),
            ("q", q or None, "positionCaseInsensitiveUTF8(Reply, {q:String}) > 0"),
            ("model", model, "Model = {model:String}"),
            ("agent", agent, "AgentName = {agent:String}"),
            ("service", service, "ServiceName = {service:String}"),
            ("kind", kind, "has(Kinds, {kind:String})"),
            ("trace_id", trace_id, "TraceId = {trace_id:String}"),
            ("conversation_id", conversation_id, "ConversationId = {conversation_id:String}"),
            (
                "since_ms",
                None if since is None else epoch_ms(since),
                "StartedAt >= fromUnixTimestamp64Milli({since_ms:Int64})",
            ),
            (
                "until_ms",
                None if until is None else epoch_ms(until),
                "StartedAt < fromUnixTimestamp64Milli({until_ms:Int64})",
            ),
        ]
        for name, value, condition in filters:
            if value is not None:
                params[name] = value
                conditions.append(condition)
        where = " AND ".join(conditions)
        # Counted before the page is read: turns only arrive, so a page never holds fewer
        # of them than the count says.
        total = self._scalar(f"SELECT uniqExact(TurnId) FROM {{db}}.turns WHERE {where}", params)
        # The page's ids first, reading only the filtered and sorted columns; the wide
        # columns then for those ids alone, through the primary key.
        page = (
            f"SELECT TurnId FROM {{db}}.turns WHERE {where}"
            " ORDER BY StartedAt DESC, TurnId DESC LIMIT 1 BY TurnId"
            " LIMIT {limit:UInt32} OFFSET {offset:UInt32}"
        )
        rows = self._query(
            f"SELECT {TURN_SUMMARY} FROM {{db}}.turns"
            f" WHERE Tenant = {{tenant:String}} AND TurnId IN ({page})"
            " ORDER BY StartedAt DESC, TurnId DESC, Version DESC LIMIT 1 BY TurnId",
            params,
        )
        reasons = self._reasons(tenant, [row["TurnId"] for row in rows])
        turns = [turn_summary(row) for row in rows]
        windows = self._windows(tenant, turns, reasons)
        for turn in turns:
            reason = reasons.get((turn["turn_id"], turn["version"]))
            turn["why"] = reason.why if reason else ""
            turn["flagged_preview"] = windows.get(turn["turn_id"], turn["reply_preview"])
        return turns, total

    def _reasons(self, tenant: str, turn_ids: Sequence[str]) -> dict[tuple[str, int], _Reason]:
        """Per (turn, version) of `turn_ids`, the message of the finding that decides the
        verdict (the first, by Idx, of the highest severity) and the offsets of the
        first flagged token (the earliest reject or flag located in the reply). A list
        page's turns only, so the filter on TurnId reads them through the primary key."""
        if not turn_ids:
            return {}
        located = "SpanStart >= 0 AND Severity IN ('reject', 'flag')"
        rows = self._query(
            "SELECT TurnId, Version, argMin(Message,"
            " (multiIf(Severity = 'reject', 0, Severity = 'flag', 1, 2), Idx)) AS why,"
            f" countIf({located}) AS located,"
            f" argMinIf(SpanStart, SpanStart, {located}) AS first_start,"
            f" argMinIf(SpanEnd, SpanStart, {located}) AS first_end"
            " FROM {db}.findings"
            " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}"
            " GROUP BY TurnId, Version",
            {"tenant": tenant, "turn_ids": list(turn_ids)},
        )
        return {
            (row["TurnId"], int(row["Version"])): _Reason(
                str(row["why"]),
                (int(row["first_start"]), int(row["first_end"])) if row["located"] else None,
            )
            for row in rows
        }

    def _windows(
        self,
        tenant: str,
        turns: Sequence[Mapping[str, Any]],
        reasons: Mapping[tuple[str, int], _Reason],
    ) -> dict[str, str]:
        """The flagged window of each listed turn whose first flagged token lies past the
        start of its preview; their replies only are read."""
        spans: dict[str, tuple[int, int]] = {}
        for turn in turns:
            reason = reasons.get((turn["turn_id"], turn["version"]))
            if reason and reason.first_span and reason.first_span[0] > LEAD_CHARS:
                spans[turn["turn_id"]] = reason.first_span
        if not spans:
            return {}
        rows = self._query(
            "SELECT TurnId, Reply FROM {db}.turns"
            " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}"
            " ORDER BY Version DESC LIMIT 1 BY TurnId",
            {"tenant": tenant, "turn_ids": list(spans)},
        )
        return {
            row["TurnId"]: flagged_window(str(row["Reply"]), *spans[row["TurnId"]]) for row in rows
        }

    def get_turn(self, tenant: str, turn_id: str) -> dict[str, Any] | None:
        """The latest version of one turn with its findings, spans, reviews and the verdict
        history (`versions`, oldest first); None when the tenant has no such turn."""
        params = {"tenant": tenant, "turn_id": turn_id}
        where = "Tenant = {tenant:String} AND TurnId = {turn_id:String}"

        found = self._query(
            f"SELECT {TURN_SUMMARY}, Provider, UserMessage, Reply, ToolCalls, SpanIds,"
            " Validators, MaxScore, HasClass5, ParentTurnId,"
            " GuardChecks, GuardNudges, GuardOutcome, GuardAction, GuardResult,"
            " toUnixTimestamp64Milli(ValidatedAt) AS validated_ms"
            f" FROM {{db}}.turns WHERE {where} ORDER BY Version DESC LIMIT 1",
            params,
        )
        if not found:
            return None
        latest = found[0]
        # The history lives in turn_versions (merges of `turns` keep only the latest
        # version), read after the version shown and cut there: a version stored between
        # the two reads is not in the history of a turn that shows the one before.
        shown = {**params, "version": int(latest["Version"])}

        def history(table: str) -> list[dict[str, Any]]:
            return self._query(
                "SELECT Version, Verdict, Kinds,"
                " toUnixTimestamp64Milli(ValidatedAt) AS validated_ms"
                f" FROM {{db}}.{table} WHERE {where} AND Version <= {{version:UInt32}}"
                " ORDER BY Version LIMIT 1 BY Version",
                shown,
            )

        versions = history("turn_versions") or history("turns")
        turn = turn_summary(latest)
        turn.update(
            agent_started_at=from_epoch_ms(latest["agent_started_ms"]),
            provider=latest["Provider"],
            validated_at=from_epoch_ms(latest["validated_ms"]),
            user_message=latest["UserMessage"],
            reply=latest["Reply"],
            tool_calls=[tool_call_view(c) for c in json.loads(latest["ToolCalls"] or "[]")],
            span_ids=list(latest["SpanIds"]),
            validators=list(latest["Validators"]),
            max_score=max_score(float(latest["MaxScore"]), bool(latest["HasClass5"])),
            has_class5=bool(latest["HasClass5"]),
            findings=self._findings(tenant, turn_id, int(latest["Version"])),
            verifications=self._verifications(tenant, turn_id, int(latest["Version"])),
            spans=self._spans_of_turn(tenant, latest),
            reviews=self._reviews(tenant, turn_id),
            parent_turn_id=latest["ParentTurnId"],
            nested_turns=self._nested_turns(tenant, turn_id),
            guard={
                "checks": int(latest["GuardChecks"]),
                "nudges": int(latest["GuardNudges"]),
                "outcome": latest["GuardOutcome"],
                "action": latest["GuardAction"],
                "result": latest["GuardResult"],
            },
            versions=[
                {
                    "version": int(v["Version"]),
                    "verdict": v["Verdict"],
                    "kinds": list(v["Kinds"]),
                    "validated_at": from_epoch_ms(v["validated_ms"]),
                }
                for v in versions
            ],
        )
        return turn

    def _nested_turns(self, tenant: str, turn_id: str) -> list[dict[str, Any]]:
        """The latest verdict of each turn nested in `turn_id`, by turn id."""
        rows = self._query(
            "SELECT TurnId, AgentName, Verdict, Kinds FROM {db}.turns"
            " WHERE Tenant = {tenant:String} AND ParentTurnId = {turn_id:String}"
            " ORDER BY Version DESC LIMIT 1 BY TurnId",
            {"tenant": tenant, "turn_id": turn_id},
        )
        rows.sort(key=lambda row: row["TurnId"])
        return [
            {
                "turn_id": row["TurnId"],
                "agent": row["AgentName"],
                "verdict": row["Verdict"],
                "kinds": list(row["Kinds"]),
            }
            for row in rows
        ]

    def _findings(self, tenant: str, turn_id: str, version: int) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT Kind, Class, Severity, Message, Token, CheckedAgainst, CheckedNote,"
            " SpanStart, SpanEnd,"
            " Validator, Score, CallId, Real.Token, Real.Tool, Real.CallId FROM {db}.findings"
            " WHERE Tenant = {tenant:String} AND TurnId = {turn_id:String}"
            " AND Version = {version:UInt32} ORDER BY Idx LIMIT 1 BY Idx",
            {"tenant": tenant, "turn_id": turn_id, "version": version},
        )
        return [finding_view(r) for r in rows]

    def _verifications(self, tenant: str, turn_id: str, version: int) -> list[dict[str, Any]]:
        """What the sources of truth answered, as the latest version applied it."""
        rows = self._query(
            "SELECT SubjectKind, Name, ClaimedAbsent, SpanStart, SpanEnd, FindingIdx,"
            " FindingKind, Outcome, Source, Query, Answer, Reason,"
            " toUnixTimestamp64Milli(CheckedAt) AS checked_ms, DurationMs"
            " FROM {db}.verifications"
            " WHERE Tenant = {tenant:String} AND TurnId = {turn_id:String}"
            " AND Version = {version:UInt32} ORDER BY Idx LIMIT 1 BY Idx",
            {"tenant": tenant, "turn_id": turn_id, "version": version},
        )
        return [verification_view(r) for r in rows]

    def _spans_of_turn(self, tenant: str, turn: Mapping[str, Any]) -> list[dict[str, Any]]:
        span_ids = list(turn["SpanIds"])
        if not span_ids:
            return []
        # The spans keep the agent's own times, which a skewed clock's turn does not.
        own_started = int(turn["agent_started_ms"])
        own_ended = own_started + int(turn["ended_ms"]) - int(turn["started_ms"])
        rows = self._query(
            SPANS_BY_ID,
            {
                "tenant": tenant,
                "span_ids": span_ids,
                "started_ms": own_started,
                "ended_ms": own_ended,
            },
        )
        return [span_view(unaliased_span(row)) for row in rows]

    def _reviews(self, tenant: str, turn_id: str) -> list[dict[str, Any]]:
        # Withdrawn reviews are left out: an undone label is as if never given.
        rows = self._query(
            "SELECT ReviewId, Label, Note, Reviewer,"
            f" toUnixTimestamp64Milli(CreatedAt) AS created_ms FROM ({LIVE_REVIEWS})"
            " WHERE TurnId = {turn_id:String} ORDER BY CreatedAt, ReviewId",
            {"tenant": tenant, "turn_id": turn_id},
        )
        return [
            {
                "review_id": r["ReviewId"],
                "label": r["Label"],
                "note": r["Note"],
                "reviewer": r["Reviewer"],
                "created_at": from_epoch_ms(r["created_ms"]),
            }
            for r in rows
        ]

    def known_turns(self, tenant: str, turn_ids: Sequence[str]) -> set[str]:
        """Those of `turn_ids` the tenant has a turn for."""
        unique = sorted(set(turn_ids))
        known: set[str] = set()
        for start in range(0, len(unique), TURN_IDS_PER_QUERY):
            rows = self._query(
                "SELECT DISTINCT TurnId FROM {db}.turns"
                " WHERE Tenant = {tenant:String} AND TurnId IN {turn_ids:Array(String)}",
                {"tenant": tenant, "turn_ids": unique[start : start + TURN_IDS_PER_QUERY]},
            )
            known.update(row["TurnId"] for row in rows)
        return known
