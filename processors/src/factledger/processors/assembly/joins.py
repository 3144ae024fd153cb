"""Which per-call traces are one turn: the join keys of an LLM call, and the index of them.

Some instrumentations (OpenInference without an agent span, a web service whose every
request is a trace) write each LLM call of an agent loop as a trace of its own. A call
joins an earlier call's turn only on evidence that it continues that very call:

- History ("x"/"p" keys): its input holds the earlier call's input followed by the
  earlier call's own output (the assistant text or named tool calls), extended by tool
  results and no new user request. A call without output offers nothing to continue:
  the same system prompt and user message alone are two requests, not one. Responses
  API calls the earlier output named by their item ids and this input by their call ids
  (`ToolCallPart.item_id`) are the same calls: such a history is offered both ways. An
  output whose calls have no ids, and a history whose calls have ids but no names
  (LiteLLM's OTel callback records each call in these two halves), are offered with
  their calls counted rather than named.
- Tool call ids ("r"/"a" keys): it hands back results answering the earlier call's tool
  calls, by ids long enough to be unique (`MIN_JOIN_CALL_ID`).
- Conversation id ("c" key): the same conversation id and the same request (history up
  to the user message).
- Response id ("o" keys): it opens no request and continues, by the Responses API's
  `previous_response_id`, the very response the earlier call gave
  (`LlmStep.previous_response_id`, `LlmStep.response_id`), whatever its call ids.

Every key is scoped to the tenant and the service (`service.name` of the span's
resource), so calls of two services or tenants never join however alike they are. A key
joins only calls close in time (`JoinIndex.window_seconds`). A key offered within that
window by two groups (two sessions that sent and got the same words) is ambiguous and
joins nothing: identical content is no evidence of which session a call belongs to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from factledger.processors.assembly.turn_builder import (
    continues_turn,
    extend_fingerprints,
    last_user_index,
    prefix_fingerprints,
)
from factledger.processors.normalize.base import ChatMessage, LlmStep, ToolCallPart
from factledger.processors.normalize.values import is_response_id

JOIN_SLACK_SECONDS = 300.0
"""How much longer than the assembler's maximum wait two calls may lie apart and still be
joined. The maximum wait is how long one turn may run before it is judged; the slack
covers a tool that runs longer (a build, a test suite, a human approval of a few minutes)
and clock skew between the hosts of one service. Calls further apart are separate
requests, however alike (the same question asked again later, an evaluation prompt sent
again): the later call carries its own history and makes a turn by itself."""

MAX_JOIN_PREFIXES = 256
"""History lengths under which one LLM call is offered for joining with another."""

MIN_JOIN_CALL_ID = 12
"""Tool call ids shorter than this are not trusted to be unique across traces."""


@dataclass(frozen=True, init=False)
class JoinKeys:
    lookups: tuple[bytes, ...]
    """Keys under which an earlier call of the same turn would be registered, the most
    specific first."""
    registrations: tuple[bytes, ...]
    """Keys under which later calls of the same turn will look this call up."""
    identity: tuple[bytes, ...] = ()
    """The registrations that fingerprint the call's whole input and output: another
    group offering one of them holds a twin of this call, and then nothing tells which
    of the two sessions a later call continues (`JoinIndex.find`)."""

    # Spelled out so that mypyc compiles it (see processors/normalize/base.py).
    def __init__(
        self,
        lookups: tuple[bytes, ...],
        registrations: tuple[bytes, ...],
        identity: tuple[bytes, ...] = (),
    ) -> None:
        object.__setattr__(self, "lookups", lookups)
        object.__setattr__(self, "registrations", registrations)
        object.__setattr__(self, "identity", identity)


NO_JOIN = JoinKeys((), ())


@dataclass(frozen=True, init=False)
class CallTime:
    """When a call ran (span times, 0 when unknown) and when the assembler saw it."""

    start_ns: int
    end_ns: int
    seen: float

    # Spelled out so that mypyc compiles it (see processors/normalize/base.py).
    def __init__(
        self,
        start_ns: int,
        end_ns: int,
        seen: float,
    ) -> None:
        object.__setattr__(self, "start_ns", start_ns)
        object.__setattr__(self, "end_ns", end_ns)
        object.__setattr__(self, "seen", seen)


def join_keys(tenant: str, service: str, step: LlmStep, *, by_call_id: bool = True) -> JoinKeys:
    """The keys of one call. `by_call_id` False: register its call ids, look none up (a
    call of a trace already being assembled belongs there, whatever ids it repeats)."""
    seed = _digest(tenant.encode(), service.encode())
    by_call = _with_response_keys(seed, step, _call_id_keys(seed, step))
    if not by_call_id:
        by_call = JoinKeys((), by_call.registrations)
    messages = step.input_messages
    user = last_user_index(messages)
    if user < 0:
        return by_call  # no request to tie calls together: only tool call ids can
    prefix = prefix_fingerprints(messages, seed)
    if step.conversation_id:
        key = b"c" + _digest(step.conversation_id.encode(), prefix[user + 1])
        return JoinKeys((key, *by_call.lookups), (key, *by_call.registrations))
    # An earlier call's input and output, extended by tool results and not by a new user
    # request, is one of this call's prefixes after the user message ("x" keys). Calls can
    # arrive in either order, so each call also offers its prefixes ("p" keys) for an
    # earlier call that arrives later.
    lengths = range(len(messages), max(user + 1, len(messages) - MAX_JOIN_PREFIXES), -1)
    continued = _continued(prefix[-1], step)
    loose = _loosely_continued(prefix[-1], step)
    histories = [h for j in lengths for h in _histories(prefix, messages, j)]
    lookups = [b"x" + h for h in histories] + [b"p" + c for c in (*continued, *loose)]
    identity = tuple(b"x" + c for c in continued)
    registrations = [*identity, *(b"x" + c for c in loose), *(b"p" + h for h in histories)]
    return JoinKeys(
        (*lookups, *by_call.lookups), (*registrations, *by_call.registrations), identity
    )


def _histories(prefix: list[bytes], messages: Sequence[ChatMessage], j: int) -> list[bytes]:
    """Fingerprints of `messages[:j]` as an earlier call's input and output may have held
    them: as read, and, when the last holds Responses calls that name their item ids
    (`ToolCallPart.item_id`), with those calls named by their item ids, as the output of
    the call that made them names them."""
    last = messages[j - 1]
    if any(not p.name for p in last.tool_calls):
        return [prefix[j], _unnamed_calls_fingerprint(prefix[j - 1], last)]
    if not any(p.item_id for p in last.tool_calls):
        return [prefix[j]]
    calls = tuple(replace(p, call_id=p.item_id or p.call_id) for p in last.tool_calls)
    return [prefix[j], extend_fingerprints(prefix[j - 1], (replace(last, tool_calls=calls),))[-1]]


_UNNAMED_CALL = ToolCallPart(call_id="", name="")


def _unnamed_calls_fingerprint(start: bytes, message: ChatMessage) -> bytes:
    """`message` fingerprinted after `start` with its calls counted, not named: a writer
    that keeps a call's name and arguments in the output but not its id, and only its id
    (from the results answering it) in the next call's history (LiteLLM's OTel callback),
    records the same call in two halves that fingerprint alike only this way."""
    calls = tuple(_UNNAMED_CALL for _ in message.tool_calls)
    return extend_fingerprints(start, (replace(message, tool_calls=calls),))[-1]


def _continued(start: bytes, step: LlmStep) -> list[bytes]:
    """Fingerprints of the call's input followed by its output, as a later call's input
    would carry them; none when the output holds nothing a later call could repeat."""
    outputs = [m for m in step.output_messages if m.role == "assistant"]
    if not any(m.text.strip() or any(p.name or p.call_id for p in m.tool_calls) for m in outputs):
        return []
    continued = [extend_fingerprints(start, step.output_messages)[-1]]
    if len(outputs) > 1:
        # Split outputs (text, then tool calls) come back as one message in the next call.
        merged = replace(
            outputs[0],
            text="\n".join(m.text for m in outputs if m.text),
            tool_calls=tuple(p for m in outputs for p in m.tool_calls),
        )
        continued.append(extend_fingerprints(start, (merged,))[-1])
    return continued


def _loosely_continued(start: bytes, step: LlmStep) -> list[bytes]:
    """The call's input and output with its calls counted, not named, when some of them
    have no id: a later history may know them by their ids alone (`_histories`). Not an
    identity of the call: a twin of it in this form is only a lookup that joins nothing."""
    calls = tuple(p for m in step.output_messages if m.role == "assistant" for p in m.tool_calls)
    if not calls or all(p.call_id for p in calls):
        return []
    texts = [m.text for m in step.output_messages if m.role == "assistant" and m.text]
    merged = ChatMessage(role="assistant", text="\n".join(texts), tool_calls=calls)
    return [_unnamed_calls_fingerprint(start, merged)]


def _call_id_keys(seed: bytes, step: LlmStep) -> JoinKeys:
    """Keys that tie a continuation (`continues_turn`) to the call whose tool calls it
    answers: "r" keys name the calls a step requested, "a" keys the ones it answers.
    Each side registers its own and looks up the other, so either may arrive first."""
    requested = [
        p.call_id for m in step.output_messages for p in m.tool_calls if _joinable(p.call_id)
    ]
    answered = (
        [m.tool_call_id for m in step.input_messages if _joinable(m.tool_call_id)]
        if continues_turn(step)
        else []
    )
    if not requested and not answered:
        return NO_JOIN
    asked = [_digest(seed, c.encode()) for c in requested[:MAX_JOIN_PREFIXES]]
    handed = [_digest(seed, c.encode()) for c in answered[:MAX_JOIN_PREFIXES]]
    return JoinKeys(
        (*(b"a" + k for k in asked), *(b"r" + k for k in handed)),
        (*(b"r" + k for k in asked), *(b"a" + k for k in handed)),
    )


def _with_response_keys(seed: bytes, step: LlmStep, keys: JoinKeys) -> JoinKeys:
    """`keys` with the call's "o" keys first: its response id, offered to the calls that
    continue it, and the response it continues, looked up when it opens no request (a
    new request continuing a response is a turn of its own, its history read from that
    response's calls: `turn_builder.responses_chain`)."""
    lookups, registrations = keys.lookups, keys.registrations
    if is_response_id(step.response_id):
        registrations = (b"o" + _digest(seed, step.response_id.encode()), *registrations)
    if step.previous_response_id and continues_turn(step):
        lookups = (b"o" + _digest(seed, step.previous_response_id.encode()), *lookups)
    if lookups is keys.lookups and registrations is keys.registrations:
        return keys
    return JoinKeys(lookups, registrations, keys.identity)


def _joinable(call_id: str) -> bool:
    # Short ids ("call_0", "1") repeat across runs; generated ids are long and unique.
    return len(call_id) >= MIN_JOIN_CALL_ID


def _digest(*parts: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.digest()


_MAX_CLAIMANTS = 4
"""Groups one key remembers offering it; past that it stays ambiguous until it ages out."""


@dataclass(slots=True)
class _Entry:
    gids: tuple[int, ...]
    """The groups that offered the key within the window (more than one: ambiguous)."""
    start_ns: int
    end_ns: int
    seen: float
    crowded: bool = False
    """More groups offered it than `gids` holds."""

    @property
    def ambiguous(self) -> bool:
        return self.crowded or len(self.gids) > 1


class JoinIndex:
    """Join keys -> the group (by id) whose calls offered them, with when those calls ran.

    `find` answers the group a call continues: the one group that offered the most
    specific matching key within `window_seconds`; `register` offers a call's keys. Holds
    only keys of groups the caller keeps: the caller withdraws a group's keys when it
    forgets the group.
    """

    def __init__(self, window_seconds: float) -> None:
        self.window_seconds = window_seconds
        self._entries: dict[bytes, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, keys: JoinKeys, when: CallTime, current: int | None) -> int | None:
        """The group the call continues, or None. The first lookup key offered near
        `when` decides; one that two groups offered (ambiguous) joins nothing, and so does
        a call another group holds a twin of. Keys only the call's own group (`current`)
        offered are passed over."""
        for key in keys.identity:
            entry = self._entries.get(key)
            if entry is not None and entry.gids != (current,) and self._near(entry, when):
                return None
        for key in keys.lookups:
            entry = self._entries.get(key)
            if entry is None or entry.gids == (current,) or not self._near(entry, when):
                continue
            return None if entry.ambiguous else entry.gids[0]
        return None

    def register(self, keys: Iterable[bytes], gid: int, when: CallTime) -> None:
        for key in keys:
            entry = self._entries.get(key)
            if entry is None or not self._near(entry, when):
                self._entries[key] = _Entry((gid,), when.start_ns, when.end_ns, when.seen)
                continue
            if gid not in entry.gids:
                if len(entry.gids) < _MAX_CLAIMANTS:
                    entry.gids += (gid,)
                else:
                    entry.crowded = True
            entry.start_ns = _earliest(entry.start_ns, when.start_ns)
            entry.end_ns = max(entry.end_ns, when.end_ns)
            entry.seen = max(entry.seen, when.seen)

    def move(self, keys: Iterable[bytes], source: int, target: int) -> None:
        """Keys `source` offered now name `target` (the two groups were merged)."""
        for key in keys:
            entry = self._entries.get(key)
            if entry is not None and source in entry.gids:
                entry.gids = tuple(dict.fromkeys(target if g == source else g for g in entry.gids))

    def withdraw(self, keys: Iterable[bytes], gid: int) -> None:
        """Forget that `gid` offered these keys."""
        for key in keys:
            entry = self._entries.get(key)
            if entry is None or gid not in entry.gids:
                continue
            entry.gids = tuple(g for g in entry.gids if g != gid)
            if not entry.gids:
                del self._entries[key]

    def _near(self, entry: _Entry, when: CallTime) -> bool:
        if entry.end_ns and when.end_ns:
            start = when.start_ns or when.end_ns
            gap_ns = max(0, start - entry.end_ns, (entry.start_ns or entry.end_ns) - when.end_ns)
            return gap_ns <= self.window_seconds * 1e9
        # Without span times, when the calls reached the assembler is what is known.
        return abs(when.seen - entry.seen) <= self.window_seconds


def _earliest(a: int, b: int) -> int:
    return min(a, b) if a and b else a or b
