"""Acknowledged means durable: kill -9 under load, restart, nothing acknowledged is lost,
in-flight turns are finished, and client retries do not double-count, over OTLP/HTTP and
OTLP/gRPC alike; a write-ahead log that runs out of disk refuses (503) without
acknowledging or miscounting anything."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Protocol, cast

import grpc
import httpx
import pytest

from factledger.collector import otlp
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.processors.runner import default_runner
from factledger.service_process import ServiceProcess
from tests.integration.app_server import served_app
from tests.integration.grpc_exports import TRACES, protobuf_request
from tests.integration.otlp_turns import turn_request
from tests.integration.worker_process import wait_until
from tests.unit.test_wal import Clock, FullDisk

HEADERS = {"Content-Type": "application/json"}
TURNS = 120


class Gone(Exception):
    """The service stopped answering: the request in flight was not acknowledged."""


class Sender(Protocol):
    """One client connection sending OTLP/JSON turn requests over its transport."""

    def __enter__(self) -> Sender: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def send(self, body: bytes) -> bool:
        """Whether the request was acknowledged; raises Gone when nothing answered."""
        ...


class HttpSender:
    def __init__(self, service: ServiceProcess) -> None:
        self._url = f"{service.url}/v1/traces"
        self._client = httpx.Client(timeout=5)

    def __enter__(self) -> HttpSender:
        return self

    def __exit__(self, *_: object) -> None:
        self._client.close()

    def send(self, body: bytes) -> bool:
        try:
            return self._client.post(self._url, headers=HEADERS, content=body).status_code == 200
        except httpx.HTTPError:
            raise Gone from None


class GrpcSender:
    """The same requests as OTLP/protobuf over one gRPC channel, as an exporter sends."""

    def __init__(self, service: ServiceProcess) -> None:
        self._channel = grpc.insecure_channel(service.grpc_target)
        self._export: grpc.UnaryUnaryMultiCallable[bytes, bytes] = self._channel.unary_unary(TRACES)

    def __enter__(self) -> GrpcSender:
        return self

    def __exit__(self, *_: object) -> None:
        self._channel.close()

    def send(self, body: bytes) -> bool:
        try:
            self._export(protobuf_request(body), timeout=5)
        except grpc.RpcError as error:
            # The service's own refusals carry its google.rpc.Status; a dead one sends none.
            trailers = dict(cast(grpc.Call, error).trailing_metadata() or ())
            if "grpc-status-details-bin" not in trailers:
                raise Gone from None
            return False
        return True


SENDERS = pytest.mark.parametrize("sender", [HttpSender, GrpcSender], ids=["http", "grpc"])


def _post_until_killed(sender: Sender, acked: dict[int, list[str]], stop: threading.Event) -> None:
    with sender:
        for index in range(1, TURNS + 1):
            if stop.is_set():
                return
            body, ids = turn_request(index, hallucinate=index % 3 == 0)
            try:
                if sender.send(body):
                    acked[index] = ids
            except Gone:
                return  # the service died under us: this one was not acknowledged


def _turns(url: str) -> dict[str, dict[str, object]]:
    response = httpx.get(f"{url}/api/v1/turns", params={"limit": 1000}, timeout=30)
    response.raise_for_status()
    return {t["trace_id"]: t for t in response.json()["turns"]}


def _wait_for_turns(url: str, expected: int, timeout: float = 60) -> dict[str, dict[str, object]]:
    deadline = time.monotonic() + timeout
    turns = _turns(url)
    while len(turns) < expected and time.monotonic() < deadline:
        time.sleep(0.5)
        turns = _turns(url)
    return turns


@SENDERS
def test_kill_9_under_load_loses_nothing_acknowledged(
    tmp_path: Path, sender: type[HttpSender | GrpcSender]
) -> None:
    data = tmp_path / "data"
    acked: dict[int, list[str]] = {}
    first = ServiceProcess(data).start()
    stop = threading.Event()
    client = threading.Thread(target=_post_until_killed, args=(sender(first), acked, stop))
    client.start()
    deadline = time.monotonic() + 30
    while len(acked) < TURNS // 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    first.kill9()  # mid-load: requests are in flight, turns half-assembled
    stop.set()
    client.join(10)
    assert len(acked) >= TURNS // 3

    with ServiceProcess(data, port=first.port, grpc_port=first.grpc_port) as second:
        turns = _wait_for_turns(second.url, len(acked))
        for index, span_ids in acked.items():
            trace = f"{index:032x}"
            assert trace in turns, f"acknowledged turn {index} lost"
            detail = httpx.get(f"{second.url}/api/v1/turns/{turns[trace]['turn_id']}").json()
            stored = {s["span_id"] for s in detail["spans"]}
            assert set(span_ids) <= stored, f"acknowledged spans of turn {index} lost"
            expected = "reject" if index % 3 == 0 else "pass"
            assert turns[trace]["verdict"] == expected, detail

        before = _turns(second.url)
        findings_before = {
            t: len(httpx.get(f"{second.url}/api/v1/turns/{v['turn_id']}").json()["findings"])
            for t, v in before.items()
        }
        # a client retry resends acknowledged requests: nothing may be counted twice
        with sender(second) as again:
            for index in list(acked)[:20]:
                body, _ = turn_request(index, hallucinate=index % 3 == 0)
                assert again.send(body)
        time.sleep(2)
        after = _turns(second.url)
        assert set(after) == set(before)
        for trace, turn in after.items():
            detail = httpx.get(f"{second.url}/api/v1/turns/{turn['turn_id']}").json()
            ids = [s["span_id"] for s in detail["spans"]]
            assert len(ids) == len(set(ids)), "a span was stored twice"
            assert len(detail["findings"]) == findings_before[trace]


def _queued_spans(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith("factledger_queue_spans "):
            return float(line.split()[1])
    raise AssertionError("no factledger_queue_spans gauge")


def test_a_full_log_disk_answers_503_and_gives_back_the_backlog(
    store: Store, tmp_path: Path
) -> None:
    body, _ = turn_request(7, hallucinate=False)
    spans = len(otlp.decode_request(body, otlp.JSON).spans)
    # room for exactly one request's spans: one that stayed counted would block every other
    settings = ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, queue_spans=spans
    )
    disk = FullDisk()
    wal = WriteAheadLog(settings.wal_dir, write=disk)
    with served_app(settings, store, wal) as url:
        disk.room = 9  # a torn record header, then ENOSPC
        for _ in range(3):
            refused = httpx.post(f"{url}/v1/traces", headers=HEADERS, content=body)
            assert refused.status_code == 503, refused.text
            assert refused.headers["Retry-After"]
            assert _queued_spans(url) == 0
        disk.room = None  # space freed
        accepted = httpx.post(f"{url}/v1/traces", headers=HEADERS, content=body)
        assert accepted.status_code == 200, accepted.text
        wait_until(lambda: store.span_count("default") == spans, 30, "the accepted spans")
        metrics = httpx.get(f"{url}/metrics").text
    wal.close()
    counted = 'factledger_requests_refused_total{reason="wal_unavailable",transport="http"} 3'
    assert counted in metrics
    replayed = list(WriteAheadLog(settings.wal_dir).replay(include_released=True))
    assert [r.body for r in replayed] == [body]


def test_an_idle_pipeline_deletes_stored_raw_requests_on_time(store: Store, tmp_path: Path) -> None:
    clock = Clock()
    wal = WriteAheadLog(tmp_path / "wal", segment_seconds=300, retain_seconds=60, clock=clock)
    pipeline = Pipeline(
        store, wal, default_runner(), Metrics(), grace_seconds=0.1, judge_in_worker=False
    )
    pipeline.start()
    try:
        body, _ = turn_request(8, hallucinate=False)
        spans = otlp.decode_request(body, otlp.JSON).spans
        pipeline.submit(otlp.JSON, "default", body, spans)
        wait_until(lambda: store.span_count("default") == len(spans), 30, "the spans stored")
        assert list((tmp_path / "wal").glob("segment-*.wal"))  # no traffic after this one
        clock.now += 360  # the segment's age plus the retention
        wait_until(
            lambda: not list((tmp_path / "wal").glob("segment-*.wal")),
            10,
            "the raw request to leave the disk",
        )
    finally:
        pipeline.shutdown()
        wal.close()
