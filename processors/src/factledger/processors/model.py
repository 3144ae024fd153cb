"""The immutable domain model: a turn, its messages and tool calls, findings and verdicts.

A turn is one user request and everything the agent did until its final reply. Every
validator reads a `Turn` and returns `Finding`s; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast

from .guard_activity import UNGUARDED, GuardActivity
from .identifiers import Identifier, extract_identifiers, short_shas
from .kinds import KIND_INFO, HallucinationClass, Kind, Outcome, Severity
from .lazy import lazy_property
from .text import lowered

Role = Literal["system", "user", "assistant", "tool"]
CallOrigin = Literal["structured", "prose", "framework"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_View = TypeVar("_View")


def _derived(owner: Any, view: Callable[[Any], _View]) -> _View:
    # Kept in the instance's own dict, as lazy_property keeps its values: a frozen
    # dataclass allows that, and the views go when the object goes.
    views: dict[Callable[[Any], Any], Any] | None = owner.__dict__.get("_views")
    if views is None:
        views = owner.__dict__["_views"] = {}
    if view not in views:
        views[view] = view(owner)
    return cast("_View", views[view])


def _fields_only(owner: Any) -> dict[str, Any]:
    return {f.name: getattr(owner, f.name) for f in fields(owner)}


@dataclass(frozen=True)
class Message:
    """One conversation message as the model saw it (text only)."""

    role: Role
    content: str
    is_framework_nudge: bool = False


@dataclass(frozen=True)
class ToolDefinition:
    """A tool offered to the model: its name and JSON schema for the arguments."""

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, Mapping) else _EMPTY

    @property
    def required(self) -> tuple[str, ...]:
        req = self.parameters.get("required")
        if not isinstance(req, list):
            return ()
        return tuple(r for r in req if isinstance(r, str))


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model requested, with what the system recorded for it.

    `result` is None when no result was recorded (the call never ran, or its result was
    not captured). `error` is the explicit error mark of the source (span status ERROR,
    `is_error`); payload-level errors are recognised by `processors.evidence.outcomes`.
    `origin="prose"` marks a call the model only wrote out as text: it never ran.
    `origin="framework"` marks a call the framework wrote into the history itself (no
    model requested it, no tool ran it: langgraph-supervisor's hand-back to the lead).
    `answer` marks a call that delivered the reply (a terminal answer tool such as
    smolagents' `final_answer`, see `processors.evidence.answer_tools`): it is the reply, so it is
    neither evidence for it nor an action of the turn.
    """

    name: str
    call_id: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    arguments_text: str = ""
    result: str | None = None
    error: bool = False
    origin: CallOrigin = "structured"
    span_id: str | None = None
    step: int = 0
    """Index of the LLM step (assistant message) of the turn that requested the call."""
    answer: bool = False

    def __getstate__(self) -> dict[str, Any]:
        return _fields_only(self)

    def derived(self, view: Callable[[ToolCall], _View]) -> _View:
        """`view(self)`, computed once per call and kept with it (see `Turn.derived`): a
        call's outcome is asked by every validator and by the evidence rows."""
        return _derived(self, view)


@dataclass(frozen=True)
class Turn:
    """One user request and everything the agent did until its final reply.

    `context` holds the recent conversation before the turn (user and assistant text,
    framework nudges excluded). `history_tool_calls` are tool calls of earlier turns of
    the same conversation: the system's record of what already ran in the session.
    `steps` are the texts of the turn's LLM outputs before the reply, one per step ("" when
    a step only called tools); a call's `step` indexes it, and `len(steps)` is the reply's.
    `tools` is None when the offered tools are unknown (not the same as none offered).
    `user_history` holds every user message of the conversation before the turn's request,
    beyond `context`'s window too (nudges excluded): a value the user gave once stays
    given, so it grounds a later call's argument.
    """

    reply: str
    user_message: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tools: tuple[ToolDefinition, ...] | None = None
    context: tuple[Message, ...] = ()
    history_tool_calls: tuple[ToolCall, ...] = ()
    user_history: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    system_prompt: str = ""
    model: str = ""
    provider: str = ""
    tenant: str = "default"
    trace_id: str = ""
    turn_id: str = ""
    conversation_id: str = ""
    service: str = ""
    agent: str = ""
    participants: tuple[str, ...] = ()
    """Agents that speak in the turn's conversation, when the source names them (a group
    chat's members, the `name` of chat messages): empty when unknown or when the agent
    talks with the user alone. Agents the turn only called as tools are not among them."""
    speakers: tuple[str, ...] = ()
    """Every name the conversation's messages carry (a group chat's members, the agents a
    lead also calls as tools): who is on the team, whether or not it speaks in this turn."""
    reply_span_id: str = ""
    """The span that produced the reply: the turn's last LLM call (its agent span when no
    call was recorded); "" when unknown. Exported verdicts are parented to it."""
    response_id: str = ""
    """That call's `gen_ai.response.id`, "" when the agent recorded none."""
    guard: GuardActivity = UNGUARDED
    """What the in-loop guard did in the turn, read from its spans
    (`processors.guard_activity`); not evidence, no validator reads it."""

    # Derived views, computed once per turn and shared by every validator.
    # lazy_property stores into __dict__ directly, so it works on a frozen dataclass.

    def __getstate__(self) -> dict[str, Any]:
        # A turn crosses a process boundary on its way to verification: its fields only,
        # not the derived views (they would double its size and are cheap to recompute).
        return _fields_only(self)

    def derived(self, view: Callable[[Turn], _View]) -> _View:
        """`view(self)`, computed once per turn and kept with it, like the views below: for
        a view that lives beside the code reading it (a validator's, the evidence rows'),
        which this module cannot import. `view` is a module-level function of the turn
        alone; validation and row shaping then share one result."""
        return _derived(self, view)

    @lazy_property
    def reply_lower(self) -> str:
        """The reply lower-cased with offsets kept: validators scan this without re.I,
        which is several times faster on long replies."""
        return lowered(self.reply)

    @lazy_property
    def reply_identifiers(self) -> tuple[Identifier, ...]:
        """Identifier-shaped tokens of the reply (see `processors.identifiers`)."""
        return tuple(extract_identifiers(self.reply))

    @lazy_property
    def reply_short_shas(self) -> tuple[Identifier, ...]:
        """The reply's short SHAs outside its identifiers (`identifiers.short_shas`); whether
        one names a commit is for its reader to decide."""
        return tuple(short_shas(self.reply, self.reply_identifiers))

    @lazy_property
    def offered_tool_names(self) -> frozenset[str] | None:
        if self.tools is None:
            return None
        return frozenset(t.name for t in self.tools)

    @lazy_property
    def executed_calls(self) -> tuple[ToolCall, ...]:
        """Structured calls of this turn (requested by the model, whether or not they ran),
        without the call that delivered the reply (`ToolCall.answer`)."""
        return tuple(c for c in self.tool_calls if c.origin == "structured" and not c.answer)

    @lazy_property
    def tool_results_text(self) -> str:
        """Every tool result of this turn, joined (the turn's tool trace). An answer call's
        result is the reply echoed back, not evidence for it."""
        return "\n".join(c.result for c in self.tool_calls if c.result is not None and not c.answer)

    @lazy_property
    def history_results_text(self) -> str:
        return "\n".join(
            c.result for c in self.history_tool_calls if c.result is not None and not c.answer
        )

    @lazy_property
    def evidence_lower(self) -> str:
        """Lower-cased tool results of the turn and of earlier turns: the system's record."""
        return (self.tool_results_text + "\n" + self.history_results_text).lower()

    @lazy_property
    def conversation_text(self) -> str:
        """The user's request, the recent conversation and the system prompt."""
        parts = [m.content for m in self.context if not m.is_framework_nudge]
        parts.append(self.user_message)
        parts.append(self.system_prompt)
        return "\n".join(parts)

    @lazy_property
    def conversation_lower(self) -> str:
        return self.conversation_text.lower()

    @lazy_property
    def roster(self) -> frozenset[str]:
        """The names the turn gives its own actors: the offered tools, the agent, the
        participants of its conversation and the tools the system recorded calls of. A
        plan that names the team's helpers (`WebSurfer`, `Coder`) names what exists."""
        recorded = (
            c.name for c in (*self.history_tool_calls, *self.tool_calls) if c.origin != "prose"
        )
        names = (*(self.offered_tool_names or ()), self.agent, *self.participants, *recorded)
        return frozenset(n for n in names if n)

    @lazy_property
    def roster_lower(self) -> str:
        return "\n".join(sorted(self.roster)).lower()

    @lazy_property
    def given_lower(self) -> str:
        """What others gave the agent, lower-cased: the user's messages (also those beyond
        the context window), the system prompt and the turn's roster (what the system
        offered and who takes part), without the assistant's own words."""
        parts = [
            m.content for m in self.context if m.role != "assistant" and not m.is_framework_nudge
        ]
        parts.extend(self.user_history)
        parts.append(self.user_message)
        parts.append(self.system_prompt)
        parts.append(self.roster_lower)
        return "\n".join(parts).lower()

    @lazy_property
    def named_lower(self) -> str:
        """What the turn itself names, lower-cased: what others gave the agent
        (`given_lower`) and the assistant's own earlier words. A name found here is no
        invention of the reply; the tool results (`evidence_lower`) are a separate, stronger
        record."""
        return self.given_lower + "\n" + self.said_lower

    @lazy_property
    def said_lower(self) -> str:
        """The assistant's own earlier words in the conversation, lower-cased."""
        return "\n".join(m.content for m in self.context if m.role == "assistant").lower()


@dataclass(frozen=True)
class TextRange:
    """Character offsets [start, end) in the reply."""

    start: int
    end: int


@dataclass(frozen=True)
class ResultToken:
    """A token as a tool result of the turn shows it, and the call that returned it: the
    real identifier a finding was compared with (`Finding.real`)."""

    token: str
    tool: str
    call_id: str = ""


@dataclass(frozen=True)
class Finding:
    """One thing in a turn that its tool trace does not back.

    `token` is the offending text (identifier, sentence, tool name); `checked_against`
    names the tools it was compared with, and `checked_note` says in words what else it
    was compared with, or why with no tool ("no tool results", "the turn's plan text").
    `score` is set for class-5 suspicions (0..1). `real` holds what the tools did return
    that the token was compared with: a fabricated identifier's nearest real one, or the
    names of a class-5 set that a tool result shows.
    """

    kind: Kind
    message: str
    severity: Severity | None = None
    token: str = ""
    checked_against: tuple[str, ...] = ()
    span: TextRange | None = None
    validator: str = ""
    score: float | None = None
    call_id: str | None = None
    checked_note: str | None = None
    real: tuple[ResultToken, ...] = ()

    @property
    def hallucination_class(self) -> HallucinationClass | Literal["-"]:
        return KIND_INFO[self.kind].hallucination_class

    @property
    def effective_severity(self) -> Severity:
        return self.severity or KIND_INFO[self.kind].default_severity


@dataclass(frozen=True)
class Verdict:
    """The outcome of validating one turn, with the validator versions that made it."""

    outcome: Outcome
    findings: tuple[Finding, ...] = ()
    validators: tuple[str, ...] = field(default=())

    @property
    def kinds(self) -> tuple[str, ...]:
        """Distinct finding kinds in first-seen order."""
        return tuple(dict.fromkeys(f.kind.value for f in self.findings))
