"""benchmarks.ingest reads the service's verdict delay histogram as the service writes it."""

from __future__ import annotations

import math

from benchmarks.ingest import bucket_quantile, parse_delay_buckets
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import VERDICT_DELAY, VERDICT_DELAY_BUCKETS


def test_delay_quantiles_come_from_the_rendered_histogram() -> None:
    metrics = Metrics()
    metrics.observe(VERDICT_DELAY, *([2.2] * 98), 8.0, 250.0)
    buckets = parse_delay_buckets(metrics.render())
    assert buckets[-1] == (math.inf, 100)
    assert len(buckets) == len(VERDICT_DELAY_BUCKETS) + 1
    assert bucket_quantile(buckets, 0.5) == 2.5
    assert bucket_quantile(buckets, 0.99) == 10
    assert bucket_quantile(buckets, 1.0) == 300


def test_no_observations_give_no_quantile() -> None:
    metrics = Metrics()
    assert math.isnan(bucket_quantile(parse_delay_buckets(metrics.render()), 0.99))
    assert math.isnan(bucket_quantile((), 0.5))
