"""Acknowledged means durable: kill -9 under load, restart, nothing acknowledged is lost,
in-flight turns are finished, and client retries do not double-count."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from tests.integration.otlp_turns import turn_request
from tests.integration.service_process import ServiceProcess

HEADERS = {"Content-Type": "application/json"}
TURNS = 120


def _post_until_killed(url: str, acked: dict[int, list[str]], stop: threading.Event) -> None:
    with httpx.Client(timeout=5) as client:
        for index in range(1, TURNS + 1):
            if stop.is_set():
                return
            body, ids = turn_request(index, hallucinate=index % 3 == 0)
            try:
                response = client.post(f"{url}/v1/traces", headers=HEADERS, content=body)
            except httpx.HTTPError:
                return  # the service died under us: this one was not acknowledged
            if response.status_code == 200:
                acked[index] = ids


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


def test_kill_9_under_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    acked: dict[int, list[str]] = {}
    first = ServiceProcess(data).start()
    stop = threading.Event()
    client = threading.Thread(target=_post_until_killed, args=(first.url, acked, stop))
    client.start()
    deadline = time.monotonic() + 30
    while len(acked) < TURNS // 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    first.kill9()  # mid-load: requests are in flight, turns half-assembled
    stop.set()
    client.join(10)
    assert len(acked) >= TURNS // 3

    with ServiceProcess(data, port=first.port) as second:
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
        for index in list(acked)[:20]:
            body, _ = turn_request(index, hallucinate=index % 3 == 0)
            assert (
                httpx.post(f"{second.url}/v1/traces", headers=HEADERS, content=body).status_code
                == 200
            )
        time.sleep(2)
        after = _turns(second.url)
        assert set(after) == set(before)
        for trace, turn in after.items():
            detail = httpx.get(f"{second.url}/api/v1/turns/{turn['turn_id']}").json()
            ids = [s["span_id"] for s in detail["spans"]]
            assert len(ids) == len(set(ids)), "a span was stored twice"
            assert len(detail["findings"]) == findings_before[trace]
