"""The guard's cost per turn in each framework's loop, beside the framework's own.

Each guard set-up (tests/conformance/setups/guard_*.py) runs in its framework's
conformance virtualenv against the scripted LLM on loopback, `--runs` times per case
after three warm-up runs: once without the guard (`GUARD_OFF=1`: the framework's own
per-turn time, the scripted LLM's round trips included) and once with it. The guard's
own time is measured inside the guarded runs: each `GuardPolicy.decide` (the check of
one attempt, the transcript already built). `guard-clean` costs one check and no extra
model call; `guard-fab` one nudge, so one more model call and two checks.

    .venv/bin/python -m benchmarks.guards --runs 50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from typing import Any

from tests.conformance.fake_llm import FakeLlm
from tests.conformance.guards import CASES, PATHS
from tests.conformance.registry import ENVS, ROOT

SETUPS = {
    "Pydantic AI (run_sync)": ("pydantic-ai", "guard_pydantic_ai", {}),
    "OpenAI Agents SDK (Runner.run)": ("openai-agents-openinference", "guard_openai_agents", {}),
    "smolagents ToolCallingAgent": (
        "smolagents",
        "guard_smolagents",
        {"CONFORMANCE_AGENT": "toolcalling"},
    ),
    "LangChain create_agent (invoke)": ("langchain", "guard_langchain", {}),
    "Strands Agents (agent(...))": ("strands", "guard_strands", {}),
    "CrewAI Crew.kickoff()": ("crewai", "guard_crewai", {}),
    "Google ADK (Runner.run_async, plugin)": ("google-adk", "guard_google_adk", {}),
}
BENCH_CASES = ("guard-clean", "guard-fab")


def _run(env_name: str, program: str, extra: dict[str, str], llm: FakeLlm) -> dict[str, Any]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in PATHS),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_BASE": llm.base_url,  # LiteLLM's name for it (Google ADK's route)
        "OPENAI_API_KEY": "sk-benchmark-0000",
        "CONFORMANCE_CASES": json.dumps({case: [CASES[case]] for case in BENCH_CASES}),
        **extra,
    }
    interpreter = ENVS / env_name / "bin" / "python"
    done = subprocess.run(
        [str(interpreter), "-m", f"tests.conformance.setups.{program}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    line = next(line for line in reversed(done.stdout.splitlines()) if '"seconds"' in line)
    result: dict[str, Any] = json.loads(line)
    return result


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered) * 1000:.2f} / {p99 * 1000:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="The guard's cost per turn, per framework.")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    rows = [
        "| framework | case | turn without the guard (ms, median / p99) | with the guard "
        "| one check (ms, median / p99) |",
        "|---|---|---|---|---|",
    ]
    with FakeLlm() as llm:
        for label, (env_name, program, extra) in SETUPS.items():
            bench = {**extra, "GUARD_BENCH": str(args.runs)}
            plain = _run(env_name, program, {**bench, "GUARD_OFF": "1"}, llm)
            guarded = _run(env_name, program, bench, llm)
            for case in BENCH_CASES:
                rows.append(
                    f"| {label} | {case} | {_ms(plain['seconds'][case])} "
                    f"| {_ms(guarded['seconds'][case])} | {_ms(guarded['decide'][case])} |"
                )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
