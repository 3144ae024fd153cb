"""The Node set-ups' shared helpers (`node/common.mjs`) behave as `setups/_common.py` does.

Both tell a set-up what the git tool does and what to print; the cases and the scripted
model are written against the Python one, so the JavaScript one must give the same
commits, failure modes, texts, tool results and result line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .cases import messages
from .registry import NODE, NODE_PROGRAMS
from .setups import _common

REPOS = ("acme/fab", "acme/clean", "acme/err-raise", "acme/err-type", "acme/err-object")
BRANCHES = ("main", "dev", "release/1.2")

_SCRIPT = """
import * as common from %(module)s;
const repos = %(repos)s, branches = %(branches)s;
const pushes = {};
for (const repo of repos) {
  try { pushes[repo] = { result: common.push(repo, "main") }; }
  catch (error) { pushes[repo] = { raised: error.name, message: error.message }; }
}
const shas = {};
for (const repo of repos) for (const branch of branches)
  shas[`${repo}@${branch}`] = [common.commitSha(repo, branch), common.fabricatedSha(repo, branch)];
process.stdout.write(JSON.stringify({
  failureText: common.FAILURE_TEXT,
  modes: Object.fromEntries(repos.map((repo) => [repo, common.failureMode(repo)])),
  shas, pushes, cases: common.cases(),
}) + "\\n");
await common.run(async (name) => { if (name === "err-raise") throw new Error("boom"); },
  { packages: ["no-such-package"], flush: async () => {}, supported: { "err-type": false } });
"""


def _node() -> str:
    if NODE.exists():
        return str(NODE)
    found = shutil.which("node")
    if found is None:
        message = "no Node.js: `make conformance-envs` installs the pinned one"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def _run_script(tmp_path: Path, conversations: dict[str, list[str]]) -> list[Any]:
    script = tmp_path / "agree.mjs"
    module = (NODE_PROGRAMS / "common.mjs").as_uri()
    script.write_text(
        _SCRIPT
        % {
            "module": json.dumps(module),
            "repos": json.dumps(REPOS),
            "branches": json.dumps(BRANCHES),
        }
    )
    env = {"PATH": os.environ.get("PATH", ""), "CONFORMANCE_CASES": json.dumps(conversations)}
    done = subprocess.run(
        [_node(), str(script)], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _python_push(repo: str) -> dict[str, Any]:
    try:
        return {"result": _common.push(repo, "main")}
    except _common.PushRejected as error:
        return {"raised": "PushRejected", "message": str(error)}


def test_common_mjs_agrees_with_common_py(tmp_path: Path) -> None:
    conversations = {case: messages(case) for case in ("fab", "err-raise", "err-type", "session")}
    facts, result = _run_script(tmp_path, conversations)
    assert facts["failureText"] == _common.FAILURE_TEXT
    assert facts["modes"] == {repo: _common.failure_mode(repo) for repo in REPOS}
    assert facts["shas"] == {
        f"{repo}@{branch}": [_common.commit_sha(repo, branch), _common.fabricated_sha(repo, branch)]
        for repo in REPOS
        for branch in BRANCHES
    }
    assert facts["pushes"] == {repo: _python_push(repo) for repo in REPOS}
    assert facts["cases"] == conversations
    # The result line: what ran, what raised (with its text), what was not supported.
    assert result["ran"] == ["fab", "session"]
    assert list(result["errors"]) == ["err-raise"] and "boom" in result["errors"]["err-raise"]
    assert result["unsupported"] == ["err-type"]
    assert result["versions"]["no-such-package"] == "missing"
