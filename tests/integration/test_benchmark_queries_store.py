"""benchmarks.queries loads through the real store: its rows go in, and the store's
queries count them back as generated (turns, verdicts, reject-rate view, a turn's page)."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from benchmarks.queries import DAYS, TENANT, Batch, Generator
from factledger.collector.rows import TURN_COLUMNS
from factledger.collector.store import Store

TURNS = 3_000


@pytest.fixture
def loaded(store: Store) -> Batch:
    now_ms = int(time.time() * 1000)
    batch = Generator(seed=7, now_ms=now_ms).batch(now_ms - DAYS * 86_400_000, now_ms, TURNS, 50)
    store.insert_turns(batch.turns)
    store.insert_findings(batch.findings)
    store.insert_spans(batch.spans)
    return batch


def _latest_verdicts(batch: Batch) -> Counter[str]:
    at = {name: i for i, name in enumerate(TURN_COLUMNS)}
    latest = {}
    for row in sorted(batch.turns, key=lambda r: int(r[at["Version"]])):
        latest[row[at["TurnId"]]] = row[at["Verdict"]]
    return Counter(latest.values())


@pytest.mark.parametrize("verdict", ["reject", "flag", "pass"])
def test_the_store_lists_each_verdict_as_generated(store: Store, loaded: Batch, verdict: str):
    _, total = store.list_turns(TENANT, verdict=verdict, limit=1)
    assert total == _latest_verdicts(loaded)[verdict]


def test_the_reject_rate_view_counts_every_generated_turn(store: Store, loaded: Batch):
    now = datetime.now(UTC)
    series = store.reject_rate(
        TENANT, group_by="model", bucket="1d", since=now - timedelta(days=DAYS + 1), until=now
    )
    assert sum(point["turns"] for s in series for point in s["points"]) == TURNS
    assert len(series) == 5


def test_a_sampled_turn_opens_with_its_spans_and_findings(store: Store, loaded: Batch):
    turn = store.get_turn(TENANT, loaded.sample[0])
    assert turn is not None
    assert turn["verdict"] in {"reject", "flag"}
    assert len(turn["spans"]) == 4
    assert turn["findings"]
