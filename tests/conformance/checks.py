"""What a conformance case requires of the turns a set-up produced.

Each request of a case must give exactly one turn; that turn's service, agent, model,
user message, reply, push call (arguments, result, success) and verdict are checked one
by one, so the table can say which fields a set-up fills and which it gets wrong.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cases import Expected, conversation
from .registry import SetUp

FIELDS = ("turns", "service", "agent", "model", "user", "reply", "tool", "verdict")
"""The checked facts, in the table's order. `turns`: exactly one turn per request."""


@dataclass
class CaseResult:
    setup: str
    case: str
    fields: dict[str, bool] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def check(self, name: str, passed: bool, problem: str) -> None:
        """Record one field: a field fails when any request of the case fails it."""
        self.fields[name] = self.fields.get(name, True) and passed
        if not passed:
            self.problems.append(f"{name}: {problem}")

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "fields": self.fields, "problems": self.problems}


def check_case(
    setup: SetUp, case: str, turns: Sequence[Mapping[str, Any]], error: str | None
) -> CaseResult:
    """Check every request of `case` against the set-up's turns."""
    result = CaseResult(setup.id, case)
    if error:
        result.problems.append(f"the set-up failed to run it:\n{error}")
    for expected in conversation(case):
        _check_request(result, setup, expected, turns)
    return result


def _check_request(
    result: CaseResult, setup: SetUp, expected: Expected, turns: Sequence[Mapping[str, Any]]
) -> None:
    marker = f"branch {expected.branch} of {expected.repo}"
    mine = [t for t in turns if marker in str(t.get("user_message", ""))]
    result.check(
        "turns",
        len(mine) == 1,
        f"{len(mine)} turns for {expected.user!r} "
        f"(users seen: {[t.get('user_message') for t in turns]})",
    )
    if not mine:
        for name in FIELDS[1:]:
            result.check(name, False, "no turn")
        return
    turn = max(mine, key=lambda t: len(t.get("tool_calls") or []))
    agent = setup.team_agent if expected.case.startswith("team-") else setup.agent
    if expected.case in setup.unnamed_agent:
        agent = ""
    result.check("service", turn["service"] == setup.id, f"service {turn['service']!r}")
    result.check("agent", turn["agent"] == (agent or ""), f"agent {turn['agent']!r}, not {agent!r}")
    result.check("model", turn["model"] == setup.model, f"model {turn['model']!r}")
    user = str(turn["user_message"]).strip()
    result.check("user", user == expected.user, f"user message {user!r}")
    reply = str(turn["reply"]).strip()
    result.check("reply", reply == expected.reply, f"reply {reply!r}, not {expected.reply!r}")
    problem = _push_problem(expected, turn.get("tool_calls") or [])
    result.check("tool", problem is None, problem or "")
    kinds = [f["kind"] for f in turn.get("findings") or []]
    verdict_ok = turn["verdict"] == expected.verdict and (
        expected.kind in kinds if expected.kind else not kinds
    )
    result.check(
        "verdict",
        verdict_ok,
        f"{turn['verdict']} {kinds}, not {expected.verdict} {expected.kind or '[]'}"
        f" ({[f.get('message') for f in turn.get('findings') or []]})",
    )


def _is_push(name: str) -> bool:
    """The push tool, by the name the model was offered it under: `git_push`, or its
    plugin-qualified name (Semantic Kernel offers a plugin's function as `Git-git_push`)."""
    return name == "git_push" or name.rsplit("-", 1)[-1] == "git_push"


def _push_problem(expected: Expected, calls: Sequence[Mapping[str, Any]]) -> str | None:
    pushes = [c for c in calls if _is_push(str(c.get("name"))) and c.get("origin") != "prose"]
    if len(pushes) != 1:
        return f"{len(pushes)} git_push calls in {[c.get('name') for c in calls]}"
    push = pushes[0]
    arguments = push.get("arguments")
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    wanted = {"repo": expected.repo, "branch": expected.branch}
    if arguments != wanted:
        return f"arguments {arguments!r}, not {wanted!r}"
    if push.get("ok") is not expected.push_ok:
        return f"ok={push.get('ok')!r} for result {push.get('result')!r}"
    if expected.result_marker not in str(push.get("result") or ""):
        return f"result {push.get('result')!r} lacks {expected.result_marker!r}"
    return None
