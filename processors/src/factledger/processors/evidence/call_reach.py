"""What a call did, read from the call itself when its name cannot say.

A named tool (`gh_put_file`, `send_email`) says what it does, and the claim rules map
its name to capabilities. Three kinds of call are open-ended: their name says nothing of
the work, their record does.

- A delegation hands a task to another agent: a handoff (`transfer_to_billing`), CrewAI's
  `delegate_work_to_coworker`, an agent offered as a tool (`Agent.as_tool`, a smolagents
  team member, an AutoGen `AgentTool`). Its record is the task text and the agent's answer.
- An executor runs code or a command: `execute_code`, `python_interpreter`, `terminal`,
  `bash`, a code interpreter, or any call handed a `code`/`command`/`script` argument.
  Its record is the code and its output.
- A browser searches or reads the web: `web_search`, `visit_page`, `page_down`. Its
  record is the query or address and the page.

`Reach` holds one call's record, lower-cased and bounded, and answers whether it relates
to a claim: a capability keyword or the claim's verb stem occurs in it ("git push" in
the code backs "pushed"), an object word of the claim is in the call's name or in the
query or address a browser was handed ("initiated the search" after `web_search`), or two
object words are in the task or arguments it was handed, or in what it answered
("generated search URLs" after code that printed "Search URL: …"). Object words are
the content words of the claim's clause, within its sentence. A claim that nothing in
any call's name, arguments or result relates to stays unbacked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from factledger.processors.model import ToolCall, ToolDefinition

CallKind = Literal["delegation", "executor", "browser", "named"]

MAX_RECORD_CHARS = 20_000
"""Characters of a call's arguments and of its result that are read (each)."""
OBJECT_WORDS = 8
"""Content words after the claim's verb, in its clause, that stand for what it acted on."""

_EXECUTOR = re.compile(
    r"(?:^|[_.\-])(?:exec|execute|execution|run_code|run_python|python|interpreter|"
    r"terminal|shell|bash|sh|zsh|powershell|console|repl|jupyter|notebook|computer|"
    r"code|cmd|command|sandbox)(?:$|[_.\-])"
)
_DELEGATION = re.compile(
    r"transfer_to|handoff|hand_off|delegate|coworker|co_worker|sub_?agent|agent|assistant|"
    r"expert|worker|specialist|team"
)
_DELEGATION_DESCRIPTION = re.compile(
    r"\b(?:agent|coworker|co-worker|assistant|expert|team member|hand ?off|delegate\w*)\b",
    re.IGNORECASE,
)
_BROWSER = re.compile(
    r"search|brows|visit|page_down|page_up|navigate|open_url|fetch_url|read_url|web|scrape|"
    r"crawl|click|wiki|google|bing"
)
_WORDS_OF = re.compile(r"[a-z]+").findall
_CODE_KEYS = frozenset({"code", "command", "cmd", "script", "source", "commands"})
_WORD = re.compile(r"[a-z][a-z'-]*")
# Words too common in any record to say what a call acted on.
_GENERIC = frozenset(
    _WORDS_OF(
        """
        the and with from into onto for this that these those them they their there then than
        have been being were was are will would should could also only just each every some
        many more most other such very well both all any via using used use based data file
        files code result results output outputs information info value values list lists item
        items step steps task tasks thing things line lines text content number numbers time
        times way ways part parts need needs necessary required following above below here now
        new successfully correctly properly accordingly
        """
    )
)


@dataclass(frozen=True)
class Reach:
    """One open-ended call's record, lower-cased: what it was named, handed and answered."""

    kind: CallKind
    name: str
    """The name, words apart (`informational_web_search` → "informational web search")."""
    handed: str
    """The name and the non-code arguments: the task, query or address it was given."""
    result: str
    """What it answered: the output, the page, the agent's reply."""
    record: str
    """Everything: name, arguments (code included) and result."""

    def relates(self, keywords: Iterable[str], objects: Iterable[str]) -> bool:
        """Whether this call's record relates to a claim with these keywords
        (`record_keywords`) and object words (see the module docstring)."""
        if any(_has_word(self.record, k) for k in keywords):
            return True
        objects = tuple(objects)
        if any(_has_word(self.name, w) for w in objects):
            return True
        if self.kind == "browser" and any(_has_word(self.handed, w) for w in objects):
            return True
        return any(
            len({w for w in objects if _has_word(text, w)}) >= 2
            for text in (self.handed, self.result)
        )


# Capability keywords that name tools well but are everywhere in code and pages.
_COMMON_IN_CODE = frozenset(
    _WORDS_OF(
        """
        open file make post test start init apply return order entry record place book exec
        shell bash python script command terminal pipeline trigger invoke launch job config
        change move replace reset read list text print new add set put run log
        """
    )
)


def record_keywords(tools: Iterable[str], verb: str) -> tuple[str, ...]:
    """The capability keywords worth looking for in a record (see `_COMMON_IN_CODE`),
    with the claim verb's stem."""
    keywords = [k for k in tools if len(k) >= 4 and k not in _COMMON_IN_CODE]
    stem = verb_stem(verb)
    if stem and stem not in _COMMON_IN_CODE:
        keywords.append(stem)
    return tuple(dict.fromkeys(keywords))


def call_kind(call: ToolCall, tools: Iterable[ToolDefinition] | None) -> CallKind:
    """Which kind of call this is (see the module docstring)."""
    if _CODE_KEYS.intersection(k.lower() for k in call.arguments):
        return "executor"
    by_name, otherwise = _kinds_by_name(call.name)
    if by_name is not None:
        return by_name
    description = next((t.description for t in tools or () if t.name == call.name), "")
    if description and _DELEGATION_DESCRIPTION.search(description):
        return "delegation"
    return otherwise


@lru_cache(maxsize=4096)
def _kinds_by_name(name: str) -> tuple[CallKind | None, CallKind]:
    """What the name alone says: the kind it decides before the tool's description is
    read (or None), and the kind when the description does not say delegation either.
    Memoised: a turn asks several times per call, and tool names repeat across turns."""
    lower = name.lower()
    if _EXECUTOR.search(lower):
        return "executor", "executor"
    if _DELEGATION.search(lower):
        return "delegation", "delegation"
    return None, "browser" if _BROWSER.search(lower) else "named"


def reach(call: ToolCall, tools: Iterable[ToolDefinition] | None) -> Reach | None:
    """The record of an open-ended call; None for a named tool."""
    kind = call_kind(call, tools)
    if kind == "named":
        return None
    name = call.name.lower().replace("_", " ").replace(".", " ")
    handed = [name]
    everything = [name]
    for key, value in call.arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        text = text[:MAX_RECORD_CHARS].lower()
        everything.append(text)
        if str(key).lower() not in _CODE_KEYS:
            handed.append(text)
    if not call.arguments and call.arguments_text:
        everything.append(call.arguments_text[:MAX_RECORD_CHARS].lower())
    result = (call.result or "")[:MAX_RECORD_CHARS].lower()
    everything.append(result)
    return Reach(kind, name, "\n".join(handed), result, "\n".join(everything))


def verb_stem(verb: str) -> str:
    """ "generated" → "generat", "pushed" → "push": enough to find "generate", "git push"."""
    word = verb.lower().split()[0] if verb.strip() else ""
    for suffix in ("ied", "ed", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word if len(word) >= 5 else ""


def object_words(clause: str) -> tuple[str, ...]:
    """Content words of the clause after a claim's verb ("search URLs for academic
    repositories" → search, url, academic, repositories), plural s dropped."""
    out: list[str] = []
    for word in _WORD.findall(clause.lower()):
        word = word.strip("'-")
        if len(word) < 3 or word in _GENERIC:
            continue
        if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        if word not in out:
            out.append(word)
        if len(out) >= OBJECT_WORDS:
            break
    return tuple(out)


def _has_word(text: str, word: str) -> bool:
    """`word` starts a word of `text` (a keyword of three letters or fewer must be the
    whole word: "rm", "add", "pr" are everywhere as parts of words)."""
    start = text.find(word)
    while start != -1:
        before = text[start - 1] if start > 0 else " "
        end = start + len(word)
        after = text[end] if end < len(text) else " "
        if not before.isalpha() and (len(word) > 3 or not after.isalpha()):
            return True
        start = text.find(word, start + 1)
    return False
