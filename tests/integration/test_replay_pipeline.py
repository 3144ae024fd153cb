"""`factledger replay` of the labelled corpus through a real service: for every record the
stored verdict and finding kinds equal what `factledger eval` computes offline. The
validators' verdicts: verification (which would settle some suspicions at the turn's own
listings, as a later version) is switched off."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from factledger.evaluation import evaluate_case, read_cases
from factledger.processors.runner import default_runner
from factledger.replay import replay
from factledger.service_process import ServiceProcess

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.jsonl"))


def _stored(url: str, expected: int, timeout: float = 120) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        response = httpx.get(f"{url}/api/v1/turns", params={"limit": 1000}, timeout=30)
        turns = {t["conversation_id"]: t for t in response.json()["turns"]}
        if len(turns) >= expected or time.monotonic() > deadline:
            return turns
        time.sleep(0.5)


def test_replayed_corpus_gets_the_offline_verdicts(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(p.read_text(encoding="utf-8") for p in CORPUS), encoding="utf-8")
    cases = list(read_cases(corpus))
    runner = default_runner()
    offline = {c.id: evaluate_case(c, runner) for c in cases}

    settings = tmp_path / "settings.toml"
    settings.write_text("[verification]\nenabled = false\n")
    with ServiceProcess(tmp_path / "data", args=["--config", str(settings)]) as service:
        report = replay(corpus, service.url, progress=False)
        assert report.failed == 0 and report.skipped == 0
        assert report.records == len(cases)
        stored = _stored(service.url, len(cases))

    assert set(stored) == set(offline)
    mismatches = [
        f"{cid}: stored {turn['verdict']} {sorted(turn['kinds'])}, offline "
        f"{offline[cid].verdict} {sorted(offline[cid].kinds)}"
        for cid, turn in stored.items()
        if turn["verdict"] != offline[cid].verdict
        or sorted(turn["kinds"]) != sorted(offline[cid].kinds)
    ]
    assert not mismatches, "\n".join(mismatches)
