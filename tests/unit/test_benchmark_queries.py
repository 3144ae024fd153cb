"""benchmarks.queries: the synthetic mix it loads and the API calls it times."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.routing import APIRoute

from benchmarks.queries import (
    FLAG_KINDS,
    REJECT_KINDS,
    Batch,
    Call,
    Generator,
    Timing,
    calls,
)
from factledger.collector.api.queries import router
from factledger.collector.rows import FINDING_COLUMNS, SPAN_COLUMNS, TURN_COLUMNS

NOW_MS = 1_800_000_000_000
WEEK_MS = 7 * 86_400_000
TURNS = 10_000


@pytest.fixture(scope="module")
def batch() -> Batch:
    return Generator(seed=1, now_ms=NOW_MS).batch(NOW_MS - WEEK_MS, NOW_MS, TURNS, 100)


def _latest(batch: Batch) -> dict[str, tuple[Any, ...]]:
    version, turn_id = TURN_COLUMNS.index("Version"), TURN_COLUMNS.index("TurnId")
    latest: dict[str, tuple[Any, ...]] = {}
    for row in sorted(batch.turns, key=lambda r: r[version]):
        latest[row[turn_id]] = row
    return latest


@pytest.mark.parametrize(
    ("table", "columns"),
    [("turns", TURN_COLUMNS), ("findings", FINDING_COLUMNS), ("spans", SPAN_COLUMNS)],
    ids=["turn rows", "finding rows", "span rows"],
)
def test_rows_have_one_value_per_store_column(batch: Batch, table: str, columns: tuple[str, ...]):
    rows = getattr(batch, table)
    assert rows
    assert {len(row) for row in rows} == {len(columns)}


def test_every_turn_has_four_spans_and_some_a_second_version(batch: Batch):
    latest = _latest(batch)
    assert len(latest) == TURNS
    assert len(batch.spans) == 4 * TURNS
    assert TURNS < len(batch.turns) < TURNS * 1.03


@pytest.mark.parametrize(
    ("verdict", "low", "high"),
    [("reject", 0.17, 0.24), ("flag", 0.05, 0.11), ("pass", 0.66, 0.77)],
    ids=["about a fifth rejected", "about 8% flagged", "the rest pass"],
)
def test_latest_verdicts_follow_the_mix(batch: Batch, verdict: str, low: float, high: float):
    column = TURN_COLUMNS.index("Verdict")
    shares = Counter(row[column] for row in _latest(batch).values())
    assert low <= shares[verdict] / TURNS <= high


def test_every_reject_and_flag_kind_occurs(batch: Batch):
    column = FINDING_COLUMNS.index("Kind")
    seen = {row[column] for row in batch.findings}
    assert {kind.value for kind in (*REJECT_KINDS, *FLAG_KINDS)} <= seen


def test_finding_offsets_point_at_their_token_in_the_reply(batch: Batch):
    replies = {
        row[TURN_COLUMNS.index("TurnId")]: row[TURN_COLUMNS.index("Reply")] for row in batch.turns
    }
    at = {name: i for i, name in enumerate(FINDING_COLUMNS)}
    placed = [row for row in batch.findings if row[at["SpanStart"]] >= 0]
    assert placed
    for row in placed:
        reply = replies[row[at["TurnId"]]]
        assert reply[row[at["SpanStart"]] : row[at["SpanEnd"]]] == row[at["Token"]]


def test_sampled_turns_are_ones_people_open(batch: Batch):
    verdicts = {
        turn_id: row[TURN_COLUMNS.index("Verdict")] for turn_id, row in _latest(batch).items()
    }
    assert len(batch.sample) >= TURNS // 100 - 1
    assert {verdicts[turn_id] for turn_id in batch.sample} <= {"reject", "flag"}


def _route_pattern(path: str) -> re.Pattern[str]:
    return re.compile("/api/v1" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")


@pytest.mark.parametrize("call", calls(), ids=lambda call: call.name)
def test_every_call_is_a_route_of_the_query_api(call: Call):
    patterns = [
        _route_pattern(route.path) for route in router.routes if isinstance(route, APIRoute)
    ]
    path, _ = call.request(0, datetime(2027, 1, 1, tzinfo=UTC), ["0" * 32])
    assert any(pattern.match(path) for pattern in patterns)


@pytest.mark.parametrize(
    ("times", "share", "expected"),
    [
        ((5.0,), 0.95, 5.0),
        ((1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0), 0.95, 10.0),
        ((1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0), 0.5, 5.0),
        (tuple(float(i) for i in range(1, 101)), 0.95, 95.0),
    ],
    ids=["one call", "p95 of ten is the slowest", "p50 of ten is the fifth", "p95 of a hundred"],
)
def test_percentile_is_nearest_rank(times: tuple[float, ...], share: float, expected: float):
    timing = Timing(calls()[0], 0.0, times, (), "")
    assert timing.percentile(share) == expected
