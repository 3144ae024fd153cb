"""Mirror drift: what a tool result shows, and what it reports missing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.transcripts import Call, chat, kinds_of

TRACEBACK = (
    "exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\n"
    '  File "/tmp/run.py", line 4, in <module>\n'
    "    frame = pd.read_csv('sales_2023.csv')\n" + "    # " + "x" * 120 + "\n"
    "FileNotFoundError: [Errno 2] No such file or directory: 'sales_2023.csv'\n"
)
NAME_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "/tmp/run.py", line 9, in <module>\n'
    "    scores = {k: rank_candidates(v) for k, v in rows.items()}\n" + "#" * 120 + "\n"
    "NameError: name 'rank_candidates' is not defined\n"
)
HTTP_404 = json.dumps({"status_code": 404, "path": "reports/q3_summary.pdf", "body": ""})
LISTING_WITH_ERRORS = json.dumps(
    {
        "modules": [
            {"path": "ledger/export.py", "functions": ["write_rows", "flush_batch"], "errors": []}
        ],
        "warnings": ["missing license header in 2 files"],
    }
)

# Failure wording: a not-found error that names X supports "X does not exist / is not
# available"; its other mentions of X are the attempt.
NOT_FOUND_SUPPORTS_ABSENCE = [
    pytest.param(
        chat(
            "The file `sales_2023.csv` does not exist in the working directory.",
            calls=[Call("execute_code", {"code": "..."}, result=TRACEBACK, is_error=True)],
        ),
        id="file-not-found-traceback-names-the-file",
    ),
    pytest.param(
        chat(
            "`rank_candidates` is not defined in this session, so I'll define it first.",
            calls=[Call("execute_code", {"code": "..."}, result=NAME_ERROR, is_error=True)],
        ),
        id="name-error-not-defined",
    ),
    pytest.param(
        chat(
            "The report `q3_summary.pdf` is not available.",
            calls=[Call("http_get", {"path": "reports/q3_summary.pdf"}, result=HTTP_404)],
        ),
        id="structured-http-404-echoing-the-path",
    ),
    pytest.param(
        chat(
            "There is no `archive_2019` branch.",
            calls=[
                Call(
                    "git",
                    {"args": "checkout"},
                    result="error: pathspec 'archive_2019' "
                    "did not match any file(s) known to git\n"
                    + "-" * 100
                    + "\nfatal: branch archive_2019 not found",
                )
            ],
        ),
        id="git-branch-not-found",
    ),
]

# The same shapes where a result does show the thing: still drift.
STILL_DRIFT = [
    pytest.param(
        chat(
            "The file `sales_2023.csv` does not exist in the working directory.",
            calls=[
                Call("list_files", {"path": "."}, result="report.md\nsales_2023.csv\nrun.py\n"),
                Call("execute_code", {"code": "..."}, result=TRACEBACK, is_error=True),
            ],
        ),
        id="listing-shows-the-file-another-call-failed-on",
    ),
    pytest.param(
        chat(
            "`flush_batch` is not defined anywhere in ledger/export.py.",
            calls=[Call("index_module", {"path": "ledger"}, result=LISTING_WITH_ERRORS)],
        ),
        id="nested-value-beside-an-empty-errors-key",
    ),
    pytest.param(
        chat(
            "The report `q3_summary.pdf` is not available.",
            calls=[
                Call(
                    "http_get",
                    {"path": "reports/q3_summary.pdf"},
                    result=json.dumps({"status_code": 200, "path": "reports/q3_summary.pdf"}),
                )
            ],
        ),
        id="structured-http-200-showing-the-path",
    ),
    pytest.param(
        chat(
            "There is no `retry_budget` setting.",
            calls=[
                Call(
                    "read_config",
                    {"path": "svc.json"},
                    result=json.dumps(
                        {"service": {"limits": [{"name": "retry_budget", "value": 3}]}}
                    ),
                )
            ],
        ),
        id="value-in-an-array-of-objects",
    ),
    pytest.param(
        chat(
            "The `timeout_ms` key does not exist in the config.",
            calls=[
                Call(
                    "read_config",
                    {"path": "svc.json"},
                    result=json.dumps({"error": None, "config": {"http": {"timeout_ms": 500}}}),
                )
            ],
        ),
        id="nested-key-beside-a-null-error",
    ),
]


@pytest.mark.parametrize("transcript", NOT_FOUND_SUPPORTS_ABSENCE)
def test_a_not_found_result_supports_the_absence(transcript: dict[str, Any]) -> None:
    assert "negated_existing_identifier" not in kinds_of(transcript)


@pytest.mark.parametrize("transcript", STILL_DRIFT)
def test_a_result_that_shows_the_name_still_makes_drift(transcript: dict[str, Any]) -> None:
    assert "negated_existing_identifier" in kinds_of(transcript)
