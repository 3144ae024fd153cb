"""`factledger eval` reads OTLP/JSON cases too: spans are assembled as the service does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factledger.cli import main
from factledger.evaluation import evaluate_case, parse_case
from factledger.processors.errors import TranscriptError
from factledger.processors.runner import default_runner
from tests.integration.otlp_turns import turn_request


@pytest.mark.parametrize(
    ("hallucinate", "verdict", "kinds"),
    [
        pytest.param(False, "pass", set(), id="clean-turn"),
        pytest.param(True, "reject", {"claim_without_tool", "fabricated_identifier"}, id="refund"),
    ],
)
def test_otlp_case_is_judged_like_the_service(
    hallucinate: bool, verdict: str, kinds: set[str]
) -> None:
    body, _ = turn_request(7, hallucinate=hallucinate)
    case = parse_case(
        {"id": "otlp-7", "otlp": json.loads(body), "expected": {"verdict": verdict}}, "t:1"
    )
    result = evaluate_case(case, default_runner())
    assert result.verdict == verdict
    assert set(result.kinds) == kinds


def test_otlp_without_a_turn_is_a_clear_error() -> None:
    request: dict[str, list[object]] = {"resourceSpans": []}
    case = parse_case({"id": "empty", "otlp": request, "expected": {"verdict": "pass"}}, "t:2")
    with pytest.raises(TranscriptError, match="no agent turn"):
        evaluate_case(case, default_runner())


def test_cli_eval_mixes_transcripts_and_otlp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body, _ = turn_request(3, hallucinate=True)
    transcript = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}],
    }
    lines = [
        {
            "id": "a",
            "otlp": json.loads(body),
            "expected": {
                "verdict": "reject",
                "kinds": ["claim_without_tool", "fabricated_identifier"],
            },
        },
        {"id": "b", "transcript": transcript, "expected": {"verdict": "pass"}},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["eval", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] == 2
    assert all(r["ok"] for r in report["results"])
