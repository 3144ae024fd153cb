"""Verdict export end to end: a real service with `[export.otel]` sends each verdict
version as `gen_ai.evaluation.result` events to a real OTLP logs receiver on loopback;
a receiver that is down, throttles or comes late loses nothing within the give-up time
while ingest and judging go on; records pending at a kill -9 are delivered after the
restart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from factledger.collector.export.settings import ExportSettings
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.logs_sink import Event, LogsSink
from factledger.service_process import ServiceProcess, free_port
from tests.integration.app_server import served_app
from tests.integration.otlp_turns import turn_request
from tests.integration.worker_process import wait_until

JSON = {"Content-Type": "application/json"}
SHA = "9d22a7c"
REPLY = "Order #W{index:07d} has shipped; the fix is commit " + SHA + "."
FAST = {"backoff_initial_seconds": 0.1, "backoff_max_seconds": 0.5}


def _body(
    index: int, *, without_tool: bool = False, only_tool: bool = False
) -> tuple[bytes, list[str]]:
    """An agent turn quoting a commit no tool returned; with `without_tool` its tool span
    is held back, which `only_tool` sends alone (a late span)."""
    body, ids = turn_request(index, hallucinate=False, reply=REPLY.format(index=index))
    if not (without_tool or only_tool):
        return body, ids
    request = json.loads(body)
    scope = request["resourceSpans"][0]["scopeSpans"][0]
    tool = ids[2]
    scope["spans"] = [s for s in scope["spans"] if (s["spanId"] == tool) == only_tool]
    return json.dumps(request).encode(), ids


def _post(url: str, body: bytes) -> None:
    response = httpx.post(f"{url}/v1/traces", headers=JSON, content=body, timeout=10)
    assert response.status_code == 200, response.text


def _versions(events: list[Event], trace_id: str) -> list[int]:
    return sorted(
        {int(e.attributes["factledger.verdict_version"]) for e in events if e.trace_id == trace_id}
    )


def _verdict_events(events: list[Event]) -> list[Event]:
    return [e for e in events if e.attributes["gen_ai.evaluation.name"] == "factledger.verdict"]


def _settings(tmp_path: Path, sink_url: str, **section: Any) -> ServiceSettings:
    exporting = ExportSettings.from_mapping(
        {**FAST, **section, "otel": {"endpoint": sink_url, "timeout_seconds": 1}}
    )
    return ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, export=exporting
    )


@pytest.fixture
def sink() -> Iterator[LogsSink]:
    sink = LogsSink()
    yield sink
    sink.close()


def test_each_verdict_version_arrives_as_evaluation_events(
    store: Store, tmp_path: Path, sink: LogsSink
) -> None:
    with served_app(_settings(tmp_path, sink.url), store) as url:
        body, ids = _body(1)
        _post(url, body)
        events = sink.wait_for(2)
        trace = f"{1:032x}"
        assert {(e.trace_id, e.span_id) for e in events} == {(trace, ids[3])}  # the reply's
        assert {e.event_name for e in events} == {"gen_ai.evaluation.result"}
        (verdict,) = _verdict_events(events)
        assert verdict.attributes["gen_ai.evaluation.score.label"] == "reject"
        assert verdict.attributes["gen_ai.evaluation.score.value"] == 0.0
        assert verdict.attributes["factledger.cause"] == "judged"
        fabricated = [
            e for e in events if e.attributes.get("factledger.kind") == "fabricated_identifier"
        ]
        (finding,) = fabricated
        assert finding.attributes["factledger.token"] == SHA
        assert finding.attributes["gen_ai.evaluation.name"] == "factledger.fabricated_identifier"
        turn = httpx.get(f"{url}/api/v1/turns").json()["turns"][0]
        assert finding.attributes["factledger.turn_id"] == turn["turn_id"]
        assert str(finding.attributes["factledger.turn_url"]).endswith(turn["turn_id"])

        # A late span: the tool span of another turn, sent after the turn was judged.
        first, ids2 = _body(2, without_tool=True)
        _post(url, first)
        wait_until(lambda: _versions(sink.received(), f"{2:032x}") == [1], 30, "version 1")
        late, _ = _body(2, only_tool=True)
        _post(url, late)
        wait_until(lambda: _versions(sink.received(), f"{2:032x}") == [1, 2], 60, "version 2")
        second = [e for e in _verdict_events(sink.received()) if e.trace_id == f"{2:032x}"]
        assert [e.attributes["factledger.cause"] for e in second] == ["judged", "late_span"]
        assert {e.span_id for e in second} == {ids2[3]}

        def status() -> dict[str, Any]:
            return dict(httpx.get(f"{url}/api/v1/export/status").json()["targets"][0])

        # The receiver keeps the events before it answers: the count follows the answer.
        wait_until(lambda: status()["sent"] == 3, 30, "three records counted as sent")
        assert (status()["target"], status()["pending"]) == ("otel", 0)
        metrics = httpx.get(f"{url}/metrics").text
        assert 'factledger_export_sent_total{target="otel"} 3' in metrics
        assert 'factledger_export_pending{target="otel"} 0.0' in metrics


def test_an_outage_loses_nothing_and_ingest_goes_on(
    store: Store, tmp_path: Path, sink: LogsSink
) -> None:
    sink.status = 503
    sink.script.extend([(429, {"Retry-After": "1"}), (503, {})])
    turns = 8
    with served_app(_settings(tmp_path, sink.url, max_records=turns), store) as url:
        for index in range(1, turns + 1):
            _post(url, _body(index)[0])  # acknowledged while the receiver is down
        wait_until(
            lambda: len(httpx.get(f"{url}/api/v1/turns").json()["turns"]) == turns,
            60,
            "every turn judged while the receiver is down",
        )

        def status() -> dict[str, Any]:
            return dict(httpx.get(f"{url}/api/v1/export/status").json()["targets"][0])

        # A record is appended just after its turn row is readable: wait for the last one.
        wait_until(lambda: status()["pending"] == turns, 30, "every verdict in the outbox")
        wait_until(lambda: status()["retried"] > 0, 30, "a failed delivery")
        assert status()["sent"] == 0
        # The outbox is bounded: one more verdict than it holds is counted, not kept.
        _post(url, _body(turns + 1)[0])
        wait_until(lambda: status()["dropped"]["outbox_full"] == 1, 30, "the drop counted")
        sink.delay_seconds = 0.2  # back, and slow
        sink.status = 200
        events = sink.wait_for(2 * turns, timeout=60)
        assert len({e.trace_id for e in _verdict_events(events)}) == turns
        wait_until(lambda: status()["pending"] == 0, 30, "the outbox drained")
        assert (status()["sent"], status()["dropped"]["gave_up"]) == (turns, 0)


def test_records_pending_at_a_kill_9_are_delivered_after_the_restart(tmp_path: Path) -> None:
    port = free_port()  # nothing listens here yet: the receiver comes late
    config = tmp_path / "factledger.toml"
    config.write_text(
        "[export]\nbackoff_initial_seconds = 0.1\nbackoff_max_seconds = 0.5\n"
        f'[export.otel]\nendpoint = "http://127.0.0.1:{port}/v1/logs"\ntimeout_seconds = 1\n'
    )
    data = tmp_path / "data"
    env = {"FACTLEDGER_CONFIG": str(config)}
    first = ServiceProcess(data, env).start()
    try:
        for index in (1, 2, 3):
            _post(first.url, _body(index)[0])

        def pending() -> int:
            status = httpx.get(f"{first.url}/api/v1/export/status").json()
            return int(status["targets"][0]["pending"])

        wait_until(lambda: pending() == 3, 60, "three records pending")
    finally:
        first.kill9()
    sink = LogsSink(port=port)
    try:
        with ServiceProcess(data, env, port=first.port):
            events = sink.wait_for(6, timeout=60)
            traces = {e.trace_id for e in _verdict_events(events)}
            assert traces == {f"{i:032x}" for i in (1, 2, 3)}
    finally:
        sink.close()


def test_a_human_label_is_exported_as_a_verdict(
    store: Store, tmp_path: Path, sink: LogsSink
) -> None:
    with served_app(_settings(tmp_path, sink.url), store) as url:
        body, ids = _body(3)
        _post(url, body)
        sink.wait_for(2)
        (turn,) = httpx.get(f"{url}/api/v1/turns").json()["turns"]
        label = {"label": "not_hallucination", "reviewer": "ana"}
        answer = httpx.post(f"{url}/api/v1/turns/{turn['turn_id']}/reviews", json=label)
        assert answer.status_code == 201

        def labelled() -> list[Event]:
            return [
                e
                for e in _verdict_events(sink.received())
                if e.attributes["factledger.cause"] == "labelled"
            ]

        wait_until(lambda: len(labelled()) == 1, 30, "the label's event")
        (event,) = labelled()
        assert (event.trace_id, event.span_id) == (f"{3:032x}", ids[3])
        assert event.attributes["gen_ai.evaluation.score.label"] == "pass"
        assert event.attributes["factledger.verdict_version"] == 1  # the version it judges


def test_what_leaves_is_redacted_as_what_is_stored(
    store: Store, tmp_path: Path, sink: LogsSink
) -> None:
    """A GitHub token in the reply is a fabricated identifier (no tool returned it): its
    finding quotes it, and what is exported quotes it only as stored, redacted."""
    secret = "ghp_" + "A1b2" * 9
    reply = f"The token {secret} was rotated in commit {SHA}."
    with served_app(_settings(tmp_path, sink.url), store) as url:
        body, _ = turn_request(7, hallucinate=False, reply=reply)
        _post(url, body)
        events = sink.wait_for(2)
        assert _verdict_events(events)[0].attributes["gen_ai.evaluation.score.label"] == "reject"
        turn_id = httpx.get(f"{url}/api/v1/turns").json()["turns"][0]["turn_id"]
        findings = httpx.get(f"{url}/api/v1/turns/{turn_id}").json()["findings"]
        tokens = [f["token"] for f in findings if f["kind"] == "fabricated_identifier"]
        assert len(tokens) == 2 and SHA in tokens  # the token's finding is there, redacted
        sent = json.dumps([e.attributes for e in sink.received()], default=str)
        assert SHA in sent
        assert "A1b2A1b2" not in sent
