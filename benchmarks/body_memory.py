"""Peak memory of `factledger serve` under concurrent large request bodies.

Starts the service as a child process on loopback (its own data directory), sends
`--bodies` valid OTLP/JSON bodies of about `--mb` MB each at once, each from its own
thread, and prints the status codes and the peak RSS (VmHWM) of the service process and
of its judge worker, beside their RSS before the load, once every span is stored and
handed to judging. Refused requests (503 past FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES or
FACTLEDGER_QUEUE_BYTES) are sent again after their Retry-After, so every body is
acknowledged in the end.

    python -m benchmarks.body_memory [--bodies 8] [--mb 30] [--in-flight BYTES]
                                     [--queue-bytes BYTES]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from factledger.service_process import ServiceProcess

TOKEN = "body-memory-benchmark-token-0123"
SPAN_BYTES = 60_000


def body(index: int, megabytes: float) -> bytes:
    now = time.time_ns()
    spans = [
        {
            "traceId": f"{index:016x}{n:016x}",
            "spanId": f"{index:08x}{n:08x}",
            "name": "chat",
            "startTimeUnixNano": str(now),
            "endTimeUnixNano": str(now + 1),
            "attributes": [{"key": "pad", "value": {"stringValue": "x" * SPAN_BYTES}}],
        }
        for n in range(int(megabytes * 1_000_000 / SPAN_BYTES))
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def rss_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=8)
    parser.add_argument("--mb", type=float, default=30.0)
    parser.add_argument("--in-flight", type=int, default=None, help="bytes; default: the service's")
    parser.add_argument(
        "--queue-bytes", type=int, default=None, help="bytes; default: the service's"
    )
    args = parser.parse_args()
    env = {"FACTLEDGER_INGEST_TOKEN": TOKEN, "FACTLEDGER_API_OPEN": "1"}
    if args.in_flight:
        env["FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES"] = str(args.in_flight)
    if args.queue_bytes:
        env["FACTLEDGER_QUEUE_BYTES"] = str(args.queue_bytes)
    bodies = [body(i, args.mb) for i in range(args.bodies)]
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as data, ServiceProcess(Path(data), env) as svc:
        assert svc.proc is not None
        pid = svc.proc.pid
        before = rss_kb(pid, "VmRSS")
        worker = worker_pid(pid)
        worker_before = rss_kb(worker, "VmRSS") if worker else 0
        start = threading.Barrier(args.bodies)

        def send(payload: bytes) -> None:
            start.wait()
            with httpx.Client(timeout=300) as client:
                while True:
                    status = client.post(f"{svc.url}/v1/traces", headers=headers, content=payload)
                    with lock:
                        statuses[status.status_code] += 1
                    if status.status_code != 503:
                        return
                    time.sleep(float(status.headers.get("retry-after", "1")))

        threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        took = time.monotonic() - began
        drained(svc.url, headers)
        peak = rss_kb(pid, "VmHWM")
        worker_peak = rss_kb(worker, "VmHWM") if worker else 0
    size = sum(len(b) for b in bodies) / 1e6
    print(f"{args.bodies} bodies, {size:.0f} MB in all, acknowledged in {took:.1f} s")
    print(f"status codes: {dict(sorted(statuses.items()))}")
    print(f"service RSS before: {before / 1024:.0f} MiB, peak: {peak / 1024:.0f} MiB")
    print(f"peak growth: {(peak - before) / 1024:.0f} MiB")
    print(
        f"judge worker RSS before: {worker_before / 1024:.0f} MiB, "
        f"peak: {worker_peak / 1024:.0f} MiB"
    )


def worker_pid(service: int) -> int | None:
    """The service's judge worker: its child process."""
    for task in Path(f"/proc/{service}/task").iterdir():
        children = (task / "children").read_text().split()
        if children:
            return int(children[0])
    return None


def drained(url: str, headers: dict[str, str], timeout: float = 300) -> None:
    """Wait until no span waits to be stored or assembled."""
    deadline = time.monotonic() + timeout
    gauges = ("factledger_queue_spans ", "factledger_assembly_queue_spans ")
    while time.monotonic() < deadline:
        text = httpx.get(f"{url}/metrics", headers=headers, timeout=30).text
        values = [float(line.split()[-1]) for line in text.splitlines() if line.startswith(gauges)]
        if values and not any(values):
            return
        time.sleep(0.5)


if __name__ == "__main__":
    main()
