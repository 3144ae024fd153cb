"""benchmarks.cpu_floor: its minimal read sees what the service decodes, and one run
stores and judges real turns while timing every stage."""

from __future__ import annotations

import math

from benchmarks.cpu_floor import ANY_DESIGN, Floor, parse_messages, read_spans, report
from benchmarks.ingest import PROTOBUF, TurnFactory
from factledger.collector.otlp import decode_request
from factledger.collector.store import Store


def test_the_minimal_read_holds_every_span_and_attribute_the_service_decodes():
    body = TurnFactory(PROTOBUF, b"readtest", first=1).body(3)
    minimal = read_spans(body)
    decoded = decode_request(body, PROTOBUF.content_type).spans
    assert [s["span_id"].hex() for s in minimal] == [s.span_id for s in decoded]
    assert [s["name"] for s in minimal] == [s.name for s in decoded]
    for light, record in zip(minimal, decoded, strict=True):
        assert light["attributes"].keys() == record.attributes.keys()
        for key, value in record.attributes.items():
            expected = list(value) if isinstance(value, tuple) else value
            assert light["attributes"][key] == expected, key


def test_parse_messages_reads_each_json_attribute():
    spans = read_spans(TurnFactory(PROTOBUF, b"jsontest", first=1).body(1))
    # agent: instructions, input, output; chat x2: instructions, tools, input, output;
    # tool: arguments, result
    assert parse_messages(spans) == 3 + 2 * 4 + 2


def test_one_run_stores_its_spans_and_times_every_stage(store: Store):
    floor = Floor(store, turns=50)
    floor.run_once()
    assert store.span_count("default") == 200
    # A tiny stage on 200 spans may round to nothing; every stage must have been timed.
    assert all(0 <= stage.best_us < math.inf for stage in floor.stages.values())
    assert floor.stages["validate"].best_us > 0 and floor.stages["store"].best_us > 0
    lines = report(floor)
    needed = sum(s.best_us for s in floor.stages.values() if s.needed_by == ANY_DESIGN)
    assert any(f"{needed:.1f} µs per span" in line for line in lines)
