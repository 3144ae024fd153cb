"""The agent side of a base install (`pip install factledger`), run in that install's own
interpreter: which service and dashboard modules it could import, `check()` on a transcript,
and a turn instrumented with factledger.instrument judged in-process by the span processor.

    python tests/integration/light_install_probe.py TRANSCRIPT.json

Prints one JSON object. Imports nothing of the checkout (run it by path, not with -m).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

SERVICE_AND_DASHBOARD = (
    "fastapi",
    "uvicorn",
    "grpc",
    "chdb",
    "clickhouse_connect",
    "streamlit",
    "pandas",
    "altair",
    "pyarrow",
)


def in_process_verdict() -> dict[str, Any]:
    """One agent turn (ran the tests, then claims a push that never ran) through the span
    processor on the real OTel SDK."""
    from opentelemetry.sdk.trace import TracerProvider

    from factledger.instrument import chat, execute_tool, invoke_agent
    from factledger.processors.assembly.assembler import AssembledTurn
    from factledger.processors.model import Verdict
    from factledger.processors.span_processor import FactLedgerSpanProcessor

    verdicts: list[Verdict] = []

    def record(_: AssembledTurn, verdict: Verdict) -> None:
        verdicts.append(verdict)

    processor = FactLedgerSpanProcessor(record, grace_seconds=0.2, max_wait_seconds=5.0)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    ask: list[dict[str, Any]] = [
        {"role": "user", "content": "test_login is flaky. Fix it and push the fix."}
    ]
    tools = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in ("run_tests", "git_push")
    ]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "run_tests", "arguments": "{}"},
    }
    with invoke_agent("fixer", conversation_id="c-1", model="gpt-4o", tracer_provider=provider):
        with chat("gpt-4o", input_messages=ask, tools=tools, tracer_provider=provider) as llm:
            llm.set_output(tool_calls=[call])
        with execute_tool("run_tests", call_id="call_1", tracer_provider=provider) as tool:
            tool.set_result("48 passed")
        ran = [*ask, {"role": "assistant", "tool_calls": [call]}]
        ran.append({"role": "tool", "tool_call_id": "call_1", "content": "48 passed"})
        with chat("gpt-4o", input_messages=ran, tools=tools, tracer_provider=provider) as llm:
            llm.set_output(text="I pushed the fix, commit 9d22a7cdeadbeef1.")
    provider.shutdown()
    return {
        "verdicts": [verdict.outcome.value for verdict in verdicts],
        "kinds": sorted({f.kind.value for v in verdicts for f in v.findings}),
    }


def main(argv: list[str]) -> int:
    (transcript_path,) = argv
    from factledger import check

    transcript = json.loads(Path(transcript_path).read_text(encoding="utf-8"))
    result = check(transcript)
    report = {
        "importable": [m for m in SERVICE_AND_DASHBOARD if importlib.util.find_spec(m)],
        "check": result.outcome.value,
        "check_kinds": sorted({f.kind.value for f in result.findings}),
        "span_processor": in_process_verdict(),
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
