"""The secret rules against a maintained detector on the secret corpus: shapes caught,
near misses flagged and CPU time per KiB of JSON-encoded text, side by side.

    python -m benchmarks.secret_rules [--corpus tests/unit/secret_corpus.py]

The corpus is read from a checkout (the test tree's data file, run as a script so the
benchmark imports nothing from the tests). detect-secrets is measured when it imports
(`pip install detect-secrets`; it is no dependency of FactLedger).
"""

from __future__ import annotations

import argparse
import json
import runpy
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from factledger.collector.redaction import Redactor

_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "unit" / "secret_corpus.py"
_ROUNDS = 3

Finder = Callable[[str], str]
"""Text in, the text with what the detector found replaced."""


def _ours() -> Finder:
    return Redactor.default().text


def _detect_secrets() -> Finder | None:
    try:
        from detect_secrets.core.scan import scan_line  # type: ignore[import-not-found]
        from detect_secrets.settings import default_settings  # type: ignore[import-not-found]
    except ImportError:
        return None

    def found(text: str) -> str:
        with default_settings():
            for line in text.splitlines() or [text]:
                for secret in scan_line(line):
                    if secret.secret_value:
                        text = text.replace(secret.secret_value, "[FOUND]")
        return text

    return found


def measure(name: str, find: Finder, shapes: Sequence[Any]) -> str:
    caught = sum(all(part not in find(json.dumps(s.text)) for part in s.secret) for s in shapes)
    flagged = sum(find(s.negative) != s.negative for s in shapes)
    texts = [json.dumps(s.text) for s in shapes] + [json.dumps(s.negative) for s in shapes]
    kib = sum(len(t) for t in texts) / 1024
    started = time.process_time()
    for _ in range(_ROUNDS):
        for text in texts:
            find(text)
    per_kib = (time.process_time() - started) / _ROUNDS / kib * 1e6
    return (
        f"{name:<24} {caught:>4}/{len(shapes)} caught {flagged:>4} near misses changed"
        f" {per_kib:>9,.0f} µs CPU per KiB"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=_CORPUS)
    args = parser.parse_args(argv)
    shapes = runpy.run_path(str(args.corpus))["SHAPES"]
    print(measure("factledger rules", _ours(), shapes))
    other = _detect_secrets()
    print(measure("detect-secrets", other, shapes) if other else "detect-secrets: not installed")


if __name__ == "__main__":
    main()
