"""Who&When's multi-agent runs as FactLedger turns, and the fixed scope rule for its labels.

Each run (`who_and_when_ag/N.json`) is a CaptainAgent-style group chat: a task message,
then messages of expert agents and of `Computer_terminal`, which runs the code blocks of
the message before it and answers `exitcode: N (execution failed|succeeded)` with the
output. A run's trace, as FactLedger would read it:

    history[0]  task message (manager's plan, maybe code)  →  every turn's request
    history[1]  Computer_terminal: exitcode: 0 …            →  execution of history[0]'s code
    history[2]  Expert_A: text + ```python …```             →  turn 2: reply of Expert_A,
    history[3]  Computer_terminal: exitcode: 1 …            →    its call: execute_code (failed)
    history[4]  Expert_B: text                              →  turn 4: reply of Expert_B;
                                                               the executions of 0 and 2
                                                               are its history tool calls

- Every expert message after the task message is one turn of that expert (`Turn.agent`),
  with the expert's role text as system prompt; the message is the reply. The group chat's
  members (the experts the run names and the terminal) are the turn's `participants`.
- The code blocks an expert writes and the terminal's answer right after are one call of
  the offered tool `execute_code`: the blocks are its `code` (joined; `language` is the
  first block's), the terminal's text is its result, a non-zero exit code its failure. The
  call belongs to the message that wrote the code; the expert's next message sees the
  result as history. Code that no terminal answered never ran: no call.
- A web surfer's message that is a page of its browser (`Address: …`, `Viewport position:
  …`) is no text the model wrote: AG2's WebSurferAgent answers with the result of the
  browser function its inner model called. Such a turn has that call (its arguments read
  from the address: `informational_web_search(query)` for `bing: …`, `page_down()` past
  page 1, else `visit_page(url)`), the page as its result, and an empty reply, as a turn
  whose last output is a tool call alone is stored. The surfer is offered its browser
  functions beside `execute_code`.
- The conversation before a turn is its context: the task message is the request, the
  other experts' messages are `user` messages, the expert's own earlier ones `assistant`.
  The terminal's answers and the browser's pages are results of earlier calls, not
  conversation; the terminal's "There is no code from the last 1 message for me to
  execute" is neither.
- A message that is empty or only `TERMINATE` has nothing to check and is no turn.

Labels: `mistake_step` indexes `history`. Replies before it are presumed clean; the reply
at it carries the decisive mistake. A step at a terminal execution is the mistake of the
expert message whose code it ran; a step at the task message (0) is the plan itself, no
reply, so such a run has no labelled turn and no clean ones. Whether a mistake is a kind
FactLedger decides is the scope rule below, over `mistake_reason` only.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from factledger.processors.model import Message, ToolCall, ToolDefinition, Turn

from .datasets import datasets_dir

WHO_AND_WHEN_DIR = Path("who_and_when_ag")
TERMINAL = "Computer_terminal"
TOOL_NAME = "execute_code"
LANGUAGES = ("python", "sh", "bash", "shell")

EXECUTE_CODE = ToolDefinition(
    name=TOOL_NAME,
    description=(
        "Run code blocks in the team's code executor (Computer_terminal); returns the exit "
        "code and the output."
    ),
    parameters={
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "the code blocks, in order"},
            "language": {"type": "string", "enum": list(LANGUAGES), "default": "python"},
        },
        "required": ["code"],
    },
)
"""The tool every expert is offered: the experts' tool library (`perform_web_search` …)
is Python imported inside the code, not a tool of the model."""


def _browser_tool(name: str, description: str, *params: str) -> ToolDefinition:
    properties = {p: {"type": "string"} for p in params}
    return ToolDefinition(
        name=name,
        description=description,
        parameters={"type": "object", "properties": properties, "required": list(params)},
    )


BROWSER_TOOLS = (
    _browser_tool(
        "informational_web_search",
        "Perform an INFORMATIONAL web search query then return the search results.",
        "query",
    ),
    _browser_tool(
        "navigational_web_search",
        "Perform a NAVIGATIONAL web search query then immediately navigate to the top result.",
        "query",
    ),
    _browser_tool("visit_page", "Visit a webpage at a given URL and return its text.", "url"),
    _browser_tool("page_up", "Scroll the viewport UP one page-length in the current webpage."),
    _browser_tool("page_down", "Scroll the viewport DOWN one page-length in the current webpage."),
)
"""AG2 WebSurferAgent's browser functions (autogen/agentchat/contrib/web_surfer.py), offered
to its inner model."""

# AG2's CODE_BLOCK_PATTERN (autogen/code_utils.py): a fenced block with an optional language.
_CODE_BLOCK = re.compile(r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", re.DOTALL)
_EXIT_CODE = re.compile(r"\Aexitcode: (-?\d+)")
# The header of the surfer's browser state (`_browser_state` in web_surfer.py).
_BROWSER_PAGE = re.compile(
    r"\AAddress: (?P<address>[^\n]*)\n(?:[^\n]*\n){0,3}?Viewport position: Showing page "
    r"(?P<page>\d+) of \d+\."
)
_TERMINATE = re.compile(r"\bTERMINATE\b")

Position = Literal["clean", "mistake", "after"]


# --- the scope rule --------------------------------------------------------------------


@dataclass(frozen=True)
class ScopeRule:
    """One bucket of `mistake_reason`: the first rule whose pattern matches decides."""

    bucket: str
    in_scope: bool
    pattern: re.Pattern[str]
    meaning: str


SCOPE_RULES: tuple[ScopeRule, ...] = (
    ScopeRule(
        "fabricated",
        True,
        re.compile(
            r"fabricat|hallucinat|placeholder|hypothetical|simulated|made[- ]up|"
            r"\binvent(?:ed|s|ing)?\b|generat\w* (?:\w+ ){0,2}data\b|assum\w* the existence of"
        ),
        "made-up data, ids, files or content; placeholder values; a simulated data set",
    ),
    ScopeRule(
        "unbacked_result",
        True,
        re.compile(
            r"without (?:taking|retrieving|running|executing|searching|any actual)|"
            r"(?:internal|general) knowledge|(?:not|n't) take any action|"
            r"necessary (?:steps|actions?) to (?:obtain|gather)|instead of (?:browsing|searching)"
        ),
        "results or facts stated without the action (search, retrieval, run) that would "
        "produce them",
    ),
    ScopeRule(
        "not_verified",
        False,
        re.compile(r"verif|double-check|question the|fails to identify issues"),
        "did not verify or question a result",
    ),
    ScopeRule(
        "wrong_code",
        False,
        re.compile(
            r"\bcodes?\b|\bscripts?\b|with bugs|\bimport|pandas|algorithm|\bdfs\b|implementation"
        ),
        "wrong or failing code",
    ),
    ScopeRule(
        "wrong_plan_or_task",
        False,
        re.compile(
            r"\bplan\b|task description|irrelevant|unrelated|misunderst|direction|approach|"
            r"should (?:use|search|review|continue|not|have used)|more appropriate|\btools?\b|"
            r"step limit|present the problems|relevant link"
        ),
        "wrong plan, approach or tool choice; the task misread",
    ),
)
"""Fixed before measuring and kept: changing it changes what the figures mean."""

OTHER_BUCKET = "wrong_reasoning_or_fact"
"""Everything else: wrong facts, calculations, assumptions, misreadings (out of scope)."""

IN_SCOPE_BUCKETS = tuple(rule.bucket for rule in SCOPE_RULES if rule.in_scope)
BUCKETS = (*(rule.bucket for rule in SCOPE_RULES), OTHER_BUCKET)

_AGENT_NAME = re.compile(r"\b\w+_Expert\b")


def classify_reason(reason: str) -> str:
    """The bucket of a `mistake_reason`; agent names are blanked first (`Verification_Expert`
    must not read as "verify")."""
    text = _AGENT_NAME.sub("the agent", reason).lower()
    for rule in SCOPE_RULES:
        if rule.pattern.search(text):
            return rule.bucket
    return OTHER_BUCKET


def in_scope(bucket: str) -> bool:
    return bucket in IN_SCOPE_BUCKETS


# --- runs and turns --------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One Who&When run: the group chat and its label."""

    run_id: str
    question: str
    history: tuple[Mapping[str, Any], ...]
    mistake_agent: str
    mistake_step: int
    mistake_reason: str
    system_prompts: Mapping[str, str]

    @property
    def bucket(self) -> str:
        return classify_reason(self.mistake_reason)

    @property
    def labelled_index(self) -> int | None:
        """The history index of the reply that carries the mistake; None for the task
        message. A terminal step belongs to the expert message whose code it ran."""
        index = self.mistake_step
        while index > 0 and _name(self.history[index]) == TERMINAL:
            index -= 1
        return index or None


@dataclass(frozen=True)
class ReplyTurn:
    """One expert reply of a run as a turn, with where it stands against the label."""

    run: Run
    index: int
    turn: Turn
    position: Position


def run_from_record(run_id: str, record: Mapping[str, Any]) -> Run:
    """A run from one dataset file's JSON (`mistake_step` is stored as a string)."""
    prompts = record.get("system_prompt") or {}
    return Run(
        run_id=run_id,
        question=str(record.get("question") or ""),
        history=tuple(record["history"]),
        mistake_agent=str(record.get("mistake_agent") or ""),
        mistake_step=int(record["mistake_step"]),
        mistake_reason=str(record.get("mistake_reason") or ""),
        system_prompts={str(k): str(v) for k, v in prompts.items()},
    )


def load_runs(folder: Path | None = None) -> list[Run]:
    """Every run of the folder, in the order of their numbers."""
    folder = folder or datasets_dir() / WHO_AND_WHEN_DIR
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder} not found: put the shared datasets beside the checkout "
            "or set FACTLEDGER_DATASETS to their folder"
        )
    paths = sorted(folder.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    return [run_from_record(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def run_turns(run: Run) -> list[ReplyTurn]:
    """One turn per expert message with text after the task message, in history order."""
    history = run.history
    task = _content(history[0]) if history else ""
    calls = [*_executions(history), *_browser_calls(history)]
    surfers = {_name(history[at]) for at, call in calls if call.name != TOOL_NAME}
    labelled = run.labelled_index
    # The group chat's members, as AG2's GroupChat knows them: the experts and the terminal.
    participants = tuple(dict.fromkeys([*run.system_prompts, TERMINAL]))
    out: list[ReplyTurn] = []
    for index in range(1, len(history)):
        agent = _name(history[index])
        text = _content(history[index])
        if agent == TERMINAL or not _TERMINATE.sub("", text).strip():
            continue
        context = tuple(
            Message("assistant" if _name(m) == agent else "user", _content(m))
            for m in history[1:index]
            if _is_conversation(m)
        )
        tools = (EXECUTE_CODE, *BROWSER_TOOLS) if agent in surfers else (EXECUTE_CODE,)
        turn = Turn(
            reply="" if is_browser_page(text) else text,
            user_message=task,
            tool_calls=tuple(call for at, call in calls if at == index),
            tools=tools,
            context=context,
            history_tool_calls=tuple(call for at, call in sorted(calls) if at < index),
            system_prompt=run.system_prompts.get(agent, ""),
            model="who_and_when",
            turn_id=f"who_and_when/{run.run_id}/step{index:02d}",
            conversation_id=f"who_and_when/{run.run_id}",
            agent=agent,
            participants=participants,
        )
        out.append(ReplyTurn(run, index, turn, _position(index, run.mistake_step, labelled)))
    return out


def all_turns(runs: Iterable[Run]) -> list[ReplyTurn]:
    return [reply for run in runs for reply in run_turns(run)]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block, as AG2's code executor extracts them."""
    return [(lang or "", code) for lang, code in _CODE_BLOCK.findall(text)]


def is_browser_page(text: str) -> bool:
    """True when the message is a page of the web surfer's browser, not model text."""
    return _BROWSER_PAGE.match(text) is not None


def _is_conversation(message: Mapping[str, Any]) -> bool:
    text = _content(message)
    return _name(message) != TERMINAL and bool(text.strip()) and not is_browser_page(text)


def _executions(history: Sequence[Mapping[str, Any]]) -> list[tuple[int, ToolCall]]:
    """(index of the message whose code ran, the call) for every terminal execution."""
    out = []
    for index in range(len(history) - 1):
        answer = history[index + 1]
        blocks = code_blocks(_content(history[index]))
        if _name(history[index]) == TERMINAL or _name(answer) != TERMINAL or not blocks:
            continue
        exit_code = _EXIT_CODE.match(_content(answer))
        if exit_code is None:  # "There is no code … to execute": nothing ran
            continue
        first = blocks[0][0].lower()
        arguments = {
            "code": "\n\n".join(code for _, code in blocks),
            "language": first if first in LANGUAGES else "python",
        }
        call = _call(TOOL_NAME, f"exec_{index:02d}", arguments, _content(answer))
        out.append((index, dataclasses.replace(call, error=int(exit_code.group(1)) != 0)))
    return out


def _browser_calls(history: Sequence[Mapping[str, Any]]) -> list[tuple[int, ToolCall]]:
    """(index of the page message, the browser call that produced it)."""
    out = []
    for index, message in enumerate(history):
        page = _BROWSER_PAGE.match(_content(message))
        if page is None or index == 0:
            continue
        address = page.group("address").strip()
        name: str
        arguments: dict[str, str]
        if address.startswith("bing: "):
            name, arguments = "informational_web_search", {"query": address[len("bing: ") :]}
        elif int(page.group("page")) > 1:
            name, arguments = "page_down", {}
        else:
            name, arguments = "visit_page", {"url": address}
        out.append((index, _call(name, f"browse_{index:02d}", arguments, _content(message))))
    return out


def _call(name: str, call_id: str, arguments: dict[str, str], result: str) -> ToolCall:
    return ToolCall(
        name=name,
        call_id=call_id,
        arguments=arguments,
        arguments_text=json.dumps(arguments, ensure_ascii=False),
        result=result,
    )


def _position(index: int, mistake_step: int, labelled: int | None) -> Position:
    if index == labelled:
        return "mistake"
    return "clean" if index < mistake_step else "after"


def _name(message: Mapping[str, Any]) -> str:
    return str(message.get("name") or "")


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""
