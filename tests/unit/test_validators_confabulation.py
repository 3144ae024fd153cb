"""Class 5 (coherent invented sets) and mirror drift (real things reported as missing)."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.runner import default_runner
from tests.unit.transcripts import Call, chat, kinds_of

LISTING = Call("list_files", {"path": "tests"}, result="tests/test_agent.py\ntests/test_tools.py\n")

CONFABULATED = [
    pytest.param(
        chat(
            "The existing memory tests are test_memory_persistence.py, test_memory_recall.py, "
            "test_memory_validation.py and test_memory_eviction.py.",
            calls=[LISTING],
        ),
        id="test-memory-files",
    ),
    pytest.param(
        chat(
            "The repo has a tools/ directory with tools/config.py, tools/github_tools.py and "
            "tools/registry.py.",
            calls=[Call("read_file", {"path": "tools.py"}, result="def list_tools(): ...")],
        ),
        id="tools-directory",
    ),
    pytest.param(
        chat(
            "Here are the files I found:\n"
            "- src/cache/lru.py\n- src/cache/ttl.py\n- src/cache/policy.py",
            calls=[Call("glob", {"pattern": "src/**"}, result="src/main.py")],
        ),
        id="bullet-list-after-glob",
    ),
    pytest.param(
        chat(
            "Die vorhandenen Tests sind test_auth_login.py, test_auth_logout.py "
            "und test_auth_token.py.",
            calls=[LISTING],
        ),
        id="german",
    ),
]
NOT_CONFABULATED = [
    pytest.param(
        chat(
            "I'd create tests/test_cache.py, tests/test_api.py and tests/test_cli.py for this.",
            calls=[LISTING],
        ),
        id="proposal",
    ),
    pytest.param(
        chat(
            "I suggest adding these files:\n"
            "- src/a_loader.py\n- src/a_parser.py\n- src/a_writer.py",
            calls=[LISTING],
        ),
        id="bullets-under-proposal",
    ),
    pytest.param(
        chat("The tests are tests/test_agent.py and tests/test_tools.py.", calls=[LISTING]),
        id="grounded-listing",
    ),
    pytest.param(
        chat("Only one file, notes_extra.py, is not in the listing.", calls=[LISTING]),
        id="single-name-is-not-a-set",
    ),
    pytest.param(
        chat(
            "```python\nimport util_a, util_b\nfrom pkg.mod_c import x\n"
            "# files: a.py b.py c.py\n```",
            calls=[LISTING],
        ),
        id="code-block",
    ),
]


@pytest.mark.parametrize("transcript", CONFABULATED)
def test_confabulated_identifier_set(transcript: dict[str, Any]) -> None:
    assert "confabulated_identifier_set" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", NOT_CONFABULATED)
def test_not_a_confabulated_set(transcript: dict[str, Any]) -> None:
    assert "confabulated_identifier_set" not in kinds_of(transcript)


def test_confabulated_set_is_flagged_with_a_score() -> None:
    transcript = CONFABULATED[0].values[0]
    assert isinstance(transcript, dict)
    verdict = default_runner().validate(turn_from_transcript(transcript))
    scores = [f.score for f in verdict.findings if f.kind.value == "confabulated_identifier_set"]
    assert verdict.outcome.value == "flag"
    assert len(scores) == 4
    assert all(s is not None and 0.5 <= s <= 1.0 for s in scores)


SOURCE = "from fastapi import FastAPI\n\ndef build_registry(cfg):\n    return ToolRegistry(cfg)\n"
READ = Call("read_file", {"path": "app.py"}, result=SOURCE)

MIRROR = [
    pytest.param(
        chat("`build_registry` is not defined in app.py.", calls=[READ]), id="not-defined"
    ),
    pytest.param(
        chat("There is no `ToolRegistry` class in that file.", calls=[READ]), id="there-is-no"
    ),
    pytest.param(
        chat("I couldn't find build_registry() anywhere.", calls=[READ]), id="couldnt-find"
    ),
    pytest.param(chat("Die Funktion `build_registry` existiert nicht.", calls=[READ]), id="german"),
    pytest.param(
        chat("文件中不存在 build_registry 函数，build_registry 不存在。", calls=[READ]),
        id="chinese",
    ),
]
NOT_MIRROR = [
    pytest.param(chat("`load_config` is not defined in app.py.", calls=[READ]), id="really-absent"),
    pytest.param(
        chat(
            "`build_index` does not exist.",
            calls=[Call("grep", {"q": "build_index"}, result="build_index: no matches found")],
        ),
        id="tool-said-not-found",
    ),
    pytest.param(chat("`build_registry` is defined in app.py.", calls=[READ]), id="affirmative"),
    pytest.param(chat("`build_registry` does not exist.", calls=[]), id="no-tool-results"),
    pytest.param(
        chat("There is no `lifespan` function in app.py.", calls=[READ]), id="real-absence"
    ),
]


@pytest.mark.parametrize("transcript", MIRROR)
def test_negated_existing_identifier(transcript: dict[str, Any]) -> None:
    assert "negated_existing_identifier" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", NOT_MIRROR)
def test_not_mirror_drift(transcript: dict[str, Any]) -> None:
    assert "negated_existing_identifier" not in kinds_of(transcript)


LEDGER = (
    '{\n  "is_request_satisfied": {"reason": "The inventory has not been found yet.", '
    '"answer": false},\n  "is_in_loop": {"reason": "First attempt.", "answer": false},\n'
    '  "is_progress_being_made": {"reason": "The search found candidate sources.", '
    '"answer": true},\n  "next_speaker": {"reason": "A page must be read.", '
    '"answer": "web_surfer"},\n  "instruction_or_question": {"reason": "Needs the page.", '
    '"answer": "Open the museum pricing page."}\n}'
)
TABLE_READ = Call(
    "execute_code", {"code": "print(df.columns)"}, result="Index(['date', 'price', 'region'])"
)

# Structured output and plans: a JSON reply's keys are schema; first-person intent ("We
# will filter by the `sale_date` column") is a plan. Neither presents names as existing.
NOT_A_SET_SCHEMA_OR_PLAN = [
    pytest.param(chat(LEDGER, calls=[]), id="progress-ledger-keys-without-tool-calls"),
    pytest.param(chat(LEDGER, calls=[LISTING]), id="progress-ledger-keys-after-a-listing"),
    pytest.param(
        chat(
            "Here is the plan object:\n{'step_one': 'load', 'step_two': 'filter', "
            "'step_three': 'report'}",
            calls=[LISTING],
        ),
        id="python-dict-keys",
    ),
    pytest.param(
        chat(
            "We will filter by the `sale_date` column to keep January 2023. "
            "Then we will take the minimum of the `sale_price` column.",
            calls=[TABLE_READ],
        ),
        id="we-will-plan-over-columns",
    ),
    pytest.param(
        chat(
            "We need to join on `store_code` and then group by `sales_region`.",
            calls=[TABLE_READ],
        ),
        id="we-need-to-plan",
    ),
]

# The same shapes presenting invented names as what exists: still a set.
STILL_A_SET = [
    pytest.param(
        chat(
            '{"files_found": ["src/cache/lru.py", "src/cache/ttl.py", "src/cache/policy.py"]}',
            calls=[Call("glob", {"pattern": "src/**"}, result="src/main.py")],
        ),
        id="json-reply-values-are-read",
    ),
    pytest.param(
        chat(
            "The table has the columns `sale_date`, `sale_price` and `sale_region`.",
            calls=[TABLE_READ],
        ),
        id="columns-presented-as-existing",
    ),
    pytest.param(
        chat(
            "We found the columns `sale_date`, `sale_price` and `sale_region` in the file.",
            calls=[TABLE_READ],
        ),
        id="we-found-is-no-plan",
    ),
]


@pytest.mark.parametrize("transcript", NOT_A_SET_SCHEMA_OR_PLAN)
def test_schema_keys_and_plans_are_no_set(transcript: dict[str, Any]) -> None:
    assert "confabulated_identifier_set" not in kinds_of(transcript)


@pytest.mark.parametrize("transcript", STILL_A_SET)
def test_invented_names_beside_schema_and_plans_are_a_set(transcript: dict[str, Any]) -> None:
    assert "confabulated_identifier_set" in kinds_of(transcript)
