"""What the processing modules make of a file of eval cases, printed in full so that two runs
(compiled modules and pure Python) can be compared line by line.

    python -m tests.integration.compiled_probe CASES.jsonl

Prints whether the compiled modules are in use, then `factledger eval --json` on the file,
then for every case its turn (from the transcript, or assembled from the OTLP spans as the
service does) and its verdict, as `repr`s.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from factledger.cli import main as cli_main
from factledger.compiled import compiled_status
from factledger.evaluation import read_cases, turn_from_otlp
from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.runner import default_runner


def main(argv: Sequence[str]) -> int:
    (path,) = argv
    status = compiled_status()
    print(json.dumps({"compiled": status.active, "modules": list(status.modules)}))
    sys.stdout.flush()
    code = cli_main(["eval", "--json", path])
    runner = default_runner()
    for case in read_cases(Path(path)):
        if case.transcript is not None:
            turn = turn_from_transcript(case.transcript, turn_id=case.id)
        else:
            turn = turn_from_otlp(case.otlp or {})
        print(f"{case.id}\t{turn!r}\t{runner.validate(turn)!r}")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
