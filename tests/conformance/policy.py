"""The scripted LLM's decisions: what it answers to one request, by the request alone.

Every conformance conversation asks to push a branch of a repository under `acme/`; the
repository's name is the case (`acme/fab`, `acme/err-raise`, `acme/team-clean`, ...).
The answer depends on what the request offers and holds, never on hidden state, so any
framework's loop (retries, extra calls, sub-agents with their own histories) gets a
consistent script:

1. A model offered `git_push` that has not seen a push result since the user's request
   calls it with the repository and branch of that request.
2. A model without `git_push` but with another tool (a handoff, an agent used as a tool)
   that has not seen that tool's result delegates: it calls the first such tool, with the
   user's request as every required string argument.
   Results written back as text (an `Observation:` or `Error:` section of a user
   message, as smolagents' memory writes them) count as seen results of either tool.
3. Otherwise it answers (through `final_result` or `final_answer` when offered), and
   the answer is the case's: `fab` cites a commit no tool returned, `err-*` claims a
   push that failed went through, `clean` (and everything else) quotes the real
   commit's prefix. A second request of a conversation also cites the earlier push's
   full commit, which only that earlier turn's tool result holds.
   A worker in a team (offered `git_push`, or asked without tools to sum up its push)
   reports honestly with the full commit and the team's lead then answers by the case;
   a worker that was handed the conversation answers the user itself, by the case.
4. After a guard's nudge (a message carrying `[FACTLEDGER SELF-CORRECTION`, however the
   framework wraps it), it answers with what the push really returned: its commit, or
   its error. A case ending in `-stuck` repeats its answer instead. The guard cases
   (`guard-fab`, `guard-raise-fab-stuck`, ...) answer by the case after those prefixes;
   `guard-echo` quotes the commit the user's request names.

Code agents (model names containing `code`) get the same decisions written as code; the
tools they are offered are the functions their system prompt declares.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .setups._common import BRANCH_PATTERN, FAILURE_TEXT, REPO_PATTERN, fabricated_sha

GIT_TOOL = "git_push"

_HEX40 = re.compile(r"\b[0-9a-f]{40}\b")
_HEX_PREFIX = re.compile(r"\b[0-9a-f]{12,40}\b")
_TERMINAL_TOOLS = frozenset({"final_answer", "final_result"})
"""Tools that carry the answer itself (smolagents, Pydantic AI's output tool)."""


@dataclass(frozen=True)
class Message:
    """One message of a request, in the shape both OpenAI APIs reduce to."""

    role: str
    text: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    """(call id, tool name) of the tool calls an assistant message made."""
    answers: str = ""
    """For a tool message: the call id it answers."""


@dataclass(frozen=True)
class Request:
    model: str
    messages: tuple[Message, ...]
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Offered tool name -> its JSON-schema parameters."""
    descriptions: Mapping[str, str] = field(default_factory=dict)
    """Offered tool name -> its description, where it has one."""


@dataclass(frozen=True)
class ToolCallAnswer:
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Answer:
    """Text, or tool calls (at most one here), never both."""

    text: str = ""
    call: ToolCallAnswer | None = None


@dataclass(frozen=True)
class _Task:
    repo: str
    branch: str

    @property
    def case(self) -> str:
        return self.repo.rsplit("/", 1)[-1]


def decide(request: Request) -> Answer:
    """The answer to one request (see the module docstring)."""
    start = _last_user_index(request.messages)
    task = _task(request.messages, start)
    if task is None:
        return Answer(text="I could not find a repository and branch to push.")
    after = request.messages[start + 1 :]
    results = _results_by_tool(after)
    code = "code" in request.model
    tools = request.tools or (_code_tools(request) if code else {})
    offered = [name for name in tools if name not in _TERMINAL_TOOLS]
    earlier = _joined(request.messages[:start])
    observed = _observed_in_text(request.messages[start:])
    # A model summing up its own push (asked again without tools, as AutoGen's
    # `reflect_on_tool_use` does) is still the agent that holds `git_push`.
    if GIT_TOOL in tools or GIT_TOOL in results or (code and _mentions_git_tool(request)):
        if GIT_TOOL not in results and not observed and not (code and _observed_push(after)):
            return _call(GIT_TOOL, {"repo": task.repo, "branch": task.branch}, code)
        if task.case.startswith("team-") and not _handed_off(after):
            return _final(_worker_text(task, _joined(after)), code, request)
        # Alone, or handed the conversation by a handoff: this agent answers the user.
        return _final(
            _lead_text(task, _joined(after), earlier, after, request.messages[start].text),
            code,
            request,
        )
    delegates = [name for name in offered if name != GIT_TOOL]
    if delegates and not observed and not any(name in results for name in delegates):
        name = delegates[0]
        request_text = request.messages[start].text
        arguments = _delegation_arguments(
            tools[name], request_text, request.descriptions.get(name, "")
        )
        return _call(name, arguments, code)
    return _final(
        _lead_text(task, _reported(after), earlier, after, request.messages[start].text),
        code,
        request,
    )


def _worker_text(task: _Task, evidence: str) -> str:
    """A team worker's honest report to its lead, with the full commit."""
    sha = _first(_HEX40, evidence)
    if sha:
        return f"Pushed {task.branch} to {task.repo}: commit {sha}."
    return f"The push of {task.branch} to {task.repo} failed."


def _lead_text(
    task: _Task, evidence: str, earlier: str, after: Sequence[Message] = (), asked: str = ""
) -> str:
    case = task.case.removeprefix("team-").removeprefix("guard-").removeprefix("raise-")
    repeats = case.endswith("-stuck")
    case = case.removesuffix("-stuck")
    if not repeats and _nudged(after):
        return _corrected_text(task, evidence)
    if case == "echo":
        quoted = _first(_HEX40, asked)
        return f"Pushed {task.branch} to {task.repo} on top of commit {quoted[:12]}."
    if case == "fab":
        return (
            f"Pushed {task.branch} to {task.repo}. "
            f"The new head is commit {fabricated_sha(task.repo, task.branch)}."
        )
    if case.startswith("err-"):
        return f"I pushed {task.branch} to {task.repo} successfully."
    sha = _first(_HEX_PREFIX, evidence)
    text = f"Pushed {task.branch} to {task.repo}: commit {sha[:12]}." if sha else "Done."
    before = _first(_HEX40, earlier)
    if before:
        text += f" The earlier push is still commit {before}."
    return text


NUDGE_MARKER = "[FACTLEDGER SELF-CORRECTION"
"""How a guard's nudge begins (factledger.processors.nudges); a framework may wrap it."""


def _nudged(messages: Sequence[Message]) -> bool:
    """A guard nudged this reply since the request: a message that carries the marker."""
    return any(NUDGE_MARKER in m.text for m in messages if m.role != "assistant")


def _corrected_text(task: _Task, evidence: str) -> str:
    """The answer after a nudge: what the push really returned, its commit or its error."""
    sha = _first(_HEX40, evidence)
    if sha:
        return f"Pushed {task.branch} to {task.repo}: commit {sha[:12]}."
    return f"The push of {task.branch} to {task.repo} did not go through: {FAILURE_TEXT}"


_COWORKERS = re.compile(r"coworkers?:\s*([^\n,]+)", re.IGNORECASE)
"""Where a delegation tool's description lists whom it reaches (CrewAI: "Delegate a
specific task to one of the following coworkers: release_engineer")."""

_AGENTS = re.compile(r"available agents:\s*[\[{(]?\s*['\"]?([\w.-]+)", re.IGNORECASE)
"""Where a handoff tool's description lists the agents it hands off to (LlamaIndex's
AgentWorkflow: "Currently available agents:\n{'release_engineer': '...'}")."""


def _delegation_arguments(
    schema: Mapping[str, Any], request_text: str, description: str = ""
) -> dict[str, Any]:
    """The user's request as every required string argument; an argument that names the
    coworker to reach (its description says so) or the agent to hand off to (its name says
    so) names the first one the tool lists."""
    properties = schema.get("properties") or {}
    required = schema.get("required") or list(properties)
    coworker = _COWORKERS.search(description)
    agent = _AGENTS.search(description)
    arguments = {}
    for name in required:
        spec = properties.get(name)
        if not isinstance(spec, Mapping) or spec.get("type") != "string":
            continue
        names_coworker = "coworker" in str(spec.get("description", "")).lower()
        if coworker and names_coworker:
            arguments[name] = coworker.group(1).strip()
        elif agent and "agent" in name.lower():
            arguments[name] = agent.group(1)
        else:
            arguments[name] = request_text
    return arguments


def _call(name: str, arguments: Mapping[str, Any], code: bool) -> Answer:
    if not code:
        return Answer(call=ToolCallAnswer(name, arguments))
    args = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return Answer(
        text=f"Thought: I will call {name}.\n<code>\nresult = {name}({args})\n"
        "print(result)\n</code>"
    )


def _final(text: str, code: bool, request: Request) -> Answer:
    if code:
        return Answer(text=f"Thought: I can answer now.\n<code>\nfinal_answer({text!r})\n</code>")
    if "final_result" in request.tools:
        return Answer(call=ToolCallAnswer("final_result", _final_result_arguments(request, text)))
    if "final_answer" in request.tools:  # smolagents' ToolCallingAgent answers by this tool
        return Answer(call=ToolCallAnswer("final_answer", {"answer": text}))
    return Answer(text=text)


def _final_result_arguments(request: Request, text: str) -> dict[str, Any]:
    properties = request.tools["final_result"].get("properties") or {}
    return {name: text for name in properties} or {"response": text}


def _handed_off(messages: Sequence[Message]) -> bool:
    """A handoff (a call to another tool) happened since the user's request."""
    return any(name != GIT_TOOL for m in messages for _, name in m.calls)


_CODE_TOOL = re.compile(r"^\s*def (\w+)\(([^)]*)\)", re.M)


def _code_tools(request: Request) -> dict[str, Mapping[str, Any]]:
    """The tools a code model's system prompt declares as Python functions (smolagents'
    CodeAgent lists its tools and team members as `def name(arg: type, ...) -> type:`),
    each with its `str`/`string` arguments as required string parameters."""
    tools: dict[str, Mapping[str, Any]] = {}
    for message in request.messages:
        if message.role != "system":
            continue
        for name, signature in _CODE_TOOL.findall(message.text):
            strings = [
                arg.split(":")[0].strip()
                for arg in signature.split(",")
                if arg.partition(":")[2].strip() in ("str", "string")
            ]
            properties = {arg: {"type": "string"} for arg in strings}
            tools.setdefault(name, {"properties": properties, "required": strings})
    return tools


def _mentions_git_tool(request: Request) -> bool:
    return any(GIT_TOOL in m.text for m in request.messages if m.role == "system")


_TEXT_RESULT = re.compile(r"^(?:Observation|Error):", re.M)


def _observed_in_text(messages: Sequence[Message]) -> bool:
    """A tool's result written back as text after the request (`messages[0]`): an
    `Observation:` or `Error:` section of a user message (smolagents' memory), which may
    be merged into the request's own message after the request (or, for the previous
    turn's result, before it)."""
    if not messages:
        return False
    head, *rest = messages
    requests = list(BRANCH_PATTERN.finditer(head.text))
    tail = head.text[requests[-1].end() :] if requests else ""
    return any(
        m.role == "user" and _TEXT_RESULT.search(m.text) for m in (Message(head.role, tail), *rest)
    )


def _observed_push(messages: Sequence[Message]) -> bool:
    """A code agent's observation of its push (tool output written back as text)."""
    return any(
        m.role != "assistant" and ("'ok'" in m.text or '"ok"' in m.text or "push" in m.text)
        for m in messages
    )


def _results_by_tool(messages: Sequence[Message]) -> dict[str, str]:
    names = {call_id: name for m in messages for call_id, name in m.calls}
    results: dict[str, str] = {}
    for m in messages:
        if m.role == "tool":
            results[names.get(m.answers, m.answers)] = m.text
    return results


def _reported(messages: Sequence[Message]) -> str:
    """What a lead has to go on: tool results and user text first, then what other agents
    said (a supervisor gets its worker's report as an assistant message, not a result)."""
    said = [m.text for m in messages if m.role == "assistant" and m.text]
    return "\n".join([_joined(messages), *said])


def _joined(messages: Iterable[Message]) -> str:
    """The tool results and user text, without a guard's nudges (they quote the
    fabrication they correct)."""
    return "\n".join(
        m.text for m in messages if m.role in ("tool", "user") and NUDGE_MARKER not in m.text
    )


def _last_user_index(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        text = messages[index].text
        if (
            messages[index].role == "user"
            and NUDGE_MARKER not in text
            and REPO_PATTERN.search(text)
            and BRANCH_PATTERN.search(text)
        ):
            return index
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user" and NUDGE_MARKER not in messages[index].text:
            return index
    return 0


def _task(messages: Sequence[Message], start: int) -> _Task | None:
    for message in [messages[start], *reversed(messages)] if messages else []:
        repo = REPO_PATTERN.search(message.text)
        branch = BRANCH_PATTERN.search(message.text)
        if repo and branch:
            return _Task(repo.group(1), branch.group(1))
    return None


def _first(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    return found.group(0) if found else ""


def arguments_json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments))
