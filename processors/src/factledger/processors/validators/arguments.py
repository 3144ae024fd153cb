"""Invented inputs (class 4b): tool-call argument values that nothing in the turn supplied.

An argument is grounded when the conversation (the recent user and assistant messages,
every user message of the session, the system prompt) or an earlier tool result contains
it, as `processors.evidence.grounding` decides, or when the parameter's description pairs it with
a word the user gave ("1 for Bangkok"). The finding is for values that look up or act on
existing things (ids, recipients, paths read, accounts, order numbers). Not checked:

- values the schema fixes (defaults, booleans, the only member of an enum) and
  low-information numbers (0 and 1 unless an identifier, small paging knobs);
- prose the agent composes for any tool (a query, a command, code, a message, a comment);
- what a creating tool's new thing is titled, says and where it goes (`create_issue`'s
  title and body, `write_file`'s path): the agent's work, not an input nobody gave.
  References stay checked there too (the repo, the assignee, the recipient).

A guessed path the call found, or a guessed URL a reading call loaded, is exploration the
system confirmed; one that failed stays a finding.

An enum member of a required parameter is a choice the user must have implied: it is
grounded when the conversation or an earlier result names it (or a word sharing its stem,
or a word the parameter's description pairs with it), see `grounding.member_grounded`. A
parameter the call may leave out is grounded by omission: the request allowed the tool's
default, so the member set there refines it. Where the user wrote in another script than
the member's (a Chinese request, a Latin-script enum), token comparison cannot decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..evidence.grounding import (
    Grounds,
    described_value_grounded,
    different_script,
    member_grounded,
    value_grounded,
)
from ..evidence.outcomes import call_succeeded
from ..kinds import Kind
from ..model import Finding, ToolCall, Turn
from ..text import contains_token
from .base import finding
from .tool_calls import resolve_tool

_SMALL_NUMBER = 1
"""0 and 1 carry no information (flags, first page, one item); larger numbers are checked,
and so are 0 and 1 given as an identifier (`province_id=1`)."""
_SMALL_KNOB = 100
_KNOB = re.compile(
    r"^(?:n|k|top|count|size|level|depth)$|limit|page|offset|top_k|max_|min_|results|per_|"
    r"retries|timeout",
    re.I,
)
"""Paging and tuning parameters, where a small number is a choice, not an invented fact. A
count of things in the world (`participant_count`, `number_of_adults`) is no knob."""
_ID_PARAM = re.compile(r"(?:^|_)ids?$|Ids?$")
_COMPOSED_PARAM = re.compile(
    r"^(?:q|query|queries|search|search_query|search_string|keywords?|prompt|question|text|"
    r"message|body|content|command|cmd|code|script|sql|thought|thinking|reasoning|"
    r"comment|note|notes|reason|instructions?|input)$",
    re.I,
)
"""Prose the agent composes for any tool: a query, a command, code, a message or comment."""
_NAMING_PARAM = re.compile(
    r"(?:title|subject|summary|description|path|file|filename|dir|folder|directory|branch)$",
    re.I,
)
"""What a creating tool's new thing is titled, says and where it goes: the agent's own work
there, a lookup value elsewhere (the title of a video to check must be one somebody gave).
A bare name is not among them: it is how the user will find the thing again."""
_REFERENCE_PARAM = re.compile(
    r"(?:^|_)ids?$|Ids?$|e-?mail|recipient|^to$|^cc$|^bcc$|account|user|owner|customer|"
    r"order|assignee|repo|project|parent|phone|address|url|uri|base|source|target|from",
    re.I,
)
"""Parameters that point at something that exists (a recipient, an account, a parent):
never the agent's to author, even when the tool creates."""
_CREATE_VERBS = frozenset(
    [
        "create",
        "new",
        "add",
        "write",
        "post",
        "send",
        "compose",
        "draft",
        "publish",
        "save",
        "upload",
        "put",
        "make",
        "generate",
        "insert",
        "submit",
        "register",
        "record",
        "log",
        "reply",
        "commit",
        "append",
    ]
)
_LOOKUP_VERBS = frozenset(
    [
        "get",
        "read",
        "find",
        "lookup",
        "search",
        "list",
        "fetch",
        "check",
        "view",
        "show",
        "query",
        "retrieve",
        "load",
        "browse",
    ]
)
"""Verbs of a tool that only reads: its choice of scope asks, it changes nothing."""
_OTHER_VERBS = _LOOKUP_VERBS | frozenset(
    [
        "visit",
        "open",
        "update",
        "edit",
        "modify",
        "set",
        "cancel",
        "delete",
        "remove",
        "return",
        "exchange",
        "book",
        "reserve",
        "play",
        "calculate",
        "convert",
        "verify",
        "validate",
        "download",
    ]
)
"""Verbs of tools that read or act on existing things (a tool's first known verb, of
these or of the creating ones, decides whether it creates)."""
_LIVE_SCOPE = frozenset(["production", "prod", "live", "latest", "current", "main", "master"])
"""Members that name the live or current scope: the running environment, the newest
version, the default branch. A question about the state of things that names no scope
asks about that one ("is the deploy stuck?" reads production)."""
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PATH_PARAM = re.compile(r"path|file|dir|folder|directory", re.I)
_PATH_VALUE = re.compile(r"^[\w.\-~/]*/[\w.\-~/]*$")
_URL_VALUE = re.compile(r"^https?://", re.I)
_FREE_TEXT_CHARS = 100
_FREE_TEXT_WORDS = 6
_MAX_LEAVES = 64


class ArgumentGroundingValidator:
    name = "arguments"
    version = "1.2"
    kinds = frozenset({Kind.UNGROUNDED_TOOL_ARGUMENT})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if not any(c.arguments for c in turn.tool_calls):
            return ()
        # A call's own result often echoes its inputs ({"city": "Paris", ...}); only what
        # the agent knew before the call can ground an argument: what the turn itself names
        # (every user message, not only the recent window, and the team's roster), earlier
        # turns' results, and the results of this turn's earlier calls.
        known = turn.named_lower + "\n" + turn.history_results_text.lower()
        before = Grounds(known)
        user_words = "\n".join((*turn.user_history, turn.user_message))
        definitions = {t.name: t for t in turn.tools or ()}
        out: list[Finding] = []
        earlier_results: list[str] = []
        for call in turn.tool_calls:
            if call.arguments and not call.answer:  # an answer call's input is the reply
                seen = known + "\n" + "\n".join(earlier_results).lower()
                earlier = Grounds(seen[len(known) :])
                definition = resolve_tool(call.name, definitions)
                parameters = definition.parameters if definition else {}
                properties = definition.properties if definition else {}
                creates = _creates(call.name, definition.description if definition else "")
                for path, value in _leaves(call.arguments):
                    schema = _leaf_schema(properties, path)
                    if _in_enum(value, schema):
                        required = _leaf_required(parameters, path)
                        if _open_choice(value, schema, required, user_words):
                            continue
                        if str(value).lower() in _LIVE_SCOPE and _looks_up(
                            call.name, definition.description if definition else ""
                        ):
                            continue
                        members = schema["enum"]
                        if member_grounded(value, members, before) or member_grounded(
                            value, members, earlier
                        ):
                            continue
                        if described_value_grounded(value, _description(properties, path), before):
                            continue
                        out.append(_finding(self, call, path, value))
                        continue
                    if _not_checked(path, value, schema, creates):
                        continue
                    if isinstance(value, str) and contains_token(seen, value.lower()):
                        continue  # verbatim: the common case, settled without normalising
                    if value_grounded(value, before) or value_grounded(value, earlier):
                        continue
                    if described_value_grounded(value, _description(properties, path), before):
                        continue
                    if _confirmed(path, value, call, creates):
                        continue
                    out.append(_finding(self, call, path, value))
            if call.result is not None:
                earlier_results.append(call.result)
        return out


def _finding(
    validator: ArgumentGroundingValidator, call: ToolCall, path: str, value: str | int | float
) -> Finding:
    shown = str(value)[:120]
    return finding(
        validator,
        Kind.UNGROUNDED_TOOL_ARGUMENT,
        f"`{call.name}` argument {path}={shown!r} appears nowhere in the conversation or "
        "in earlier tool results",
        token=f"{path}={shown}",
        checked_note="conversation, tool results",
        call_id=call.call_id or None,
    )


def _leaves(arguments: Mapping[str, Any]) -> Iterator[tuple[str, str | int | float]]:
    """(path, value) for every string and number in the arguments, bounded in count."""
    stack: list[tuple[str, Any]] = list(arguments.items())[::-1]
    emitted = 0
    while stack and emitted < _MAX_LEAVES:
        path, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend([(f"{path}.{k}", v) for k, v in value.items()][::-1])
        elif isinstance(value, list):
            stack.extend([(f"{path}[{i}]", v) for i, v in enumerate(value)][::-1])
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float | str):
            emitted += 1
            yield path, value


_SEGMENT = re.compile(r"\[\d+\]|\.?([^.\[]+)")


def _leaf_schema(properties: Mapping[str, Any], path: str) -> Any:
    """The schema of the value at `path` (`body.modes[0]`), as far as the schema says."""
    schema: Any = {"properties": properties}
    for m in _SEGMENT.finditer(path):
        if not isinstance(schema, Mapping):
            return None
        if m.group(1) is None:
            schema = schema.get("items")
        else:
            props = schema.get("properties")
            schema = props.get(m.group(1)) if isinstance(props, Mapping) else None
    return schema


def _leaf_required(parameters: Mapping[str, Any], path: str) -> bool:
    """Must the call give the value at `path`? Each named segment must be in its parent
    object's `required` list; a list's items are as required as the list."""
    schema: Any = parameters
    for m in _SEGMENT.finditer(path):
        if not isinstance(schema, Mapping):
            return False
        if m.group(1) is None:
            schema = schema.get("items")
            continue
        required = schema.get("required")
        if not isinstance(required, list) or m.group(1) not in required:
            return False
        props = schema.get("properties")
        schema = props.get(m.group(1)) if isinstance(props, Mapping) else None
    return True


def _description(properties: Mapping[str, Any], path: str) -> str:
    """The description of the top-level parameter `path` belongs to."""
    schema = properties.get(path.split(".", 1)[0].split("[", 1)[0])
    text = schema.get("description") if isinstance(schema, Mapping) else None
    return text if isinstance(text, str) else ""


def _param(path: str) -> str:
    """The parameter a leaf belongs to: the last named segment of its path."""
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


def _creates(name: str, description: str) -> bool:
    """Does the tool make something new (a file, a message, a ticket)? The first verb of
    its name decides (`gh_put_file`, `send_email` vs `find_movies`, `update_order`), else
    the first verb of its description ("Creates a ..." vs "Retrieve ...")."""
    return _first_verb(name, description) in _CREATE_VERBS


def _looks_up(name: str, description: str) -> bool:
    """Does the tool only read (`get_deploy_status`, `find_events`, "Retrieves ...")?"""
    return _first_verb(name, description) in _LOOKUP_VERBS


def _first_verb(name: str, description: str) -> str:
    """The first known verb of the tool's name, else of its description ("" if none)."""
    for text in (name, description[:200]):
        for word in _WORD.findall(text):
            verb = str(word).lower()
            for form in (verb, verb.rstrip("s")):
                if form in _CREATE_VERBS or form in _OTHER_VERBS:
                    return form
    return ""


def _not_checked(path: str, value: str | int | float, schema: Any, creates: bool) -> bool:
    """Values nobody invents: fixed by the schema, paging knobs, or the agent's own work."""
    if _fixed_by_schema(value, schema):
        return True
    name = _param(path)
    if isinstance(value, int | float):
        if _ID_PARAM.search(name):
            return False  # an identifier is a lookup, whatever its size
        return abs(value) <= _SMALL_NUMBER or (
            abs(value) <= _SMALL_KNOB and _KNOB.search(name) is not None
        )
    # Prose the agent composed (a query, a command, a message) is not an input it could
    # have been given verbatim; nor is what a creating tool's new thing is called or says.
    if _COMPOSED_PARAM.search(name):
        return True
    if creates and _NAMING_PARAM.search(name) and not _REFERENCE_PARAM.search(name):
        return True
    return len(value) > _FREE_TEXT_CHARS or len(value.split()) > _FREE_TEXT_WORDS


def _confirmed(path: str, value: str | int | float, call: ToolCall, creates: bool) -> bool:
    """A guessed path the call found, or a guessed URL a reading call loaded, is
    exploration the system confirmed, not an invented input; one that failed (no such
    file, a 404) stays a finding."""
    if not isinstance(value, str) or not call_succeeded(call):
        return False
    if _URL_VALUE.match(value):
        return not creates  # a webhook or link a creating call stores is not confirmed
    return _PATH_PARAM.search(_param(path)) is not None or _PATH_VALUE.search(value) is not None


def _in_enum(value: str | int | float, schema: Any) -> bool:
    enum = schema.get("enum") if isinstance(schema, Mapping) else None
    return isinstance(enum, list) and (value in enum or str(value) in map(str, enum))


_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no"})


def _open_choice(
    value: str | int | float, schema: Mapping[str, Any], required: bool, user: str
) -> bool:
    """An enum member that is no choice the user had to imply: the default, the only
    member, a boolean spelled as a string, or a member of a parameter the call may leave
    out (left out, the tool does its default; set, the member refines the request, which
    need not have spelled it out). Nor is it decidable when the user wrote in another
    script than the member's ("官网" for `website`): that is a translation."""
    members = schema.get("enum") or []
    return (
        _fixed_by_schema(value, schema)
        or len(members) <= 1
        or not required
        or str(value).lower() in _BOOLEAN_WORDS
        or different_script(str(value), user)
    )


def _fixed_by_schema(value: str | int | float, schema: Any) -> bool:
    """The schema's default: the value the tool takes when nobody says otherwise."""
    if not isinstance(schema, Mapping):
        return False
    default = schema.get("default")
    return default is not None and str(default).lower() == str(value).lower()
