"""Turn the shared datasets into FactLedger eval cases (`factledger eval FILE.jsonl`).

- when2call: one case per row. The transcript is the question followed by the row's
  `tool_call` answer as a structured call; `correct_answer` decides the label (a phantom
  tool, an invented argument, or a correct call).
- tau_retail: one case per assistant message with text in a run. The transcript is the
  run up to that message plus every tool any run calls; replies of solved runs are
  expected to pass (presumed clean, not proven).

The datasets are read from `../shared/datasets/` beside the checkout, or from the folder
named by the environment variable FACTLEDGER_DATASETS. They are never modified.

    python -m benchmarks.datasets --out benchmarks/out/
"""

from __future__ import annotations

import argparse
import ast
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

WHEN2CALL_FILE = Path("when2call/data/test/when2call_test_llm_judge.jsonl")
TAU_RETAIL_FILE = Path("tau_retail/tau_dataset_full.json")

# when2call's `correct_answer` → what the validators must say about its `tool_call` answer.
WHEN2CALL_LABELS: dict[str, tuple[str, list[str]]] = {
    # The answer calls a tool that is not offered: a phantom call.
    "cannot_answer": ("reject", ["unregistered_tool_call"]),
    # `held_out_param` was removed from the question, yet the answer fills it in.
    "request_for_info": ("flag", ["ungrounded_tool_argument"]),
    # The answer is a correct call: a negative.
    "tool_call": ("pass", []),
}

# BFCL schemas use Python type names; tools reach a validator as JSON Schema.
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


class Expected(TypedDict):
    verdict: str
    kinds: list[str]
    allow: list[str]


class EvalCase(TypedDict):
    """One `factledger eval` record; `meta` is ignored by the eval and kept for measurement."""

    id: str
    transcript: dict[str, Any]
    expected: Expected
    meta: dict[str, Any]


def datasets_dir() -> Path:
    """The shared datasets folder: $FACTLEDGER_DATASETS, else `../shared/datasets/`."""
    override = os.environ.get("FACTLEDGER_DATASETS")
    if override:
        return Path(override)
    # benchmarks/datasets.py → repo root → its parent, where CI puts shared/ too.
    return Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def dataset_file(relative: Path) -> Path:
    """A file of the datasets folder; a missing one names the folder and the override."""
    path = datasets_dir() / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: put the shared datasets beside the checkout "
            "or set FACTLEDGER_DATASETS to their folder"
        )
    return path


# --- when2call -------------------------------------------------------------------------


def load_when2call(path: Path | None = None) -> list[dict[str, Any]]:
    """The when2call test rows (JSONL), in file order."""
    path = path or dataset_file(WHEN2CALL_FILE)
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def when2call_cases(rows: Iterable[Mapping[str, Any]]) -> list[EvalCase]:
    """One eval case per row: the row's `tool_call` answer checked against the offered tools.

    `meta.held_out_param` names the argument the question no longer grounds (None unless
    the row is `request_for_info`).
    """
    cases: list[EvalCase] = []
    for number, row in enumerate(rows):
        label = str(row["correct_answer"])
        verdict, kinds = WHEN2CALL_LABELS[label]
        cases.append(
            EvalCase(
                id=f"when2call/{number:03d}/{label}/{row.get('uuid', '')}",
                transcript=when2call_transcript(row),
                expected=Expected(verdict=verdict, kinds=list(kinds), allow=[]),
                meta={
                    "source": "when2call",
                    "correct_answer": label,
                    "held_out_param": row.get("held_out_param"),
                    "origin": row.get("source_id", ""),
                },
            )
        )
    return cases


def when2call_transcript(row: Mapping[str, Any]) -> dict[str, Any]:
    """The question, then an assistant message whose only content is the `tool_call` answer."""
    answer = _json_value(row["answers"]["tool_call"])
    arguments = answer.get("arguments") or {}
    call = {
        "id": "call_0",
        "type": "function",
        "function": {
            "name": str(answer["name"]),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }
    return {
        "model": "when2call",
        # An empty list is kept as is: "no tools offered" differs from "tools unknown".
        "tools": [when2call_tool(t) for t in row.get("tools") or []],
        "messages": [
            {"role": "user", "content": str(row["question"])},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
    }


def when2call_tool(raw: str | Mapping[str, Any]) -> dict[str, Any]:
    """A when2call tool (a JSON string in BFCL style) as an OpenAI tool definition."""
    spec = _json_value(raw)
    return {
        "type": "function",
        "function": {
            "name": str(spec["name"]),
            "description": str(spec.get("description") or ""),
            "parameters": bfcl_to_json_schema(spec.get("parameters") or {}),
        },
    }


def bfcl_to_json_schema(node: Any) -> Any:
    """Map BFCL type names (`dict`, `float`, `tuple`, `any`) to JSON Schema, recursively."""
    if isinstance(node, list):
        return [bfcl_to_json_schema(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue  # JSON Schema says "any type" by leaving `type` out
            out[key] = _BFCL_TYPES.get(value, value)
        else:
            out[key] = bfcl_to_json_schema(value)
    return out


# --- tau_retail ------------------------------------------------------------------------


def load_tau_runs(path: Path | None = None) -> list[dict[str, Any]]:
    """The tau_retail runs with `reward` as a float and `traj` as clean OpenAI messages.

    The README warns that exports may store `tool_calls` as a Python-literal string and
    absent values as the string 'None'; both shapes are normalised here.
    """
    path = path or dataset_file(TAU_RETAIL_FILE)
    records = json.loads(path.read_text(encoding="utf-8"))
    runs = []
    for record in records:
        traj = _literal(record.get("traj")) or []
        runs.append(
            {
                "task_id": record.get("task_id"),
                "trial": record.get("trial"),
                "reward": float(record.get("reward") or 0.0),
                "traj": [_clean_message(m) for m in traj],
            }
        )
    return runs


def tau_offered_tools(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every tool any run calls, with an open schema (the dataset ships no definitions)."""
    names = {
        call["function"]["name"]
        for run in runs
        for message in run["traj"]
        for call in message.get("tool_calls") or ()
    }
    return [
        {"name": name, "parameters": {"type": "object", "properties": {}}} for name in sorted(names)
    ]


def is_solved(run: Mapping[str, Any]) -> bool:
    """tau-bench scores a run 1.0 when the task was solved."""
    return float(run["reward"]) >= 1.0


def tau_reply_cases(
    runs: Sequence[Mapping[str, Any]],
    *,
    solved: bool | None = True,
    tools: list[dict[str, Any]] | None = None,
) -> list[EvalCase]:
    """One case per assistant message with text: the run up to it, expected to pass.

    `solved=True` takes reward-1 runs, `False` reward-0 runs (for information: their
    replies may hold real errors), `None` all runs. `tools` defaults to the union over
    `runs`; pass the union over all runs when `runs` is a subset.
    """
    tools = tau_offered_tools(runs) if tools is None else tools
    cases: list[EvalCase] = []
    for run in runs:
        if solved is not None and is_solved(run) != solved:
            continue
        traj = run["traj"]
        for index, message in enumerate(traj):
            if message["role"] != "assistant" or not (message.get("content") or "").strip():
                continue
            cases.append(
                EvalCase(
                    id=f"tau_retail/task{run['task_id']}/trial{run['trial']}/msg{index:02d}",
                    transcript={
                        "model": "tau_retail",
                        "tools": tools,
                        "messages": traj[: index + 1],
                    },
                    expected=Expected(verdict="pass", kinds=[], allow=[]),
                    meta={
                        "source": "tau_retail",
                        "task_id": run["task_id"],
                        "trial": run["trial"],
                        "reward": run["reward"],
                        "message_index": index,
                    },
                )
            )
    return cases


def _clean_message(raw: Any) -> dict[str, Any]:
    """Keep the OpenAI keys of a tau message; 'None' strings and literal lists are decoded."""
    message = _literal(raw)
    if not isinstance(message, Mapping):
        raise ValueError(f"tau_retail message is not an object: {str(raw)[:80]!r}")
    role = str(message.get("role"))
    content = message.get("content")
    if content == "None" and role == "assistant":
        content = None  # an absent value, not the word "None"
    out: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        calls = _literal(message.get("tool_calls"))
        if calls:
            out["tool_calls"] = [_clean_call(c) for c in calls]
    elif role == "tool":
        out["tool_call_id"] = str(message.get("tool_call_id") or "")
        if message.get("name") not in (None, "None"):
            out["name"] = str(message["name"])
    return out


def _clean_call(raw: Any) -> dict[str, Any]:
    call = _literal(raw)
    function = _literal(call.get("function")) or {}
    arguments = function.get("arguments")
    return {
        "id": str(call.get("id") or ""),
        "type": "function",
        "function": {
            "name": str(function.get("name") or ""),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
        },
    }


def _literal(value: Any) -> Any:
    """Decode a value an export stored as text: 'None', JSON, or a Python literal."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if stripped in ("", "None"):
        return None
    if stripped[0] not in "[{":
        return value
    try:
        return json.loads(stripped)
    except ValueError:
        return ast.literal_eval(stripped)


def _json_value(value: str | Mapping[str, Any]) -> dict[str, Any]:
    decoded = json.loads(value) if isinstance(value, str) else value
    if not isinstance(decoded, Mapping):
        raise ValueError(f"expected a JSON object, got {str(value)[:80]!r}")
    return dict(decoded)


# --- output ----------------------------------------------------------------------------


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write one JSON object per line (creating parent folders); return the line count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.datasets",
        description="Write the shared datasets as `factledger eval` JSONL files.",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/out"), help="output folder (git-ignored)"
    )
    parser.add_argument(
        "--unsolved",
        action="store_true",
        help="also write tau_retail_unsolved.jsonl (replies of reward-0 runs)",
    )
    args = parser.parse_args(argv)

    written = {"when2call.jsonl": when2call_cases(load_when2call())}
    runs = load_tau_runs()
    tools = tau_offered_tools(runs)
    written["tau_retail.jsonl"] = tau_reply_cases(runs, solved=True, tools=tools)
    if args.unsolved:
        written["tau_retail_unsolved.jsonl"] = tau_reply_cases(runs, solved=False, tools=tools)
    for name, cases in written.items():
        count = write_jsonl(args.out / name, cases)
        print(f"{args.out / name}: {count} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
