"""Build one `Turn` from the normalized spans of that turn (pure: no clock, no state).

The latest LLM call of a turn carries its history: the user request, the tool calls and
the tool results. So the turn is read from that call's input messages plus its output,
as an OpenAI-style transcript, by `transcript.read_transcript`; tool execution and
agent spans then enrich it where they exist (their results and error status win).

An LLM call that ends in tool calls is a step of a turn, not a turn. The reply is the
text of the turn's last LLM output (`final_step`), tool calls beside it or not; a turn
whose last output is tool calls alone (a step limit, a final hand-off) has no reply and
is stored with an empty one, unless its agent span says what the user got in words no
step wrote. A last call that recorded no output at all (its content went to OTel logs
that never came) takes the agent span's output as the reply, and a turn whose calls
recorded no request takes the agent span's input as it. An earlier step's text is never
the reply. `split_turns` partitions the LLM
calls of one trace (or of a chain of per-call traces) into turns, one per user request.

Not every framework records the history. A call whose input opens no request (only tool
results, or nothing: OpenAI Responses with a previous response id, Claude Agent SDK
through LangSmith) continues the turn of the call before it; the transcript is then
stitched from the last call that carries the request plus every later call's new tool
results and output. Tool calls without ids (Gemini) get made-up ids, and tool results
without ids answer them in order. A history call known by its id alone is the call of
the earlier output it repeats, known by its name alone (`_calls_named_by_outputs`). A turn
without any recorded LLM call is read from its agent span: from the conversation the
span's result holds (a Haystack Agent's), else from its request and reply alone.

A request that continues an earlier response by the Responses API's
`previous_response_id` (the Microsoft Agent Framework's sessions) was sent none of the
conversation before it: the calls of the chain it continues (`TurnSpans.earlier`, found
by the assembler by response id, whatever trace they were in) stand for that history, and
the chain's first response id names the conversation of all its turns.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from json.encoder import encode_basestring
from typing import Any

from factledger.processors.assembly.transcript import TranscriptTurn, read_transcript
from factledger.processors.evidence.answer_tools import delivered_answer, with_answer_calls
from factledger.processors.evidence.call_reach import call_kind
from factledger.processors.evidence.prose_calls import parse_arguments
from factledger.processors.model import ToolCall, ToolDefinition, Turn
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    ToolCallPart,
    ToolExecution,
)
from factledger.processors.normalize.values import is_response_id
from factledger.processors.nudges import is_framework_nudge, without_guard_calls

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass(frozen=True, init=False)
class TurnSpans:
    """The normalized spans of one turn, with the ids only the assembler knows.

    `steps` and `tools` may come in any order (they are ordered by time here).
    `trace_id` is the trace of the turn's first step (the agent's without steps).
    `inner_agents` are the agent spans inside `agent`'s subtree (sub-agents, or the agents
    a run span wraps), in any order.
    """

    steps: tuple[LlmStep, ...] = ()
    tools: tuple[ToolExecution, ...] = ()
    agent: AgentInvocation | None = None
    tenant: str = "default"
    trace_id: str = ""
    service: str = ""
    inner_agents: tuple[AgentInvocation, ...] = ()
    peer_agents: tuple[AgentInvocation, ...] = ()
    """The other outermost agent spans of the turn's trace: agents of the same run that
    are turns of their own (each speaker of an AutoGen group chat)."""
    earlier: tuple[LlmStep, ...] = ()
    """The calls of the conversation before the turn's request, oldest first, when that
    request continues an earlier response (`LlmStep.previous_response_id`): each call's
    input holds only what followed the call before it, so together they are the history
    the request's own input leaves out (`responses_chain`)."""

    # Spelled out so that mypyc compiles it (see processors/normalize/base.py).
    def __init__(
        self,
        steps: tuple[LlmStep, ...] = (),
        tools: tuple[ToolExecution, ...] = (),
        agent: AgentInvocation | None = None,
        tenant: str = "default",
        trace_id: str = "",
        service: str = "",
        inner_agents: tuple[AgentInvocation, ...] = (),
        peer_agents: tuple[AgentInvocation, ...] = (),
        earlier: tuple[LlmStep, ...] = (),
    ) -> None:
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "agent", agent)
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "trace_id", trace_id)
        object.__setattr__(self, "service", service)
        object.__setattr__(self, "inner_agents", inner_agents)
        object.__setattr__(self, "peer_agents", peer_agents)
        object.__setattr__(self, "earlier", earlier)


# --- which calls form a turn -----------------------------------------------------------


def last_user_index(messages: Sequence[ChatMessage]) -> int:
    """Index of the last user message that is not a framework nudge, or -1."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "user" and not is_framework_nudge(m.text):
            return i
    return -1


def prefix_fingerprints(messages: Iterable[ChatMessage], seed: bytes = b"") -> list[bytes]:
    """`result[j]` fingerprints `messages[:j]` by (role, text, tool call ids and names).

    Two calls whose fingerprints agree at some length share that prefix of history:
    that is how a later call is recognised as the continuation of an earlier one.
    """
    return extend_fingerprints(hashlib.blake2b(seed, digest_size=16).digest(), messages)


def extend_fingerprints(start: bytes, messages: Iterable[ChatMessage]) -> list[bytes]:
    """Like `prefix_fingerprints`, continuing from the fingerprint `start` (`result[0]`)."""
    current = start
    out = [current]
    for m in messages:
        # One buffer hashed at once: the digest of a stream is that of its concatenation.
        data = b"".join(
            (
                current,
                m.role.encode(),
                b"\x00",
                m.text.strip().encode("utf-8", "surrogatepass"),
                b"\x00",
                "\x1f".join(f"{p.call_id}\x1e{p.name}" for p in m.tool_calls).encode(),
                b"\x00",
                m.tool_call_id.encode(),
            )
        )
        current = hashlib.blake2b(data, digest_size=16).digest()
        out.append(current)
    return out


def turn_head(step: LlmStep) -> bytes:
    """The fingerprint of a call's history up to and including its user request: calls
    with the same head answer the same request."""
    messages = step.input_messages
    return prefix_fingerprints(messages[: last_user_index(messages) + 1])[-1]


def ends_in_tool_calls(step: LlmStep) -> bool:
    return any(m.tool_calls for m in step.output_messages if m.role == "assistant")


def continues_turn(step: LlmStep) -> bool:
    """True for a call whose input opens no request: only tool results and assistant
    output, or nothing at all. Such a call continues the turn of the call before it."""
    return all(m.role in ("assistant", "tool") for m in step.input_messages)


def _effective_heads(steps: Iterable[LlmStep]) -> dict[int, bytes]:
    """Each call's turn head, keyed by `id(step)`. A continuation takes the head of the
    call that requested a tool result it hands back, else of the latest call that
    started before it (the first call of all keeps its own)."""
    heads: dict[int, bytes] = {}
    requested_by: dict[str, bytes] = {}
    previous: bytes | None = None
    for step in sorted(steps, key=lambda s: s.start_time_unix_nano):
        head: bytes | None = None
        if continues_turn(step):
            answered = (
                m.tool_call_id for m in step.input_messages if m.role == "tool" and m.tool_call_id
            )
            head = next((requested_by[c] for c in answered if c in requested_by), previous)
        if head is None:
            head = turn_head(step)
        heads[id(step)] = head
        for m in step.output_messages:
            for part in m.tool_calls:
                if part.call_id:
                    requested_by.setdefault(part.call_id, head)
        previous = head
    return heads


def _by_time(steps: Iterable[LlmStep]) -> list[LlmStep]:
    # Stable: steps without times keep the order they were given in.
    return sorted(steps, key=lambda s: (s.end_time_unix_nano, s.start_time_unix_nano))


def main_thread(steps: Sequence[LlmStep]) -> tuple[LlmStep, ...]:
    """The calls of the turn's own conversation, by end time.

    Side calls inside an agent (a sub-agent, a title generator) answer another request;
    the main conversation is the one of the call with the longest history (continuations
    count with the call they continue).
    """
    ordered = _by_time(steps)
    if not ordered:
        return ()
    heads = _effective_heads(ordered)
    openers = [s for s in ordered if not continues_turn(s)] or ordered
    longest = max(reversed(openers), key=lambda s: len(s.input_messages))
    head = heads[id(longest)]
    return tuple(s for s in ordered if heads[id(s)] == head)


def final_step(steps: Sequence[LlmStep]) -> LlmStep | None:
    """The turn's last call (of its own conversation): the text of its output is the
    reply, and when it wrote none the turn has no reply. Never an earlier call, whose text
    was a step on the way (the user was not answered with it)."""
    thread = main_thread(steps)
    return thread[-1] if thread else None


def output_text(step: LlmStep) -> str:
    """The assistant text of a call's output ("" when it only called tools)."""
    return "\n".join(m.text for m in step.output_messages if m.role == "assistant" and m.text)


def awaits_tools(steps: Sequence[LlmStep]) -> bool:
    """True while the turn's latest call ended in tool calls: the agent loop goes on."""
    thread = main_thread(steps)
    return bool(thread) and ends_in_tool_calls(thread[-1])


def split_turns(
    steps: Sequence[LlmStep], tools: Sequence[ToolExecution] = ()
) -> list[tuple[tuple[LlmStep, ...], tuple[ToolExecution, ...]]]:
    """Partition calls into turns at each new user request, in order of first call.

    A call that opens no request (`continues_turn`) goes with the call it continues.
    A tool execution goes to the turn whose calls mention its call id, else to the turn
    of the latest call that started before it (the first turn when none did).
    """
    heads = _effective_heads(steps)
    groups: dict[bytes, list[LlmStep]] = {}
    for step in sorted(steps, key=lambda s: s.start_time_unix_nano):
        groups.setdefault(heads[id(step)], []).append(step)
    turns = [tuple(g) for g in groups.values()]
    if not turns:
        return []
    owners: dict[str, int] = {}
    for i, group in enumerate(turns):
        for call_id in _mentioned_call_ids(group):
            owners.setdefault(call_id, i)
    assigned: list[list[ToolExecution]] = [[] for _ in turns]
    for tool in sorted(tools, key=lambda t: t.start_time_unix_nano):
        index = owners.get(tool.call_id) if tool.call_id else None
        if index is None:
            index = _turn_started_before(turns, tool.start_time_unix_nano)
        assigned[index].append(tool)
    return [(group, tuple(a)) for group, a in zip(turns, assigned, strict=True)]


def _mentioned_call_ids(steps: Iterable[LlmStep]) -> set[str]:
    ids: set[str] = set()
    for step in steps:
        for m in (*step.input_messages, *step.output_messages):
            ids.update(p.call_id for p in m.tool_calls if p.call_id)
            if m.tool_call_id:
                ids.add(m.tool_call_id)
    return ids


def _turn_started_before(turns: Sequence[tuple[LlmStep, ...]], start: int) -> int:
    best, best_start = 0, -1
    for i, group in enumerate(turns):
        for step in group:
            if best_start < step.start_time_unix_nano <= start:
                best, best_start = i, step.start_time_unix_nano
    return best


def turn_id_for(tenant: str, trace_id: str, user_index: int, user_text: str) -> str:
    """The turn's stable id: the same turn gets the same id on replay or restart."""
    # The text of `json.dumps([tenant, trace_id, user_index, user_text], ensure_ascii=False)`,
    # written without building an encoder for each turn.
    key = (
        f"[{encode_basestring(tenant)}, {encode_basestring(trace_id)}, {user_index},"
        f" {encode_basestring(user_text)}]"
    )
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# --- building the turn ---------------------------------------------------------------------


def build_turn(spans: TurnSpans) -> Turn:
    """The `Turn` of these spans. Needs an LLM step or an agent span (ValueError without).

    May raise `TranscriptError` when the messages do not form a readable conversation.
    """
    thread = main_thread(spans.steps)
    final = thread[-1] if thread else None  # final_step(spans.steps), from the same thread
    agent = spans.agent
    anonymous: frozenset[str] = frozenset()
    if final is not None and agent is not None and _request_only_in_run(thread, agent):
        # The run's model calls recorded no input (Mastra's `chat` spans), but its agent
        # span holds the request with its history: each call added its output to it.
        user_index = last_user_index(agent.messages)
        recorded = agent.messages[: user_index + 1]
        messages = [m for m in map(_openai_message, recorded) if m is not None]
        messages.extend(_output_message(step) for step in thread)
        anonymous = _name_anonymous_calls(messages)
        user_text = recorded[user_index].text
    elif final is not None:
        request, messages = _stitched_messages(thread, final)
        if spans.earlier and not holds_history(request):
            messages = _with_history(messages, spans.earlier)
        answer = delivered_answer(final, spans.tools, agent)
        if answer is not None:
            # The run ended in its answer tool: the answer, not the step's text, is the reply.
            messages.append({"role": "assistant", "content": answer})
        elif ends_in_tool_calls(final) and not output_text(final).strip():
            # Tool calls and nothing after them: no reply, judged as an empty one.
            messages.append({"role": "assistant", "content": _agent_reply(agent, thread)})
        elif not final.output_messages and agent is not None and agent.output_text.strip():
            # The last call recorded no output at all (its content was sent elsewhere, or
            # not at all: Semantic Kernel writes it to OTel logs): the agent span's
            # output is what the user got, in place of the empty output message.
            if messages and messages[-1].get("role") == "assistant":
                messages.pop()
            messages.append({"role": "assistant", "content": agent.output_text})
        anonymous = _name_anonymous_calls(messages)
        user_index = last_user_index(request.input_messages)
        user_text = request.input_messages[user_index].text if user_index >= 0 else ""
        if user_index < 0 and agent is not None and agent.input_text:
            # No call recorded the request: the agent span's input is it.
            messages.insert(_after_system(messages), {"role": "user", "content": agent.input_text})
            user_index, user_text = 0, agent.input_text
    elif agent is not None and agent.messages:
        # No LLM call of the run was recorded, but its result holds the conversation.
        recorded = agent.messages
        messages = [m for m in map(_openai_message, recorded) if m is not None]
        if not messages or messages[-1]["role"] != "assistant" or messages[-1].get("tool_calls"):
            messages.append({"role": "assistant", "content": ""})  # it ended without a reply
        anonymous = _name_anonymous_calls(messages)
        user_index = last_user_index(recorded)
        user_text = recorded[user_index].text if user_index >= 0 else ""
    elif agent is not None:
        messages = [{"role": "user", "content": agent.input_text}] if agent.input_text else []
        messages.append({"role": "assistant", "content": agent.output_text})
        user_index = 0 if agent.input_text else -1
        user_text = agent.input_text
    else:
        raise ValueError("a turn needs an LLM step or an agent span")

    conversation_id = _chain_conversation(spans.earlier, thread) or _first(
        s.conversation_id for s in (final, *thread) if s is not None
    )
    if not conversation_id and agent is not None:
        conversation_id = agent.conversation_id
    read = read_transcript(
        {"messages": messages},
        turn_id=turn_id_for(spans.tenant, spans.trace_id, user_index, user_text),
        conversation_id=conversation_id,
    )
    ordered = _by_time(spans.steps)
    calls = _calls_from_outputs(read, ordered, thread)
    calls = _with_executions(calls, spans.tools, thread, len(read.steps), anonymous)
    own_calls = without_guard_calls(_framework_written(calls, spans.steps))
    agent_name = (
        _agent_name(agent, spans.inner_agents, _first_started(spans.steps))
        or _first(s.agent_name for s in reversed(ordered))
        or read.agent
    )
    named = _named_speakers(messages)
    return Turn(
        reply=read.reply,
        user_message=read.user_message,
        tool_calls=with_answer_calls(own_calls, read.reply, len(read.steps) - 1),
        tools=_with_agent_tools(_tools(final, ordered, agent), (agent, *spans.inner_agents)),
        context=read.context,
        history_tool_calls=with_answer_calls(without_guard_calls(read.history_tool_calls), "", -1),
        user_history=read.user_history,
        steps=read.steps,
        system_prompt=read.system_prompt,
        model=_first(s.model for s in (final, *reversed(ordered)) if s is not None)
        or (agent.model if agent is not None else ""),
        provider=_first(s.provider for s in (final, *reversed(ordered)) if s is not None),
        tenant=spans.tenant,
        trace_id=spans.trace_id,
        turn_id=read.turn_id,
        conversation_id=read.conversation_id,
        service=spans.service,
        agent=agent_name,
        participants=participants(
            agent_name,
            named=named,
            ran_beside=_agents_beside(agent, spans),
            calls=(*own_calls, *read.history_tool_calls),
        ),
        speakers=tuple(dict.fromkeys(named)),
        reply_span_id=final.span_id if final is not None else (agent.span_id if agent else ""),
        response_id=final.response_id if final is not None else "",
    )


# --- who speaks in the turn's conversation ----------------------------------------------

MIN_NAMED_OTHERS = 2
"""Names on the messages, besides the turn's agent's, that make a group: one alone may be
the person the agent talks to (AutoGen names the task's sender "user")."""
_HANDOFF_PREFIX = re.compile(r"\A(?:transfer|handoff|hand_off|delegate|route)(?:_to)?_")


def participants(
    agent: str, *, named: Iterable[str], ran_beside: Iterable[str], calls: Iterable[ToolCall]
) -> tuple[str, ...]:
    """The agents that speak in the turn's conversation, the turn's agent first, or ()
    when it has no one to hand over to (see docs/validators.md, stall).

    `named`: the speakers the messages name; `ran_beside`: agents of the same run (other
    agent spans). An agent the session reached through a call (a tool named for it, a
    handoff `transfer_to_<agent>`, a delegation whose arguments name it) answers its lead
    and is no speaker, nor is the turn's agent itself."""
    if not agent:
        return ()
    reached = _reached_agents(calls)
    own = _function_name(agent)

    def others(names: Iterable[str]) -> list[str]:
        keep = (n for n in names if _function_name(n) not in reached and _function_name(n) != own)
        return list(dict.fromkeys(keep))

    beside = others(ran_beside)
    speakers = others(named)
    if beside or len(speakers) >= MIN_NAMED_OTHERS:
        return (agent, *dict.fromkeys((*beside, *speakers)))
    return ()


def _reached_agents(calls: Iterable[ToolCall]) -> frozenset[str]:
    """Function-name forms of the agents the calls reached: the tool's name (an agent
    offered as a tool), its handoff target, the string arguments of a delegation."""
    out: set[str] = set()
    for call in calls:
        name = _function_name(call.name)
        out.add(name)
        target = _HANDOFF_PREFIX.sub("", name)
        if target != name:
            out.add(target)
            out.update(_function_name(v) for v in call.arguments.values() if isinstance(v, str))
        elif call_kind(call, None) == "delegation":
            out.update(
                _function_name(v)
                for v in call.arguments.values()
                if isinstance(v, str) and len(v) <= MAX_AGENT_NAME_CHARS
            )
    return frozenset(out)


MAX_AGENT_NAME_CHARS = 120
"""A delegation's argument longer than this is its task, not the name of an agent."""


def _named_speakers(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The `name`s on the user and assistant messages the turn's model was given."""
    return [
        m["name"]
        for m in messages[:-1]
        if m.get("role") in ("user", "assistant") and isinstance(m.get("name"), str) and m["name"]
    ]


def _agents_beside(agent: AgentInvocation | None, spans: TurnSpans) -> list[str]:
    """Agents of the same run as the turn's: the other outermost agent spans of its trace,
    and the agents inside a run span that wraps the turn."""
    beside = [a.agent_name for a in spans.peer_agents if not a.wrapper]
    if agent is not None and agent.wrapper:
        beside.extend(a.agent_name for a in spans.inner_agents if not a.wrapper)
    return [name for name in beside if name]


def _agent_name(
    agent: AgentInvocation | None, inner: Sequence[AgentInvocation], first: LlmStep | None
) -> str:
    """The turn's agent: the name of its agent span. When that span only wraps the run (a
    workflow or trace span, named for the run), the agent the request reached names the
    turn: the agent span inside it that was running at the turn's first step (the
    innermost), else the first that started, else the wrapper. An agent that handed the
    conversation over (a handoff, a triage agent) stays the turn's agent: the user talked
    to it, whichever agent wrote the reply."""
    if agent is None or not agent.wrapper:
        return agent.agent_name if agent is not None else ""
    named = sorted(
        (a for a in inner if a.agent_name and not a.wrapper),
        key=lambda a: a.start_time_unix_nano,
    )
    at = first.start_time_unix_nano if first is not None else 0
    running = [
        a for a in named if at and a.start_time_unix_nano <= at <= (a.end_time_unix_nano or at)
    ]
    chosen = running[-1:] or named[:1]
    return chosen[0].agent_name if chosen else agent.agent_name


def _first_started(steps: Sequence[LlmStep]) -> LlmStep | None:
    """The turn's first step: where the request reached an agent. Not the first of the
    main thread alone: an agent that writes its own system prompt into the messages
    (LlamaIndex's AgentWorkflow) hands off into a thread of another head."""
    return min(steps, key=lambda s: s.start_time_unix_nano, default=None)


def _after_system(messages: Sequence[dict[str, Any]]) -> int:
    """Where a user message goes in front of a transcript: after its system messages."""
    index = 0
    while index < len(messages) and messages[index].get("role") in ("system", "developer"):
        index += 1
    return index


def _agent_reply(agent: AgentInvocation | None, thread: Sequence[LlmStep]) -> str:
    """What the agent span says the user got, when the loop ended in tool calls (a
    `final_answer` tool, a framework's stop message). Not when it is the text of one of
    the turn's steps: some frameworks record the last text the model wrote as the agent's
    output, and that step's text was no answer."""
    text = agent.output_text if agent is not None else ""
    if not text.strip():
        return ""
    written = {output_text(s).strip() for s in thread}
    return "" if text.strip() in written else text


def _request_only_in_run(thread: Sequence[LlmStep], agent: AgentInvocation) -> bool:
    """No call of the thread recorded its input, and the agent's run recorded a request."""
    return not any(s.input_messages for s in thread) and last_user_index(agent.messages) >= 0


def _stitched_messages(
    thread: Sequence[LlmStep], final: LlmStep
) -> tuple[LlmStep, list[dict[str, Any]]]:
    """The call that carries the turn's request, and the transcript up to `final`: that
    call's input and output, then each continuation's new tool results and output."""
    position = next((i for i, s in enumerate(thread) if s is final), None)
    if position is None or not continues_turn(final):
        return final, _transcript_messages(_calls_named_by_outputs(final, thread))
    start = next((i for i in range(position, -1, -1) if not continues_turn(thread[i])), position)
    request = thread[start]
    messages = _transcript_messages(_calls_named_by_outputs(request, thread))
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    for step in thread[start + 1 : position + 1]:
        for m in step.input_messages:
            if m.role == "tool" and (not m.tool_call_id or m.tool_call_id not in answered):
                answered.add(m.tool_call_id)
                messages.append(_tool_message(m))
        messages.append(_output_message(step))
    return request, messages


def _calls_named_by_outputs(step: LlmStep, thread: Sequence[LlmStep]) -> LlmStep:
    """`step` with the calls of its history that are known by id alone named after the
    calls they are: those of an earlier call of the thread whose output they repeat.

    A writer may record a call in two halves: its name and arguments, without an id, in
    the output of the call that made it, and its id alone (from the results answering it)
    in the next call's history (LiteLLM's OTel callback). The history repeats the earlier
    call's input, so the earlier output is the message at the length of that input;
    its calls, in order, are the message's calls when they are as many."""
    messages = list(step.input_messages)
    changed = False
    for earlier in thread:
        at = len(earlier.input_messages)
        if earlier is step or at >= len(messages):
            continue
        held = messages[at]
        made = [p for m in earlier.output_messages if m.role == "assistant" for p in m.tool_calls]
        if (
            held.role != "assistant"
            or not held.tool_calls
            or any(p.name for p in held.tool_calls)
            or len(made) != len(held.tool_calls)
            or any(p.call_id for p in made)
        ):
            continue
        calls = tuple(
            replace(part, call_id=known.call_id)
            for known, part in zip(held.tool_calls, made, strict=True)
        )
        messages[at] = replace(held, tool_calls=calls)
        changed = True
    return replace(step, input_messages=tuple(messages)) if changed else step


# --- Responses API chains -----------------------------------------------------------------

MAX_CHAIN_CALLS = 256
"""Earlier calls one turn's history is read back from, the latest first."""


def responses_chain(
    previous_response_id: str,
    call_of: Callable[[str], LlmStep | None],
    own: Iterable[LlmStep] = (),
) -> tuple[LlmStep, ...]:
    """The calls a request continuing `previous_response_id` builds on, oldest first:
    the call that gave that response, the call its own previous response id names, and so
    on (`call_of`: response id -> the call that gave it, None when unknown). Stops at a
    call it has seen, one of `own` (the turn's own calls), or after `MAX_CHAIN_CALLS`."""
    seen = {id(s) for s in own}
    chain: list[LlmStep] = []
    current = previous_response_id
    while current and len(chain) < MAX_CHAIN_CALLS:
        step = call_of(current)
        if step is None or id(step) in seen:
            break
        seen.add(id(step))
        chain.append(step)
        current = step.previous_response_id
    chain.reverse()
    return tuple(chain)


def continuable(step: LlmStep) -> bool:
    """Whether a later request may continue the call by its response id and read the
    conversation from it: a Responses API response, given to a call that was sent no
    history of its own (a call that was is no link of a `previous_response_id` chain)."""
    return is_response_id(step.response_id) and not holds_history(step)


def holds_history(step: LlmStep) -> bool:
    """Whether the call was sent the conversation before its user request (then its input
    is the history, and an earlier response adds nothing). A call without a request (tool
    results alone) holds none."""
    messages = step.input_messages
    user = last_user_index(messages)
    return user > 0 and any(m.role not in ("system", "developer") for m in messages[:user])


def _with_history(
    messages: list[dict[str, Any]], earlier: Sequence[LlmStep]
) -> list[dict[str, Any]]:
    """The turn's transcript with the earlier calls' inputs and outputs before its own
    messages (after its system prompt): the conversation the provider kept for it."""
    head = 0
    while head < len(messages) and messages[head]["role"] in ("system", "developer"):
        head += 1
    history: list[dict[str, Any]] = []
    for step in earlier:
        history.extend(
            m
            for m in map(_openai_message, step.input_messages)
            if m is not None and m["role"] not in ("system", "developer")
        )
        history.append(_output_message(step))
    return [*messages[:head], *history, *messages[head:]]


def _chain_conversation(earlier: Sequence[LlmStep], thread: Sequence[LlmStep]) -> str:
    """The id that names a Responses API chain for all its turns: the response id of its
    first call ("" when the turn is no such chain). The ids the calls record as their
    conversation (`LlmStep.previous_response_id`) change with every call."""
    if earlier:
        return earlier[0].response_id
    if any(s.previous_response_id for s in thread):
        return _first(s.response_id for s in thread)
    return ""


def _transcript_messages(step: LlmStep) -> list[dict[str, Any]]:
    messages = [m for m in map(_openai_message, step.input_messages) if m is not None]
    instructions = step.system_instructions
    if instructions and not any(
        m.role in ("system", "developer") and m.text == instructions for m in step.input_messages
    ):
        messages.insert(0, {"role": "system", "content": instructions})
    messages.append(_output_message(step))
    return messages


def _output_message(step: LlmStep) -> dict[str, Any]:
    outputs = [m for m in step.output_messages if m.role == "assistant"]
    # Some conventions split one answer into a text message and a tool-call message.
    return _assistant_message(
        "\n".join(m.text for m in outputs if m.text),
        _first(m.name for m in outputs),
        [p for m in outputs for p in m.tool_calls],
    )


ANONYMOUS_CALL_PREFIX = "unidentified-call-"
"""Made-up ids of tool calls the source recorded without one (`unidentified-call-1`, ...)."""


def _name_anonymous_calls(messages: list[dict[str, Any]]) -> frozenset[str]:
    """Give id-less tool calls made-up ids, and id-less tool results the id of the oldest
    id-less call not yet answered (Gemini answers its function calls in order). Edits the
    message dicts in place; returns the made-up ids."""
    made: list[str] = []
    waiting: list[str] = []
    for message in messages:
        if message["role"] == "assistant":
            for call in message.get("tool_calls", ()):
                if not call["id"]:
                    call["id"] = f"{ANONYMOUS_CALL_PREFIX}{len(made) + 1}"
                    made.append(call["id"])
                    waiting.append(call["id"])
        elif message["role"] == "tool" and not message["tool_call_id"] and waiting:
            message["tool_call_id"] = waiting.pop(0)
    return frozenset(made)


def _openai_message(m: ChatMessage) -> dict[str, Any] | None:
    if m.role not in _ROLES:
        return None
    if m.role == "assistant":
        return _assistant_message(m.text, m.name, m.tool_calls)
    if m.role == "tool":
        return _tool_message(m)
    out: dict[str, Any] = {"role": m.role, "content": m.text}
    if m.name and m.role == "user":
        out["name"] = m.name
    return out


def _assistant_message(text: str, name: str, parts: Iterable[ToolCallPart]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if name:
        out["name"] = name
    calls = [_openai_call(p) for p in parts if p.name]
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_message(m: ChatMessage) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": m.tool_call_id,
        "content": m.text,
        "is_error": m.is_error,
    }


def _openai_call(part: ToolCallPart) -> dict[str, Any]:
    return {
        "id": part.call_id,
        "type": "function",
        "function": {"name": part.name, "arguments": part.arguments},
    }


def _calls_from_outputs(
    turn: TranscriptTurn, ordered: Sequence[LlmStep], thread: Sequence[LlmStep]
) -> list[ToolCall]:
    """The transcript's calls, plus calls that other calls of the turn requested but the
    final call's history does not carry (side calls, or a framework that trims history)."""
    calls = list(turn.tool_calls)
    known = {c.call_id for c in calls if c.call_id}
    known.update(c.call_id for c in turn.history_tool_calls if c.call_id)
    results = {
        m.tool_call_id: m
        for s in ordered
        for m in s.input_messages
        if m.role == "tool" and m.tool_call_id
    }
    # A Responses call an output named by its item id, that a later history names by its
    # call id (`ToolCallPart.item_id`), is that call.
    call_ids = {
        p.item_id: p.call_id
        for s in ordered
        for m in s.input_messages
        for p in m.tool_calls
        if p.item_id
    }
    positions = {id(s): i for i, s in enumerate(thread)}
    for step in ordered:
        index = min(positions.get(id(step), len(turn.steps)), len(turn.steps))
        for m in step.output_messages:
            for part in m.tool_calls:
                call_id = call_ids.get(part.call_id, part.call_id)
                if not part.name or not call_id or call_id in known:
                    continue
                known.add(call_id)
                arguments, text = parse_arguments(part.arguments)
                result = results.get(call_id)
                calls.append(
                    ToolCall(
                        name=part.name,
                        call_id=call_id,
                        arguments=arguments,
                        arguments_text=text,
                        result=None if result is None else result.text,
                        error=False if result is None else result.is_error,
                        step=index,
                    )
                )
    return calls


def _with_executions(
    calls: list[ToolCall],
    executions: Sequence[ToolExecution],
    thread: Sequence[LlmStep],
    reply_step: int,
    anonymous: frozenset[str] = frozenset(),
) -> list[ToolCall]:
    """Tool execution spans are the system's record: their result and error status win.

    Matched by call id, else by name in order (a call with the same arguments first);
    an execution no message mentions becomes a call of its own. A call whose id was
    made up (`anonymous`) takes the execution's id.
    """
    pending = sorted(executions, key=lambda e: e.start_time_unix_nano)
    matched: dict[int, ToolExecution] = {}
    by_id = {c.call_id: i for i, c in enumerate(calls) if c.call_id and c.origin == "structured"}
    rest: list[ToolExecution] = []
    for execution in pending:
        index = by_id.get(execution.call_id) if execution.call_id else None
        if index is not None and index not in matched:
            matched[index] = execution
        else:
            rest.append(execution)
    unmatched: list[ToolExecution] = []
    for execution in rest:
        candidates = [
            i
            for i, c in enumerate(calls)
            if i not in matched and c.origin == "structured" and _same_tool(c.name, execution.name)
        ]
        if not candidates:
            unmatched.append(execution)
            continue
        # Parallel calls of one tool may run in any order: the arguments tell them apart.
        arguments = parse_arguments(execution.arguments)[0]
        same = [i for i in candidates if arguments and calls[i].arguments == arguments]
        matched[(same or candidates)[0]] = execution
    out = [
        _enriched(c, matched[i], c.call_id in anonymous) if i in matched else c
        for i, c in enumerate(calls)
    ]
    for execution in unmatched:
        arguments, text = parse_arguments(execution.arguments)
        out.append(
            ToolCall(
                name=execution.name,
                call_id=execution.call_id,
                arguments=arguments,
                arguments_text=text,
                result=execution.result,
                error=execution.error,
                span_id=execution.span_id,
                step=_requesting_step(execution, thread, reply_step),
            )
        )
    return sorted(out, key=lambda c: c.step)


def _same_tool(called: str, executed: str) -> bool:
    """The call and the execution name the same tool: equal, or equal once written as a
    function name (a framework that offers its tool "Delegate work to coworker" to the
    model as `delegate_work_to_coworker`, as CrewAI does, names its span the first way)."""
    return called == executed or _function_name(called) == _function_name(executed)


_NOT_NAME_CHARS = re.compile(r"[^0-9a-z]+")


def _function_name(name: str) -> str:
    return _NOT_NAME_CHARS.sub("_", name.casefold()).strip("_")


def _framework_written(calls: list[ToolCall], steps: Sequence[LlmStep]) -> list[ToolCall]:
    """Mark the calls the framework wrote into the history itself (`origin="framework"`):
    a call of the transcript to a tool no LLM call of the turn was offered, that no LLM
    output of the turn requested (by id or by name) and no tool span ran, such as
    langgraph-supervisor's hand-back to the lead. Only when every LLM call of the turn
    recorded its output and its offered tools, so the call is not merely one whose
    request went unrecorded."""
    if not steps or any(not s.output_messages or s.tools is None for s in steps):
        return calls
    parts = [p for s in steps for m in s.output_messages for p in m.tool_calls]
    ids = {p.call_id for p in parts if p.call_id}
    names = {p.name for p in parts} | {t.name for s in steps for t in s.tools or ()}
    return [
        replace(c, origin="framework")
        if c.origin == "structured"
        and c.call_id
        and c.span_id is None
        and c.call_id not in ids
        and c.name not in names
        else c
        for c in calls
    ]


def _enriched(call: ToolCall, execution: ToolExecution, made_up_id: bool) -> ToolCall:
    arguments, text = call.arguments, call.arguments_text
    if not arguments and not text and execution.arguments:
        arguments, text = parse_arguments(execution.arguments)
    return replace(
        call,
        call_id=execution.call_id if made_up_id and execution.call_id else call.call_id,
        arguments=arguments,
        arguments_text=text,
        result=execution.result if execution.result is not None else call.result,
        # A failure either source recorded stands.
        error=execution.error or call.error,
        span_id=execution.span_id,
    )


def _requesting_step(execution: ToolExecution, thread: Sequence[LlmStep], reply_step: int) -> int:
    if not execution.start_time_unix_nano:
        return reply_step  # when it ran is unknown: after every step we know of
    before = sum(1 for s in thread if s.end_time_unix_nano <= execution.start_time_unix_nano)
    return max(0, min(before - 1, reply_step))


def _tools(
    final: LlmStep | None, ordered: Sequence[LlmStep], agent: AgentInvocation | None
) -> tuple[ToolDefinition, ...] | None:
    """The tools offered in the turn: the latest offer, plus what its other calls were
    offered. A sub-agent run as a tool makes calls that count as the turn's own, and when
    it is handed the request's very text its calls are not told apart from the turn's."""
    own = next(
        (s.tools for s in (final, *reversed(ordered)) if s is not None and s.tools is not None),
        agent.tools if agent is not None else None,
    )
    others = [s.tools for s in ordered if s is not final and s.tools is not None]
    if own is None or not others:
        return own
    merged = {t.name: t for offer in others for t in offer}
    merged.update((t.name, t) for t in own)
    return tuple(merged.values())


def _with_agent_tools(
    offered: tuple[ToolDefinition, ...] | None, agents: Iterable[AgentInvocation | None]
) -> tuple[ToolDefinition, ...] | None:
    """The offer, plus the tools the turn's agent spans name that its LLM spans left out
    (smolagents records a team member, called like a tool, in no `llm.tools`, and a
    `CodeAgent`'s tools, functions in its prompt, nowhere but its run span). A sub-agent's
    calls count as the turn's own, so its tools do too. Unknown stays unknown (None)."""
    if offered is None:
        return None
    merged = {t.name: t for t in offered}
    for agent in agents:
        for tool in agent.tools or () if agent is not None else ():
            merged.setdefault(tool.name, tool)
    return offered if len(merged) == len(offered) else tuple(merged.values())


def _first(values: Iterable[str]) -> str:
    return next((v for v in values if v), "")
