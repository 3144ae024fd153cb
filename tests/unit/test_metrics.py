"""Metrics render in the Prometheus text format with escaped labels."""

from __future__ import annotations

import pytest

from factledger.collector.metrics import Metrics


def test_counters_and_gauges_render() -> None:
    metrics = Metrics()
    metrics.describe("factledger_spans_dropped_total", "Spans not accepted, by reason.")
    metrics.inc("factledger_spans_dropped_total", 3, reason="invalid_trace_id")
    metrics.inc("factledger_spans_dropped_total", reason='quote"d')
    metrics.gauge("factledger_queue_spans", "Spans waiting.", lambda: 7)
    text = metrics.render()
    assert "# TYPE factledger_spans_dropped_total counter" in text
    assert 'factledger_spans_dropped_total{reason="invalid_trace_id"} 3' in text
    assert 'factledger_spans_dropped_total{reason="quote\\"d"} 1' in text
    assert "# TYPE factledger_queue_spans gauge\nfactledger_queue_spans 7" in text
    assert metrics.total("factledger_spans_dropped_total") == 4


def test_a_failing_gauge_does_not_break_the_scrape() -> None:
    metrics = Metrics()
    metrics.gauge("factledger_broken", "Raises.", lambda: 1 / 0)
    metrics.inc("factledger_ok_total")
    assert "factledger_ok_total 1" in metrics.render()


def test_a_histogram_renders_cumulative_buckets_sum_and_count() -> None:
    metrics = Metrics()
    metrics.histogram("factledger_delay_seconds", "Delay.", [2, 0.5, 10])
    metrics.observe("factledger_delay_seconds", 0.5, 1.5, 2.0, 11.0)
    text = metrics.render()
    assert (
        "# HELP factledger_delay_seconds Delay.\n"
        "# TYPE factledger_delay_seconds histogram\n"
        'factledger_delay_seconds_bucket{le="0.5"} 1\n'
        'factledger_delay_seconds_bucket{le="2"} 3\n'
        'factledger_delay_seconds_bucket{le="10"} 3\n'
        'factledger_delay_seconds_bucket{le="+Inf"} 4\n'
        "factledger_delay_seconds_sum 15\n"
        "factledger_delay_seconds_count 4\n"
    ) in text
    assert metrics.observations("factledger_delay_seconds")[-1] == (float("inf"), 4)


def test_a_histogram_needs_finite_bounds_and_registration() -> None:
    metrics = Metrics()
    with pytest.raises(ValueError, match="finite bucket bounds"):
        metrics.histogram("factledger_bad_seconds", "Bad.", [1, float("inf")])
    with pytest.raises(ValueError, match="finite bucket bounds"):
        metrics.histogram("factledger_empty_seconds", "Empty.", [])
    with pytest.raises(KeyError):
        metrics.observe("factledger_unknown_seconds", 1.0)
