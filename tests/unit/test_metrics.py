"""Metrics render in the Prometheus text format with escaped labels."""

from __future__ import annotations

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
