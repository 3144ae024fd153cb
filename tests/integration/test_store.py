"""The store on a real embedded ClickHouse (chDB): schema, dedup, versions, queries, tenants.

Every test gets its own database on the process's one chDB path (see conftest.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from factledger.collector import rows
from factledger.collector.store import Store, StoreConfig, StoreError
from factledger.processors.assembly.assembler import PriorVerdict
from factledger.processors.kinds import Kind, Outcome, Severity
from factledger.processors.model import Finding, TextRange, ToolCall, Turn, Verdict
from factledger.processors.spans import SpanRecord

# Recent and hour-aligned: rows older than the retention (30 days) expire on insert.
T0 = (datetime.now(UTC) - timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
MINUTE = timedelta(minutes=1)
TENANT = "acme"
OTHER = "globex"


def trace_of(n: int) -> str:
    return f"{n:032x}"


def span_of(n: int) -> str:
    return f"{n:016x}"


# --- building rows ----------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """One verdict version of a turn to write."""

    turn_id: str
    outcome: Outcome = Outcome.PASS
    findings: tuple[Finding, ...] = ()
    minute: int = 0
    version: int = 1
    model: str = "gpt-4o"
    agent: str = "support"
    tenant: str = TENANT
    conversation_id: str = ""
    span_ids: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = field(default=())
    parent: str = ""

    @property
    def started_at(self) -> datetime:
        return T0 + self.minute * MINUTE


def finding(kind: Kind, score: float | None = None) -> Finding:
    return Finding(kind=kind, message=f"{kind.value} seen", token="TKT-4821", score=score)


def write(store: Store, *seeds: Seed) -> None:
    turn_rows, finding_rows = [], []
    for seed in seeds:
        turn = Turn(
            reply=f"reply of {seed.turn_id}",
            user_message="please",
            tool_calls=seed.tool_calls,
            model=seed.model,
            provider="openai",
            tenant=seed.tenant,
            trace_id=trace_of(int(seed.turn_id.lstrip("t") or 0)),
            turn_id=seed.turn_id,
            conversation_id=seed.conversation_id,
            service="api",
            agent=seed.agent,
        )
        verdict = Verdict(outcome=seed.outcome, findings=seed.findings, validators=("v@1",))
        turn_rows.append(
            rows.turn_row(
                turn,
                verdict,
                version=seed.version,
                started_at=seed.started_at,
                ended_at=seed.started_at + timedelta(seconds=5),
                validated_at=seed.started_at + timedelta(seconds=6 + seed.version),
                span_ids=seed.span_ids,
                parent_turn_id=seed.parent,
            )
        )
        finding_rows.extend(
            rows.finding_rows(turn, verdict, version=seed.version, started_at=seed.started_at)
        )
    store.insert_turns(turn_rows)
    store.insert_findings(finding_rows)


def spans(trace: int, count: int, *, tenant: str = TENANT, start: int = 1) -> list[SpanRecord]:
    base = int(T0.timestamp()) * 10**9
    return [
        SpanRecord(
            trace_id=trace_of(trace),
            span_id=span_of(trace * 100 + start + i),
            name="chat gpt-4o" if i else "invoke_agent support",
            parent_span_id="" if i == 0 else span_of(trace * 100 + start),
            kind=1,
            start_time_unix_nano=base + i * 1_000_000_123,
            end_time_unix_nano=base + i * 1_000_000_123 + 500,
            attributes={"gen_ai.usage.input_tokens": 12 + i, "gen_ai.system": "openai"},
            resource_attributes={"service.name": "api"},
            tenant=tenant,
        )
        for i in range(count)
    ]


def ingest(store: Store, records: Sequence[SpanRecord], at: datetime = T0) -> None:
    store.insert_spans([rows.span_row(s, rows.epoch_ms(at)) for s in records])


def ids(turns: Sequence[dict[str, Any]]) -> list[str]:
    return [t["turn_id"] for t in turns]


# Five turns a minute apart, newest last: the fixture most query tests read.
FIVE = (
    Seed("t1", Outcome.REJECT, (finding(Kind.FABRICATED_IDENTIFIER),), minute=0),
    Seed(
        "t2",
        Outcome.FLAG,
        (finding(Kind.CONFABULATED_IDENTIFIER_SET, 0.9),),
        minute=1,
        model="claude",
    ),
    Seed("t3", minute=2, agent="billing", conversation_id="conv-3"),
    Seed(
        "t4",
        Outcome.REJECT,
        (finding(Kind.CLAIM_WITHOUT_TOOL),),
        minute=3,
        model="claude",
        agent="billing",
    ),
    Seed("t5", Outcome.FLAG, (finding(Kind.CONFABULATED_IDENTIFIER_SET, 0.4),), minute=4),
)


# --- schema and lifecycle ---------------------------------------------------------------


def test_schema_applies_twice(store_config: StoreConfig) -> None:
    first = Store.open(store_config)
    write(first, Seed("t1"))
    first.close()
    again = Store.open(store_config)  # same DDL on existing tables: no error, data kept
    try:
        assert again.turn_count(TENANT) == 1
    finally:
        again.close()


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.turn_count(TENANT), id="query"),
        pytest.param(lambda s: s.insert_spans([rows.span_row(spans(1, 1)[0], 0)]), id="insert"),
    ],
)
def test_a_closed_store_refuses_calls(
    store_config: StoreConfig, call: Callable[[Store], Any]
) -> None:
    opened = Store.open(store_config)
    opened.close()
    opened.close()  # idempotent
    with pytest.raises(StoreError, match="closed") as raised:
        call(opened)
    assert not raised.value.retryable


def test_a_malformed_row_is_refused_before_sending(store: Store) -> None:
    with pytest.raises(ValueError, match="values"):
        store.insert_turns([["too", "short"]])


def test_an_unreachable_server_is_a_retryable_error() -> None:
    with pytest.raises(StoreError, match="connecting") as raised:
        Store.open(StoreConfig(dsn="http://127.0.0.1:1"))  # nothing listens on port 1
    assert raised.value.retryable


def test_a_row_of_wrong_types_is_a_permanent_error(store: Store) -> None:
    row = rows.review_row(
        tenant=TENANT,
        turn_id="t1",
        review_id="r1",
        label="hallucination",
        note="",
        reviewer="",
        created_at=T0,
    )
    row[-1] = "yesterday"  # CreatedAt must be ticks
    with pytest.raises(StoreError, match="reviews") as raised:
        store.insert_review(row)
    assert not raised.value.retryable


def test_alert_rows_are_accepted(store: Store) -> None:
    for state, resolved in (("firing", None), ("resolved", T0 + MINUTE)):
        store.insert_alert(
            rows.alert_row(
                tenant=TENANT,
                alert_id="a1",
                rule="reject_rate",
                group_key="model=gpt-4o",
                state=state,  # type: ignore[arg-type]
                value=0.4,
                threshold=0.2,
                turns=25,
                fired_at=T0,
                resolved_at=resolved,
                message="reject rate 40% over 25 turns",
            )
        )
    store.insert_alert_delivery(
        rows.alert_delivery_row(
            tenant=TENANT,
            alert_id="a1",
            target="https://hooks.example/x",
            attempt=1,
            ok=True,
            status_code=200,
            error="",
            at=T0,
        )
    )


# --- spans ------------------------------------------------------------------------------


def test_resent_spans_count_once(store: Store) -> None:
    batch = spans(1, 3) + spans(2, 2)
    ingest(store, batch)
    ingest(store, batch, at=T0 + MINUTE)  # the client retried the whole export
    assert store.span_count(TENANT) == 5
    stored = store.spans_for_traces(TENANT, [trace_of(1), trace_of(2), trace_of(99)])
    assert [rows.span_from_row(row) for row in stored] == batch


def test_a_resent_insert_is_stored_once(store: Store) -> None:
    """A retry after a lost answer resends the same rows (spans with a new IngestedAt):
    the insert's deduplication token makes the store keep one copy, before any merge."""
    batch = spans(3, 4)
    ingest(store, batch)
    ingest(store, batch, at=T0 + MINUTE)
    seed = Seed("t77", Outcome.REJECT, (finding(Kind.FABRICATED_IDENTIFIER),))
    write(store, seed)
    write(store, seed)
    counts = {
        table: store._scalar(f"SELECT count() FROM {{db}}.{table}", {})
        for table in ("spans", "turns", "findings", "turn_versions")
    }
    assert counts == {"spans": 4, "turns": 1, "findings": 1, "turn_versions": 1}
    ingest(store, spans(3, 5))  # one more span: a different insert, stored whole
    assert store._scalar("SELECT count() FROM {db}.spans", {}) == 9


def test_spans_for_traces_in_chunks(store: Store) -> None:
    ingest(store, spans(7, 2))
    asked = [trace_of(n) for n in range(1_500)] + [trace_of(7)]
    assert len(store.spans_for_traces(TENANT, asked)) == 2


def test_owed_traces_have_a_span_no_verdict_holds(store: Store) -> None:
    ingest(store, spans(1, 2) + spans(2, 1) + spans(3, 1) + spans(5, 2))
    ingest(store, spans(4, 1), at=T0 - timedelta(hours=2))  # before the restart window
    write(store, Seed("t1", span_ids=(span_of(101),)))  # trace 1 only in part
    write(store, Seed("t5", span_ids=(span_of(501), span_of(502))))  # trace 5 is judged
    ingest(store, spans(6, 1), at=T0 - MINUTE / 2)  # the oldest inside the window
    owed = store.owed_traces(TENANT, T0 - MINUTE)
    # Oldest first, then by trace id; a judged trace with a span outside its turn too.
    assert [o.trace_id for o in owed] == [trace_of(n) for n in (6, 1, 2, 3)]
    first = store.owed_traces(TENANT, T0 - MINUTE, limit=2)
    assert first == owed[:2]
    assert store.owed_traces(TENANT, T0 - MINUTE, after=first[-1]) == owed[2:]
    assert store.owed_traces(TENANT, T0 - 3 * MINUTE * 60)[0].trace_id == trace_of(4)
    assert store.owed_traces(TENANT, T0 + MINUTE) == []


def test_verdicts_for_owed_traces_by_trace_and_by_span(store: Store) -> None:
    write(
        store,
        Seed("t1", span_ids=(span_of(101),)),  # trace 1
        Seed("t1", span_ids=(span_of(101), span_of(102)), version=2),
        Seed("t2", span_ids=(span_of(201),)),  # trace 2, asked for by a span only
        Seed("t3", span_ids=(span_of(301),)),  # neither
    )
    verdicts = store.verdicts_for(TENANT, [trace_of(1)], [span_of(201)], T0 - MINUTE)
    assert verdicts == [
        PriorVerdict(TENANT, "t1", 2, (span_of(101), span_of(102))),
        PriorVerdict(TENANT, "t2", 1, (span_of(201),)),
    ]
    # By span, only verdicts made since: they are the ones that can hold newer spans.
    assert store.verdicts_for(TENANT, [], [span_of(201)], T0 + timedelta(hours=1)) == []


# --- versions ---------------------------------------------------------------------------


def test_latest_version_wins(store: Store) -> None:
    ingest(store, spans(1, 2))
    first = Seed(
        "t1",
        Outcome.REJECT,
        (finding(Kind.FABRICATED_IDENTIFIER), finding(Kind.CLAIM_WITHOUT_TOOL)),
        span_ids=(span_of(101),),
    )
    second = Seed(
        "t1",
        Outcome.FLAG,
        (finding(Kind.CONFABULATED_IDENTIFIER_SET, 0.7),),
        version=2,
        span_ids=(span_of(101), span_of(102)),
    )
    write(store, first)
    write(store, second)
    write(store, second)  # a retried insert of the same version

    listed, total = store.list_turns(TENANT)
    assert (total, [(t["turn_id"], t["version"], t["verdict"]) for t in listed]) == (
        1,
        [("t1", 2, "flag")],
    )
    assert store.list_turns(TENANT, verdict="reject") == ([], 0)
    assert store.turn_count(TENANT) == 1
    assert store.finding_count(TENANT) == 1

    turn = store.get_turn(TENANT, "t1")
    assert turn is not None
    assert [(v["version"], v["verdict"], v["kinds"]) for v in turn["versions"]] == [
        (1, "reject", ["fabricated_identifier", "claim_without_tool"]),
        (2, "flag", ["confabulated_identifier_set"]),
    ]
    assert turn["versions"][1]["validated_at"] == T0 + timedelta(seconds=8)
    assert [f["kind"] for f in turn["findings"]] == ["confabulated_identifier_set"]
    assert [s["span_id"] for s in turn["spans"]] == [span_of(101), span_of(102)]


def test_verdict_history_survives_merges(store: Store) -> None:
    write(store, Seed("t1", Outcome.REJECT, (finding(Kind.FABRICATED_IDENTIFIER),)))
    write(store, Seed("t1", Outcome.PASS, (), version=2))
    # Merging collapses `turns` to the latest version; the history must not go with it.
    store._query("OPTIMIZE TABLE {db}.turns FINAL", {})
    rows_left = store._query("SELECT count() AS n FROM {db}.turns", {})
    assert rows_left == [{"n": 1}]
    turn = store.get_turn(TENANT, "t1")
    assert turn is not None
    assert [(v["version"], v["verdict"]) for v in turn["versions"]] == [(1, "reject"), (2, "pass")]


def test_a_turns_history_ends_at_the_version_it_shows(store: Store) -> None:
    write(store, Seed("t1", Outcome.REJECT, (finding(Kind.FABRICATED_IDENTIFIER),)))
    # Version 2 lands between reading the turn and reading its history: its history row
    # is there, its turn row is not yet.
    store._query(
        "INSERT INTO {db}.turn_versions (Tenant, TurnId, Version, Verdict, Kinds, StartedAt,"
        " ValidatedAt) VALUES ({tenant:String}, 't1', 2, 'pass', [], now64(3), now64(3))",
        {"tenant": TENANT},
    )
    turn = store.get_turn(TENANT, "t1")
    assert turn is not None
    assert (turn["version"], turn["verdict"]) == (1, "reject")
    assert [(v["version"], v["verdict"]) for v in turn["versions"]] == [(1, "reject")]


def test_get_turn_details(store: Store) -> None:
    ingest(store, spans(1, 2))
    seed = Seed(
        "t1",
        Outcome.REJECT,
        (
            Finding(
                Kind.FABRICATED_IDENTIFIER,
                "TKT-4821 is in no tool result",
                token="TKT-4821",
                checked_against=("create_ticket",),
                span=TextRange(17, 25),
                validator="identifiers@1.0",
                call_id="call_0",
            ),
            finding(Kind.CONFABULATED_IDENTIFIER_SET, 0.5),
        ),
        span_ids=(span_of(101), span_of(102)),
        tool_calls=(
            ToolCall("create_ticket", "call_0", {"title": "printer"}, result='{"id": "TKT-1"}'),
        ),
    )
    write(store, seed)
    store.insert_review(
        rows.review_row(
            tenant=TENANT,
            turn_id="t1",
            review_id="6f1c2f0e-3b7a-4c1d-9e55-0f6b1f7c2a10",
            label="hallucination",
            note="no such ticket",
            reviewer="ana",
            created_at=T0 + MINUTE,
        )
    )
    turn = store.get_turn(TENANT, "t1")
    assert turn is not None
    assert {k: turn[k] for k in ("turn_id", "trace_id", "model", "agent", "service")} == {
        "turn_id": "t1",
        "trace_id": trace_of(1),
        "model": "gpt-4o",
        "agent": "support",
        "service": "api",
    }
    assert (turn["started_at"], turn["ended_at"]) == (T0, T0 + timedelta(seconds=5))
    assert (turn["user_message"], turn["reply"], turn["provider"]) == (
        "please",
        "reply of t1",
        "openai",
    )
    assert turn["tool_calls"][0]["arguments"] == {"title": "printer"}
    assert turn["tool_calls"][0]["result"] == {"id": "TKT-1"}
    assert turn["findings"] == [
        {
            "kind": "fabricated_identifier",
            "class": "1",
            "severity": "reject",
            "message": "TKT-4821 is in no tool result",
            "token": "TKT-4821",
            "checked_against": ["create_ticket"],
            "checked_note": None,
            "span": [17, 25],
            "validator": "identifiers@1.0",
            "score": None,
            "call_id": "call_0",
            "real": [],
        },
        {
            "kind": "confabulated_identifier_set",
            "class": "5",
            "severity": "flag",
            "message": "confabulated_identifier_set seen",
            "token": "TKT-4821",
            "checked_against": [],
            "checked_note": None,
            "span": None,
            "validator": "",
            "score": 0.5,
            "call_id": None,
            "real": [],
        },
    ]
    assert (turn["has_class5"], turn["max_score"]) == (True, 0.5)
    first_span = turn["spans"][0]
    assert first_span["attributes"] == {
        "gen_ai.usage.input_tokens": "12",
        "gen_ai.system": "openai",
    }
    assert first_span["start_time"] == f"{T0:%Y-%m-%dT%H:%M:%S}.000000000Z"
    assert [(r["label"], r["reviewer"], r["created_at"]) for r in turn["reviews"]] == [
        ("hallucination", "ana", T0 + MINUTE)
    ]
    assert store.get_turn(TENANT, "t404") is None


# --- list_turns -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "expected", "total"),
    [
        pytest.param({}, ["t5", "t4", "t3", "t2", "t1"], 5, id="all-newest-first"),
        pytest.param({"verdict": "reject"}, ["t4", "t1"], 2, id="by-verdict"),
        pytest.param({"model": "claude"}, ["t4", "t2"], 2, id="by-model"),
        pytest.param({"agent": "billing"}, ["t4", "t3"], 2, id="by-agent"),
        pytest.param({"kind": "confabulated_identifier_set"}, ["t5", "t2"], 2, id="by-kind"),
        pytest.param({"trace_id": trace_of(4)}, ["t4"], 1, id="by-trace"),
        pytest.param({"conversation_id": "conv-3"}, ["t3"], 1, id="by-conversation"),
        pytest.param(
            {"since": T0 + MINUTE, "until": T0 + 3 * MINUTE},
            ["t3", "t2"],
            2,
            id="since-inclusive-until-exclusive",
        ),
        pytest.param({"limit": 2, "offset": 1}, ["t4", "t3"], 5, id="page-keeps-total"),
        pytest.param({"offset": 9}, [], 5, id="page-past-the-end"),
        pytest.param({"model": "claude", "verdict": "flag"}, ["t2"], 1, id="filters-combine"),
        pytest.param({"model": "nope"}, [], 0, id="no-match"),
    ],
)
def test_list_turns_filters(
    store: Store, filters: dict[str, Any], expected: list[str], total: int
) -> None:
    write(store, *FIVE)
    listed, counted = store.list_turns(TENANT, **filters)
    assert (ids(listed), counted) == (expected, total)


def test_list_turns_row_shape(store: Store) -> None:
    write(store, FIVE[0])
    (turn,), _ = store.list_turns(TENANT)
    assert turn == {
        "turn_id": "t1",
        "trace_id": trace_of(1),
        "conversation_id": "",
        "service": "api",
        "agent": "support",
        "model": "gpt-4o",
        "started_at": T0,
        "ended_at": T0 + timedelta(seconds=5),
        "verdict": "reject",
        "kinds": ["fabricated_identifier"],
        "reply_preview": "reply of t1",
        "version": 1,
        "why": "fabricated_identifier seen",
        "clock_skew_seconds": None,
        # The reply around its first flagged token: the whole short reply here.
        "flagged_preview": "reply of t1",
    }


def test_a_listed_turn_says_why_with_the_finding_that_decides_its_verdict(store: Store) -> None:
    flag = Finding(Kind.MISSING_TOOL_ARGUMENTS, "an argument is missing", Severity.FLAG)
    reject = Finding(Kind.FABRICATED_IDENTIFIER, "TKT-9 is in no tool result", Severity.REJECT)
    later = Finding(Kind.STALL, "a promise, no call", Severity.REJECT)
    info = Finding(Kind.VALIDATOR_ERROR, "a validator failed", Severity.INFO)
    write(
        store,
        Seed("t1", Outcome.REJECT, (info, flag, reject, later), minute=0),
        Seed("t2", Outcome.REJECT, (reject,), minute=1),
        Seed("t2", Outcome.FLAG, (flag,), minute=1, version=2),
        Seed("t3", Outcome.PASS, (info,), minute=2),
        Seed("t4", minute=3),
    )
    listed, _ = store.list_turns(TENANT)
    assert {t["turn_id"]: t["why"] for t in listed} == {
        "t1": "TKT-9 is in no tool result",  # the first reject, though a flag comes first
        "t2": "an argument is missing",  # the latest version's finding
        "t3": "a validator failed",
        "t4": "",
    }


@pytest.mark.parametrize(
    "kwargs",
    [pytest.param({"limit": -1}, id="negative-limit"), pytest.param({"limit": 5000}, id="huge")],
)
def test_list_turns_bounds(store: Store, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.list_turns(TENANT, **kwargs)


# --- reject rates -----------------------------------------------------------------------


def point(minute: int, turns: int, rejected: int, flagged: int) -> dict[str, Any]:
    return {
        "t": T0 + minute * MINUTE,
        "turns": turns,
        "rejected": rejected,
        "flagged": flagged,
        "rate": pytest.approx(rejected / turns if turns else 0.0),
    }


@pytest.mark.parametrize(
    ("group_by", "bucket", "expected"),
    [
        pytest.param(
            "model",
            "5m",
            [
                {"key": "claude", "points": [point(0, 2, 1, 1)]},
                {"key": "gpt-4o", "points": [point(0, 3, 1, 1)]},
            ],
            id="model-5m",
        ),
        pytest.param(
            "agent",
            "1m",
            [
                {"key": "billing", "points": [point(2, 1, 0, 0), point(3, 1, 1, 0)]},
                {
                    "key": "support",
                    "points": [point(0, 1, 1, 0), point(1, 1, 0, 1), point(4, 1, 0, 1)],
                },
            ],
            id="agent-1m",
        ),
        pytest.param(
            "service", "1h", [{"key": "api", "points": [point(0, 5, 2, 2)]}], id="service-1h"
        ),
        pytest.param(
            "kind",
            "5m",
            [
                {"key": "claim_without_tool", "points": [point(0, 5, 1, 0)]},
                {"key": "confabulated_identifier_set", "points": [point(0, 5, 0, 2)]},
                {"key": "fabricated_identifier", "points": [point(0, 5, 1, 0)]},
            ],
            id="kind-over-all-turns",
        ),
    ],
)
def test_reject_rate(
    store: Store, group_by: str, bucket: str, expected: list[dict[str, Any]]
) -> None:
    write(store, *FIVE)
    got = store.reject_rate(
        TENANT,
        group_by=group_by,  # type: ignore[arg-type]
        bucket=bucket,  # type: ignore[arg-type]
        since=T0,
        until=T0 + timedelta(hours=1),
    )
    assert got == expected


def test_reject_rate_counts_every_verdict_a_turn_had(store: Store) -> None:
    write(store, Seed("t1", Outcome.REJECT, (finding(Kind.STALL),)))
    write(store, Seed("t1", Outcome.PASS, version=2))  # re-judged after a late span
    write(store, Seed("t2"))
    (series,) = store.reject_rate(
        TENANT, group_by="model", bucket="1h", since=T0, until=T0 + MINUTE
    )
    assert series["points"] == [point(0, 2, 1, 0)]


def test_reject_rate_widens_to_whole_buckets(store: Store) -> None:
    write(store, *FIVE)
    (series,) = store.reject_rate(
        TENANT,
        group_by="service",
        bucket="5m",
        since=T0 + timedelta(minutes=3, seconds=10),
        until=T0 + timedelta(minutes=3, seconds=20),
    )
    assert series["points"] == [point(0, 5, 2, 2)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"group_by": "model", "bucket": "2m"}, "bucket", id="unknown-bucket"),
        pytest.param({"group_by": "tenant", "bucket": "1m"}, "group_by", id="unknown-group"),
        pytest.param(
            {"group_by": "model", "bucket": "1m", "until": T0 + timedelta(days=30)},
            "buckets",
            id="too-many-points",
        ),
    ],
)
def test_reject_rate_refuses(store: Store, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        store.reject_rate(TENANT, **{"since": T0, "until": T0 + MINUTE, **kwargs})


# --- review queue -----------------------------------------------------------------------


def test_review_queue_order_and_exclusion(store: Store) -> None:
    write(
        store,
        *FIVE,
        Seed("t6", Outcome.FLAG, (finding(Kind.MISSING_TOOL_ARGUMENTS),), minute=6),
        Seed("t7", Outcome.FLAG, (finding(Kind.UNGROUNDED_TOOL_ARGUMENT),), minute=5),
        Seed("t8", Outcome.FLAG, (finding(Kind.CONFABULATED_IDENTIFIER_SET, 0.99),), minute=7),
        Seed("t8", Outcome.PASS, version=2, minute=7),  # re-judged clean: leaves the queue
    )
    queue = store.review_queue(TENANT)
    assert [(t["turn_id"], t["has_class5"], t["max_score"]) for t in queue] == [
        ("t2", True, pytest.approx(0.9)),
        ("t5", True, pytest.approx(0.4)),
        ("t6", False, None),
        ("t7", False, None),
    ]
    assert store.review_queue_count(TENANT) == 4
    store.insert_review(
        rows.review_row(
            tenant=TENANT,
            turn_id="t2",
            review_id="r1",
            label="not_hallucination",
            note="",
            reviewer="ana",
            created_at=T0,
        )
    )
    assert ids(store.review_queue(TENANT)) == ["t5", "t6", "t7"]
    assert ids(store.review_queue(TENANT, limit=1)) == ["t5"]


# --- tenants ----------------------------------------------------------------------------

QUERIES: list[Any] = [
    pytest.param(lambda s, t: s.list_turns(t), ([], 0), id="list_turns"),
    pytest.param(lambda s, t: s.list_turns(t, kind="stall"), ([], 0), id="list_turns-by-kind"),
    pytest.param(lambda s, t: s.get_turn(t, "t1"), None, id="get_turn"),
    pytest.param(lambda s, t: s.review_queue(t), [], id="review_queue"),
    pytest.param(lambda s, t: s.span_count(t), 0, id="span_count"),
    pytest.param(lambda s, t: s.turn_count(t), 0, id="turn_count"),
    pytest.param(lambda s, t: s.finding_count(t), 0, id="finding_count"),
    pytest.param(lambda s, t: s.owed_traces(t, T0 - MINUTE), [], id="owed_traces"),
    pytest.param(
        lambda s, t: s.verdicts_for(t, [trace_of(1)], ["t1"], T0 - MINUTE), [], id="verdicts_for"
    ),
    pytest.param(lambda s, t: s.spans_for_traces(t, [trace_of(1)]), [], id="spans_for_traces"),
    *(
        pytest.param(
            lambda s, t, g=group_by: s.reject_rate(
                t, group_by=g, bucket="1h", since=T0, until=T0 + timedelta(hours=1)
            ),
            [],
            id=f"reject_rate-by-{group_by}",
        )
        for group_by in ("model", "agent", "service", "kind")
    ),
]


def seed_tenant(store: Store, tenant: str, *, extra: bool) -> None:
    flagged = (finding(Kind.STALL),)
    write(store, Seed("t1", Outcome.FLAG, flagged, tenant=tenant, span_ids=(span_of(101),)))
    ingest(store, spans(1, 1, tenant=tenant) + spans(2, 1, tenant=tenant))
    if extra:  # more of everything, under the same ids: any leak changes the answer
        write(
            store,
            Seed("t1", Outcome.REJECT, (finding(Kind.STALL),) * 2, tenant=tenant, version=2),
            Seed("t9", Outcome.FLAG, flagged, tenant=tenant, model="claude", agent="x"),
        )
        ingest(store, spans(1, 3, tenant=tenant, start=5) + spans(3, 2, tenant=tenant))


@pytest.mark.parametrize(("query", "empty"), QUERIES)
def test_a_tenant_never_sees_another_tenants_rows(
    store: Store, query: Callable[[Store, str], Any], empty: Any
) -> None:
    seed_tenant(store, TENANT, extra=False)
    alone = query(store, TENANT)
    assert alone != empty  # the query does see the tenant's own rows
    seed_tenant(store, OTHER, extra=True)
    assert query(store, TENANT) == alone
    assert query(store, "initech") == empty


def test_same_turn_id_in_two_tenants_stays_apart(store: Store) -> None:
    write(store, Seed("t1", tenant=TENANT))
    write(
        store,
        Seed("t1", Outcome.REJECT, (finding(Kind.STALL),), tenant=OTHER),
        Seed("t1", Outcome.REJECT, (finding(Kind.STALL),), tenant=OTHER, version=2),
    )
    turn = store.get_turn(TENANT, "t1")
    assert turn is not None
    assert (turn["verdict"], turn["findings"], len(turn["versions"])) == ("pass", [], 1)
    assert store.finding_count(TENANT) == 0
    assert store.finding_count(OTHER) == 1


def test_a_page_read_while_turns_arrive_holds_every_turn_it_counts(store: Store) -> None:
    """The count is taken before the page: turns only arrive, so a reader polling for
    "total >= n" gets at least n rows back."""

    def arrive() -> None:
        for n in range(1, 41):
            write(store, Seed(f"t{n}", minute=n))

    arriving = threading.Thread(target=arrive)
    arriving.start()
    reads = []
    while arriving.is_alive():
        listed, counted = store.list_turns(TENANT, limit=1000)
        reads.append((len(listed), counted))
    arriving.join()
    assert reads and all(rows >= counted for rows, counted in reads), reads
    assert store.list_turns(TENANT, limit=1000)[1] == 40
