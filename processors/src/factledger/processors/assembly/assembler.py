"""TurnAssembler: spans in, complete turns out.

Spans are grouped by trace. A group is judged when its root has ended (the agent span,
or for agent-less traces the latest LLM call, which must not end in tool calls) and no
span arrived for `grace_seconds`, or when it is older than `max_wait_seconds`. At that
point it is cut into turns: the subtree of each outermost agent span is one turn; LLM
calls outside any agent are split at each new user request (`turn_builder.split_turns`).
The reply is the text of a turn's last LLM output; a turn whose last output is tool calls
alone (judged at the maximum wait, or once its agent span ended: a step limit, a final
hand-off) has no reply and is judged with an empty one, its calls still checked, never
with an earlier step's text (`turn_builder.final_step`).

An agent span below a turn's root that made model calls of its own, none of them in the
enclosing turn's conversation, is a delegation judged as a turn of its own as well, nested
in the enclosing one (`processors.assembly.delegations`): its subtree, its own id
(`delegations.nested_turn_id`) and versions, and `AssembledTurn.parent_turn_id`. The
enclosing turn is built exactly as without it.

Agents whose every LLM call is its own trace (common with OpenInference) are joined up,
on evidence only (`processors.assembly.joins`): a call joins an earlier call's group when its
input carries the earlier call's input and its own output (text or tool calls), with no
new user request in between; when it hands back tool results answering the earlier
call's tool calls, by call id (`turn_builder.continues_turn`); or when it has the same
conversation id and answers the same request. The same opening messages alone are no
evidence. Joins stay within one tenant and service and within the maximum wait plus
`joins.JOIN_SLACK_SECONDS` of the earlier call; content that two groups offered alike
(two sessions that sent and got the same words) joins nothing. A trace with an agent
span is a turn of its own: it is never joined to another trace, and one whose calls were
joined before its agent span arrived is taken out again (the group it leaves is judged
again). One user request counts once. A group with nothing to build a turn from (only
tool spans) is counted as `no_turn_root` when it is judged.

Each turn carries what the in-loop guard did in it (`Turn.guard`), read from the guard
attributes of all its spans, those that say nothing else about the turn too
(`processors.guard_activity`).

A request that continues an earlier response (the Responses API's
`previous_response_id`, which a session's next run sends with only its new message) is a
turn of its own, never joined; its history is read from the calls of the chain it
continues, kept by response id (`MAX_RESPONSES`) across traces, judged or not
(`turn_builder.responses_chain`). A request judged before the response it continues
arrived is not judged again for it.

A span that arrives after its group was judged re-opens the group; each turn whose spans
changed is judged again under the next version. A re-sent span (same trace and span id)
is ignored. After a restart, verdicts stored earlier are handed in (`remember`) ahead of
the spans read back with them, so versions go on and nothing judged is judged again.
Everything is bounded: open groups (the oldest is judged early when full), spans per
group, judged groups kept for late spans, span ids kept for duplicates.

Log spans (`spans.is_log_span`: GenAI content an instrumentation wrote as OTLP log
records) are not turn spans: the event each carries is folded into the span it names
before that span is normalized, whichever arrives first. A log before its span waits in
the group (at most `MAX_HELD_LOGS_PER_GROUP`); a log after its span makes the span be
read again with the event, the group counted as changed (a judged turn gets its next
version). A span takes at most `MAX_LOG_EVENTS_PER_SPAN` log events. Held logs never hold
a group back: the grace and the maximum wait decide as for spans, and logs whose span
never came are counted as `log_without_span` when their group is forgotten.

Not thread-safe: the pipeline calls one assembler from one thread.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from factledger.processors.assembly.delegations import (
    delegations,
    is_turn_of_its_own,
    nested_turn_id,
    own_steps,
)
from factledger.processors.assembly.joins import (
    JOIN_SLACK_SECONDS,
    NO_JOIN,
    CallTime,
    JoinIndex,
    JoinKeys,
    join_keys,
)
from factledger.processors.assembly.turn_builder import (
    TurnSpans,
    awaits_tools,
    build_turn,
    continuable,
    main_thread,
    responses_chain,
    split_turns,
)
from factledger.processors.guard_activity import guard_activity
from factledger.processors.judging.drops import Drop
from factledger.processors.model import Turn
from factledger.processors.normalize.base import (
    AgentInvocation,
    LlmStep,
    NormalizedSpan,
    ToolExecution,
)
from factledger.processors.spans import SpanEvent, SpanRecord, is_log_span

Normalizer: TypeAlias = Callable[[SpanRecord], NormalizedSpan | None]

MAX_UNREAD_TRACES = 10_000
"""Traces with no span that says anything about a turn, kept until the maximum wait says
they never will (`TurnAssembler.traces_without_turn`)."""
MAX_UNREAD_LABELS = 50
"""Instrumentation scopes counted by name among those; others count as `other`."""
MAX_EARLY_LINKS = 16
"""Spans no reader reads kept for each of those traces, as links for the group a readable
span of the trace may still open (the rest only count the trace)."""

MAX_SPANS_PER_GROUP = 2_000
"""Spans one group may hold; a trace past it is judged on the first ones."""

MAX_LOG_EVENTS_PER_SPAN = 256
"""Log events folded into one span; more are counted as `log_events_full`."""

MAX_HELD_LOGS_PER_GROUP = 2_000
"""Logs one group holds for spans not arrived yet; more are counted as `held_logs_full`."""

MAX_RESPONSES = 20_000
"""LLM calls kept by their response id, for the later requests that continue them
(`TurnSpans.earlier`); the least recent are forgotten first. Only calls a chain is made
of are kept (`turn_builder.continuable`): they hold what is new since the response
before, a few messages each."""

_MAX_DEPTH = 256
"""Parent links followed from a span; deeper (or cyclic) chains are cut there."""

_SpanKey: TypeAlias = tuple[str, str]  # (trace id, span id)
_TraceKey: TypeAlias = tuple[str, str]  # (tenant, trace id)


@dataclass(frozen=True, init=False)
class AssembledTurn:
    """A turn ready to be judged. `version` is 1 for the first verdict and counts up each
    time late spans change the turn. `span_ids` are the turn's spans, sorted.

    Times are the agent's own (`started_at_ns`, `ended_at_ns`), except `received_at_ns`,
    the latest time one of the turn's spans was received by the service's clock (0 when
    none says), and `receive_lags_ns`: for each span with both, its receive time minus
    its own end, sorted. A correct clock's lags are the export delay; a skewed clock
    shifts them all (see `collector.judge.clock_skew`).

    `parent_turn_id` is "" for a turn of its own, else the turn it is nested in: a
    delegation to a sub-agent that made model calls of its own
    (`processors.assembly.delegations`)."""

    turn: Turn
    version: int
    span_ids: tuple[str, ...]
    started_at_ns: int
    ended_at_ns: int
    tenant: str
    service: str
    received_at_ns: int
    receive_lags_ns: tuple[int, ...]
    parent_turn_id: str

    # Spelled out so that mypyc compiles it (see processors/normalize/base.py).
    def __init__(
        self,
        turn: Turn,
        version: int,
        span_ids: tuple[str, ...],
        started_at_ns: int,
        ended_at_ns: int,
        tenant: str,
        service: str,
        received_at_ns: int = 0,
        receive_lags_ns: tuple[int, ...] = (),
        parent_turn_id: str = "",
    ) -> None:
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "span_ids", span_ids)
        object.__setattr__(self, "started_at_ns", started_at_ns)
        object.__setattr__(self, "ended_at_ns", ended_at_ns)
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "service", service)
        object.__setattr__(self, "received_at_ns", received_at_ns)
        object.__setattr__(self, "receive_lags_ns", receive_lags_ns)
        object.__setattr__(self, "parent_turn_id", parent_turn_id)

    def __reduce__(self) -> tuple[type[AssembledTurn], tuple[Any, ...]]:
        # Pickled between the judge worker and the verification stage (see PriorVerdict).
        fields = (self.turn, self.version, self.span_ids, self.started_at_ns, self.ended_at_ns)
        received = (self.received_at_ns, self.receive_lags_ns)
        return (AssembledTurn, (*fields, self.tenant, self.service, *received, self.parent_turn_id))

    def at_version(self, version: int) -> AssembledTurn:
        """The same turn under another verdict version (a verified one)."""
        return AssembledTurn(
            self.turn,
            version,
            self.span_ids,
            self.started_at_ns,
            self.ended_at_ns,
            self.tenant,
            self.service,
            self.received_at_ns,
            self.receive_lags_ns,
            self.parent_turn_id,
        )


@dataclass(frozen=True)
class PriorVerdict:
    """A verdict stored before this assembler started, read back at a restart with the
    spans it is owed: `span_ids` are the spans the verdict judged."""

    tenant: str
    turn_id: str
    version: int
    span_ids: tuple[str, ...]

    def __reduce__(self) -> tuple[type[PriorVerdict], tuple[str, str, int, tuple[str, ...]]]:
        # Pickled to the judge worker. Compiled by mypyc (tools/mypyc_build.py), a frozen
        # dataclass would unpickle by setting its fields one by one, which it refuses.
        return (PriorVerdict, (self.tenant, self.turn_id, self.version, self.span_ids))


# The records below are plain classes rather than dataclasses: compiled, their `__init__`
# is native, where a dataclass's is generated Python, and one is made per span or turn.


_HeldLog: TypeAlias = tuple[str, SpanEvent]  # (log span id, its event)


class _Member:
    __slots__ = (
        "end_ns",
        "logs",
        "parent_span_id",
        "raw",
        "received_ns",
        "service",
        "span_id",
        "start_ns",
        "trace_id",
        "value",
    )

    def __init__(
        self,
        trace_id: str,
        span_id: str,
        parent_span_id: str,
        value: NormalizedSpan | None,
        start_ns: int,
        end_ns: int,
        service: str,
        raw: SpanRecord | None = None,
        logs: tuple[_HeldLog, ...] = (),
        received_ns: int = 0,
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_span_id = parent_span_id
        self.value = value
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.service = service
        self.raw = raw
        """The span as received, to be read again when a log event joins it."""
        self.logs = logs
        """Log events folded into the span, with the ids of the log spans that carried them."""
        self.received_ns = received_ns
        """When the service received the span (its clock); 0 when not known."""


class _Group:
    __slots__ = (
        "agent_traces",
        "first_seen",
        "gid",
        "held",
        "held_count",
        "join_keys",
        "last_seen",
        "members",
        "ready",
        "tenant",
        "traces",
    )

    def __init__(self, gid: int, tenant: str, first_seen: float, last_seen: float) -> None:
        self.gid = gid
        self.tenant = tenant
        self.first_seen = first_seen
        self.last_seen = last_seen
        self.members: dict[_SpanKey, _Member] = {}
        self.traces: set[str] = set()
        self.join_keys: set[bytes] = set()
        self.agent_traces: set[str] = set()
        """Traces of the group that hold an agent span: turns of their own, never joined."""
        self.ready: bool | None = None
        """Cached readiness; None after a change."""
        self.held: dict[_SpanKey, list[_HeldLog]] = {}
        """Log events that name a span the group does not hold yet, by that span."""
        self.held_count = 0


class _Part:
    """One turn's share of a group, before it is built."""

    __slots__ = ("agent_key", "members", "parent", "spans")

    def __init__(self, spans: TurnSpans, members: tuple[_Member, ...]) -> None:
        self.spans = spans
        self.members = members
        self.parent: _Part | None = None
        """For a delegation judged as a turn of its own: the part of the turn it is
        nested in (`processors.assembly.delegations`)."""
        self.agent_key: _SpanKey | None = None
        """For a delegation: its agent span, which names its turn."""


class TurnAssembler:
    """Groups spans into turns and says when each turn is complete.

    `add` takes spans in any order; `due` returns the turns complete at `now`;
    `flush_all` completes every open turn (shutdown, tests). Not thread-safe.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        grace_seconds: float = 2.0,
        max_wait_seconds: float = 60.0,
        max_open_turns: int = 10_000,
        max_completed_groups: int = 1_000,
        max_seen_spans: int = 200_000,
        max_versions: int = 100_000,
        normalizer: Normalizer | None = None,
        max_held_logs: int = MAX_HELD_LOGS_PER_GROUP,
        max_log_events: int = MAX_LOG_EVENTS_PER_SPAN,
    ) -> None:
        if normalizer is None:
            from factledger.processors.normalize.dispatch import normalize

            normalizer = normalize
        self._normalize = normalizer
        self._clock = clock
        self._grace = grace_seconds
        self._max_wait = max_wait_seconds
        self._max_open = max(1, max_open_turns)
        self._max_done = max(0, max_completed_groups)
        self._max_seen = max(0, max_seen_spans)
        self._max_versions = max(1, max_versions)
        self._max_held_logs = max(0, max_held_logs)
        self._max_log_events = max(0, max_log_events)
        self._next_gid = 1
        self._groups: dict[int, _Group] = {}
        self._open: OrderedDict[int, None] = OrderedDict()  # by first_seen
        self._quiet: OrderedDict[int, None] = OrderedDict()  # by last_seen
        self._done: OrderedDict[int, None] = OrderedDict()  # judged, least recent first
        self._by_trace: dict[_TraceKey, int] = {}
        self._joins = JoinIndex(max_wait_seconds + JOIN_SLACK_SECONDS)
        self._seen: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._versions: OrderedDict[str, tuple[int, frozenset[str]]] = OrderedDict()
        self._prior_spans: OrderedDict[tuple[str, str], None] = OrderedDict()  # (tenant, id)
        self._ready_turns: list[AssembledTurn] = []
        self._drops: dict[str, int] = {}
        self._unread: OrderedDict[_TraceKey, tuple[float, str, str]] = OrderedDict()
        self._early_links: dict[_TraceKey, dict[str, _Member]] = {}  # traces in _unread
        self._without_turn: dict[tuple[str, str], int] = {}
        # (tenant, service, response id) -> the call that gave it, least recent first.
        self._responses: OrderedDict[tuple[str, str, str], LlmStep] = OrderedDict()

    # --- public seam -------------------------------------------------------------------

    @property
    def open_count(self) -> int:
        """Groups (traces, or chains of traces) still being assembled."""
        return len(self._open)

    @property
    def drops(self) -> Mapping[str, int]:
        """Spans or groups not handled the ordinary way, by reason (a snapshot)."""
        return dict(self._drops)

    @property
    def traces_without_turn(self) -> Mapping[tuple[str, str], int]:
        """Traces none of whose spans said anything about a turn within the maximum wait
        (an instrumentation FactLedger cannot read), by (service, instrumentation scope):
        a snapshot of running totals."""
        return dict(self._without_turn)

    def add(self, span: SpanRecord) -> None:
        """Take one span. A re-sent span is ignored; spans that say nothing about an
        agent turn only count as links (parents) within their trace: kept by the group
        that holds it, or, a few of them (`MAX_EARLY_LINKS`), until one opens."""
        seen_key = (span.tenant, span.trace_id, span.span_id)
        trace_key = (span.tenant, span.trace_id)
        group = self._group_of(trace_key)
        key = (span.trace_id, span.span_id)
        if seen_key in self._seen or (group is not None and key in group.members):
            self._count(Drop.DUPLICATE)
            return
        if is_log_span(span):
            self._add_log(span, group)
            return
        logs = self._take_held(group, key)
        try:
            value = self._normalize(_with_logs(span, logs))
        except Exception:  # one malformed span never stops assembly
            self._count(Drop.NORMALIZE_ERROR)
            self._lost_logs(logs)
            return
        now = self._clock()
        if value is None:
            # Not a turn span: keep it as a link (it may sit between an agent and its
            # calls), but never open or re-open a group for it.
            if group is None:
                self._note_unread(trace_key, span, now)
                self._keep_early_link(trace_key, span)
            elif self._has_room(group):
                self._remember(seen_key)
                group.members[key] = self._member(span, None, logs)
                if group.gid in self._open:
                    group.ready = None
                    self._touch(group, now)
            else:
                self._lost_logs(logs)
            return
        if (
            isinstance(value, AgentInvocation)
            and group is not None
            and span.trace_id not in group.agent_traces
        ):
            group = self._isolate(group, span.trace_id, now)
        join = self._keys_of(span, value, group)
        when = CallTime(span.start_time_unix_nano, span.end_time_unix_nano, now)
        target = self._joined_group(join, when, group)
        if target is not None:
            group = target if group is None else self._merge(target, group, now)
            self._by_trace[trace_key] = group.gid
            group.traces.add(span.trace_id)
        if group is None:
            group = self._new_group(span.tenant, now)
            self._by_trace[trace_key] = group.gid
            group.traces.add(span.trace_id)
        elif group.gid in self._done:
            self._reopen(group, now)
        if self._unread.pop(trace_key, None) is not None:
            self._take_early_links(group, trace_key)
        if not self._has_room(group):
            self._lost_logs(logs)
            return
        self._remember(seen_key)
        group.members[key] = self._member(span, value, logs)
        group.ready = None
        if isinstance(value, AgentInvocation):
            group.agent_traces.add(span.trace_id)
        elif isinstance(value, LlmStep) and continuable(value):
            self._keep_response(span.tenant, span.service_name, value)
        self._register(group, join.registrations, when)
        self._touch(group, now)

    def _add_log(self, log_span: SpanRecord, group: _Group | None) -> None:
        """Fold a log span's event into the span it names, or hold it until that span
        comes (see the module)."""
        if not log_span.parent_span_id or not log_span.events:
            self._count(Drop.LOG_WITHOUT_SPAN)
            return
        now = self._clock()
        if group is None:
            group = self._new_group(log_span.tenant, now)
            self._by_trace[(log_span.tenant, log_span.trace_id)] = group.gid
            group.traces.add(log_span.trace_id)
        held: _HeldLog = (log_span.span_id, log_span.events[0])
        target = (log_span.trace_id, log_span.parent_span_id)
        member = group.members.get(target)
        if member is None:
            if group.held_count >= self._max_held_logs:
                self._count(Drop.HELD_LOGS_FULL)
                return
            self._remember((log_span.tenant, log_span.trace_id, log_span.span_id))
            group.held.setdefault(target, []).append(held)
            group.held_count += 1
            if group.gid in self._open:
                self._touch(group, now)
            return
        if len(member.logs) >= self._max_log_events or member.raw is None:
            self._count(Drop.LOG_EVENTS_FULL)
            return
        self._remember((log_span.tenant, log_span.trace_id, log_span.span_id))
        member.logs = (*member.logs, held)
        try:
            value = self._normalize(_with_logs(member.raw, member.logs))
        except Exception:  # the span keeps what it was read as without the log
            self._count(Drop.NORMALIZE_ERROR)
            return
        member.value = value
        group.ready = None
        if isinstance(value, AgentInvocation):
            group.agent_traces.add(member.trace_id)
        elif isinstance(value, LlmStep) and member.trace_id not in group.agent_traces:
            self._rekey(group)  # later calls of other traces join on what the call now says
        if group.gid in self._done:
            self._reopen(group, now)  # its turn changed: judged again, the next version
        self._touch(group, now)

    def _take_held(self, group: _Group | None, key: _SpanKey) -> tuple[_HeldLog, ...]:
        """The logs held for span `key`, taken out of the group."""
        if group is None or not group.held:
            return ()
        found = group.held.pop(key, None)
        if not found:
            return ()
        group.held_count -= len(found)
        kept = found[: self._max_log_events]
        for _ in found[self._max_log_events :]:
            self._count(Drop.LOG_EVENTS_FULL)
        return tuple(kept)

    def _lost_logs(self, logs: tuple[_HeldLog, ...]) -> None:
        for _ in logs:
            self._count(Drop.LOG_WITHOUT_SPAN)

    def remember(self, prior: PriorVerdict) -> None:
        """Go on from a verdict stored before this assembler started: the turn's next
        verdict is `prior.version + 1` (none while its spans stay the same), and a turn
        built only from spans a prior verdict judged under another id (a turn joined from
        several traces, read back one trace at a time) is not judged again."""
        known = self._versions.get(prior.turn_id)
        if known is None or known[0] < prior.version:
            self._keep_version(prior.turn_id, prior.version, frozenset(prior.span_ids))
        for span_id in prior.span_ids:
            self._prior_spans[(prior.tenant, span_id)] = None
        while len(self._prior_spans) > self._max_seen:
            self._prior_spans.popitem(last=False)

    def next_version(self, turn_id: str, span_ids: Sequence[str], judged: int) -> int | None:
        """The version a verified verdict of the turn's version `judged` takes: the next
        one, kept so that a later change of the turn is judged under the one after. None
        when a later version of the turn was judged meanwhile (its own verification will
        settle it)."""
        known = self._versions.get(turn_id)
        if known is not None and known[0] > judged:
            return None
        version = judged + 1
        self._keep_version(turn_id, version, frozenset(span_ids) if known is None else known[1])
        return version

    def due(self, now: float | None = None) -> list[AssembledTurn]:
        """Turns complete at `now` (default: the clock), each returned once per version."""
        now = self._clock() if now is None else now
        out, self._ready_turns = self._ready_turns, []
        self._expire_unread(now)
        expired = list(
            _take_while(self._open, lambda g: now - g.first_seen >= self._max_wait, self._groups)
        )
        for gid in expired:
            out.extend(self._complete(self._groups[gid]))
        quiet = list(
            _take_while(self._quiet, lambda g: now - g.last_seen >= self._grace, self._groups)
        )
        for gid in quiet:
            group = self._groups[gid]
            parts: list[_Part] | None = None
            if group.ready is None:
                parts = self._partition(group)
                group.ready = self._is_ready(parts)
            if group.ready:
                out.extend(self._complete(group, parts))  # the group is as it was partitioned
        return out

    def flush_all(self) -> list[AssembledTurn]:
        """Complete every open group now, ready or not (shutdown, tests)."""
        out, self._ready_turns = self._ready_turns, []
        for gid in list(self._open):
            out.extend(self._complete(self._groups[gid]))
        return out

    # --- grouping ----------------------------------------------------------------------

    def _group_of(self, trace_key: _TraceKey) -> _Group | None:
        gid = self._by_trace.get(trace_key)
        return None if gid is None else self._groups.get(gid)

    @staticmethod
    def _keys_of(span: SpanRecord, value: NormalizedSpan, group: _Group | None) -> JoinKeys:
        if not isinstance(value, LlmStep):
            return NO_JOIN
        if group is not None and span.trace_id in group.agent_traces:
            return NO_JOIN  # a call of an agent run belongs to that run's turn
        # A group that holds only logs (they came before the trace's first span) is no
        # trace of its own yet: the call may look up the call ids it answers.
        first = group is None or not group.members
        return join_keys(span.tenant, span.service_name, value, by_call_id=first)

    def _joined_group(
        self, keys: JoinKeys, when: CallTime, current: _Group | None
    ) -> _Group | None:
        gid = self._joins.find(keys, when, None if current is None else current.gid)
        return None if gid is None else self._groups.get(gid)

    def _register(self, group: _Group, keys: tuple[bytes, ...], when: CallTime) -> None:
        if keys:
            self._joins.register(keys, group.gid, when)
            group.join_keys.update(keys)

    def _isolate(self, group: _Group, trace_id: str, now: float) -> _Group:
        """A trace with an agent span is a turn of its own: take it out of the group its
        calls were joined into before the agent span came, and withdraw the keys they
        offered (later calls of other traces join nothing through them)."""
        own = self._split_off(group, trace_id, now) if len(group.traces) > 1 else group
        own.agent_traces.add(trace_id)
        self._rekey(own)
        return own

    def _split_off(self, group: _Group, trace_id: str, now: float) -> _Group:
        moved = {k: m for k, m in group.members.items() if k[0] == trace_id}
        for k in moved:
            del group.members[k]
        group.traces.discard(trace_id)
        group.ready = None
        self._rekey(group)
        if group.gid in self._done:
            self._reopen(group, now)  # its turns lost this trace's spans: judged again
        own = self._new_group(group.tenant, now)
        own.members.update(moved)
        for target in [t for t in group.held if t[0] == trace_id]:
            logs = group.held.pop(target)
            group.held_count -= len(logs)
            own.held[target] = logs
            own.held_count += len(logs)
        own.traces.add(trace_id)
        self._by_trace[(group.tenant, trace_id)] = own.gid
        return own

    def _rekey(self, group: _Group) -> None:
        """Offer again exactly the keys of the group's calls outside agent traces."""
        self._joins.withdraw(group.join_keys, group.gid)
        group.join_keys = set()
        for member in group.members.values():
            value = member.value
            if isinstance(value, LlmStep) and member.trace_id not in group.agent_traces:
                keys = join_keys(group.tenant, member.service, value)
                when = CallTime(member.start_ns, member.end_ns, group.last_seen)
                self._register(group, keys.registrations, when)

    def _make_room(self) -> None:
        while len(self._open) >= self._max_open:
            oldest = self._groups[next(iter(self._open))]
            self._count(Drop.MAX_OPEN_TURNS)
            self._ready_turns.extend(self._complete(oldest))

    def _new_group(self, tenant: str, now: float) -> _Group:
        self._make_room()
        group = _Group(self._next_gid, tenant, first_seen=now, last_seen=now)
        self._next_gid += 1
        self._groups[group.gid] = group
        self._open[group.gid] = None
        self._quiet[group.gid] = None
        return group

    def _reopen(self, group: _Group, now: float) -> None:
        del self._done[group.gid]
        self._make_room()
        group.first_seen = now  # a fresh max wait: otherwise the late span is judged at once
        group.ready = None
        self._open[group.gid] = None
        self._quiet[group.gid] = None

    def _merge(self, survivor: _Group, other: _Group, now: float) -> _Group:
        """Fold `other` (the trace the span belongs to) into the group it continues."""
        for span_key, member in other.members.items():
            if self._has_room(survivor):
                survivor.members[span_key] = member
        for target, logs in other.held.items():
            room = self._max_held_logs - survivor.held_count
            for _ in logs[max(0, room) :]:
                self._count(Drop.HELD_LOGS_FULL)
            if room > 0:
                survivor.held.setdefault(target, []).extend(logs[:room])
                survivor.held_count += min(room, len(logs))
        for trace_id in other.traces:
            self._by_trace[(other.tenant, trace_id)] = survivor.gid
        survivor.traces |= other.traces
        self._joins.move(other.join_keys, other.gid, survivor.gid)
        survivor.join_keys |= other.join_keys
        survivor.agent_traces |= other.agent_traces
        survivor.ready = None
        for index in (self._open, self._quiet, self._done):
            index.pop(other.gid, None)
        del self._groups[other.gid]
        if survivor.gid in self._done:
            self._reopen(survivor, now)
        return survivor

    def _has_room(self, group: _Group) -> bool:
        if len(group.members) < MAX_SPANS_PER_GROUP:
            return True
        self._count(Drop.GROUP_FULL)
        return False

    def _touch(self, group: _Group, now: float) -> None:
        group.last_seen = now
        self._quiet[group.gid] = None
        self._quiet.move_to_end(group.gid)

    def _remember(self, seen_key: tuple[str, str, str]) -> None:
        self._seen[seen_key] = None
        while len(self._seen) > self._max_seen:
            self._seen.popitem(last=False)

    @staticmethod
    def _member(
        span: SpanRecord, value: NormalizedSpan | None, logs: tuple[_HeldLog, ...] = ()
    ) -> _Member:
        return _Member(
            trace_id=span.trace_id,
            span_id=span.span_id,
            parent_span_id=span.parent_span_id,
            value=value,
            start_ns=span.start_time_unix_nano,
            end_ns=span.end_time_unix_nano,
            service=span.service_name,
            raw=span,
            logs=logs,
            received_ns=span.received_at_unix_nano,
        )

    # --- completion --------------------------------------------------------------------

    @staticmethod
    def _is_ready(parts: list[_Part]) -> bool:
        if not parts:
            return False  # no root yet (only tool spans): wait for it, up to max wait
        return all(p.spans.agent is not None or not awaits_tools(p.spans.steps) for p in parts)

    def _complete(self, group: _Group, parts: list[_Part] | None = None) -> list[AssembledTurn]:
        """Build the group's turns (from `parts` when its partition is at hand)."""
        out: list[AssembledTurn] = []
        taken: set[str] = set()
        if parts is None:
            parts = self._partition(group)
        if not parts and any(m.value is not None for m in group.members.values()):
            self._count(Drop.NO_TURN_ROOT)  # tool spans whose LLM calls never arrived
        turn_ids: dict[int, str] = {}  # id(part) -> its turn's id, for the turns nested in it
        for part in parts:
            parent_id = ""
            if part.parent is not None:
                parent_id = turn_ids.get(id(part.parent), "")
                if not parent_id or part.agent_key is None:
                    continue  # the turn it is nested in could not be read
            try:
                turn = build_turn(part.spans)
            except Exception:  # a turn that cannot be read is counted, never fatal
                self._count(Drop.UNBUILDABLE_TURN)
                continue
            if part.agent_key is not None:
                turn_id = nested_turn_id(parent_id, part.agent_key)
            else:
                turn_id = turn.turn_id
                ordinal = 1
                while turn_id in taken:  # two agent runs of one trace answering the same text
                    turn_id = _salted(turn.turn_id, ordinal)
                    ordinal += 1
            taken.add(turn_id)
            turn_ids[id(part)] = turn_id
            guard = guard_activity(m.raw for m in part.members if m.raw is not None)
            if turn_id != turn.turn_id or guard != turn.guard:
                turn = replace(turn, turn_id=turn_id, guard=guard)
            assembled = self._versioned(turn, part.members, parent_id)
            if assembled is not None:
                out.append(assembled)
        self._open.pop(group.gid, None)
        self._quiet.pop(group.gid, None)
        self._done[group.gid] = None
        while len(self._done) > self._max_done:
            self._forget(self._groups[next(iter(self._done))])
        return out

    def _versioned(
        self, turn: Turn, members: tuple[_Member, ...], parent_turn_id: str = ""
    ) -> AssembledTurn | None:
        # A log span folded into a member counts as one of the turn's spans: a late log
        # changes the turn, and its id is among the spans its verdict judged.
        span_ids = frozenset(
            [m.span_id for m in members] + [log_id for m in members for log_id, _ in m.logs]
        )
        previous = self._versions.get(turn.turn_id)
        if previous is not None and previous[1] == span_ids:
            return None  # nothing new for this turn (a late span belonged to another)
        prior = self._prior_spans
        if previous is None and prior and all((turn.tenant, s) in prior for s in span_ids):
            return None  # judged before the restart, under the turn it was joined into
        version = 1 if previous is None else previous[0] + 1
        self._keep_version(turn.turn_id, version, span_ids)
        starts = [m.start_ns for m in members if m.start_ns]
        lags = sorted(
            m.received_ns - (m.end_ns or m.start_ns)
            for m in members
            if m.received_ns and (m.end_ns or m.start_ns)
        )
        return AssembledTurn(
            turn=turn,
            version=version,
            span_ids=tuple(sorted(span_ids)),
            started_at_ns=min(starts, default=0),
            ended_at_ns=max((m.end_ns for m in members), default=0),
            tenant=turn.tenant,
            service=turn.service,
            received_at_ns=max((m.received_ns for m in members), default=0),
            receive_lags_ns=tuple(lags),
            parent_turn_id=parent_turn_id,
        )

    def _keep_version(self, turn_id: str, version: int, span_ids: frozenset[str]) -> None:
        self._versions[turn_id] = (version, span_ids)
        self._versions.move_to_end(turn_id)
        while len(self._versions) > self._max_versions:
            self._versions.popitem(last=False)

    def _forget(self, group: _Group) -> None:
        for _ in range(group.held_count):
            self._count(Drop.LOG_WITHOUT_SPAN)  # their span never came
        self._done.pop(group.gid, None)
        del self._groups[group.gid]
        for trace_id in group.traces:
            if self._by_trace.get((group.tenant, trace_id)) == group.gid:
                del self._by_trace[(group.tenant, trace_id)]
        self._joins.withdraw(group.join_keys, group.gid)

    def _keep_response(self, tenant: str, service: str, step: LlmStep) -> None:
        key = (tenant, service, step.response_id)
        self._responses[key] = step
        self._responses.move_to_end(key)
        while len(self._responses) > MAX_RESPONSES:
            self._responses.popitem(last=False)

    def _earlier(
        self, tenant: str, service: str, steps: Sequence[LlmStep], agent: AgentInvocation | None
    ) -> tuple[LlmStep, ...]:
        """The calls before the turn's request in its Responses API chain
        (`TurnSpans.earlier`): from the response its first call continues, which the agent
        span names when that call's span does not."""
        if not self._responses:
            return ()
        first = min(steps, key=lambda s: s.start_time_unix_nano, default=None)
        previous = first.previous_response_id if first is not None else ""
        if not previous and agent is not None:
            previous = agent.previous_response_id
        responses = self._responses
        return responses_chain(
            previous, lambda response_id: responses.get((tenant, service, response_id)), steps
        )

    def _count(self, reason: Drop) -> None:
        self._drops[reason] = self._drops.get(reason, 0) + 1

    def _note_unread(self, trace_key: _TraceKey, span: SpanRecord, now: float) -> None:
        """A span no reader understood, in a trace no group holds yet: remember the trace
        until a readable span opens a group for it or the maximum wait runs out."""
        if trace_key in self._unread:
            return
        self._unread[trace_key] = (now, span.service_name, span.scope_name)
        while len(self._unread) > MAX_UNREAD_TRACES:
            evicted, (_, service, scope) = self._unread.popitem(last=False)
            self._early_links.pop(evicted, None)
            self._count_without_turn(service, scope)

    def _keep_early_link(self, trace_key: _TraceKey, span: SpanRecord) -> None:
        """Keep a span of a trace no group holds yet as a link: spans arrive in any order,
        and one that sits between two readable spans (the MCP SDK's client span of a tool
        call, between the agent's tool span and the server's) may come first."""
        if trace_key not in self._unread:
            return
        links = self._early_links.setdefault(trace_key, {})
        if len(links) < MAX_EARLY_LINKS:
            links.setdefault(span.span_id, self._member(span, None))

    def _take_early_links(self, group: _Group, trace_key: _TraceKey) -> None:
        for span_id, link in self._early_links.pop(trace_key, {}).items():
            if (link.trace_id, span_id) not in group.members and self._has_room(group):
                self._remember((group.tenant, link.trace_id, span_id))
                group.members[(link.trace_id, span_id)] = link

    def _expire_unread(self, now: float) -> None:
        while self._unread:
            trace_key, (first_seen, service, scope) = next(iter(self._unread.items()))
            if now - first_seen < self._max_wait:
                return
            del self._unread[trace_key]
            self._early_links.pop(trace_key, None)
            self._count_without_turn(service, scope)

    def _count_without_turn(self, service: str, scope: str) -> None:
        label = (service[:120], scope[:120] or "unknown")
        if label not in self._without_turn and len(self._without_turn) >= MAX_UNREAD_LABELS:
            label = ("other", "other")
        self._without_turn[label] = self._without_turn.get(label, 0) + 1

    # --- cutting a group into turns ----------------------------------------------------

    def _partition(self, group: _Group) -> list[_Part]:
        members = group.members
        scopes = _agent_scopes(members)
        by_agent: dict[_SpanKey, list[_Member]] = {k: [] for k in scopes.agents}
        loose: list[_Member] = []
        for k, member in members.items():
            agent = scopes.owner.get(k)
            if agent is not None:
                by_agent[agent].append(member)
            elif member.value is not None:
                loose.append(member)
        outermost = [members[k] for k in by_agent]
        parts = [
            self._part(group, members[k], owned, [m for m in outermost if m is not members[k]])
            for k, owned in by_agent.items()
        ]
        member_of = {id(m.value): m for m in loose}
        steps = [m.value for m in loose if isinstance(m.value, LlmStep)]
        tools = [m.value for m in loose if isinstance(m.value, ToolExecution)]
        for turn_steps, turn_tools in split_turns(steps, tools):
            owned = [member_of[id(v)] for v in (*turn_steps, *turn_tools)]
            parts.append(self._part(group, None, owned))
        if len(by_agent) < sum(isinstance(m.value, AgentInvocation) for m in members.values()):
            parts.extend(
                self._nested_parts(group, dict(zip(by_agent, parts[: len(by_agent)], strict=True)))
            )
        return parts

    def _nested_parts(self, group: _Group, lead_parts: dict[_SpanKey, _Part]) -> list[_Part]:
        """The delegations of the group's agent turns that are turns of their own
        (`processors.assembly.delegations`), each after the part it is nested in."""
        members = group.members
        parents = {
            k: ((m.trace_id, m.parent_span_id) if m.parent_span_id else None)
            for k, m in members.items()
        }
        agents = frozenset(k for k, m in members.items() if isinstance(m.value, AgentInvocation))
        tree, found = delegations(parents, agents)
        turn_parts = dict(lead_parts)
        out: list[_Part] = []
        for delegation in found:
            enclosing: _SpanKey | None = delegation.enclosing
            while enclosing is not None and enclosing not in turn_parts:
                enclosing = tree.above.get(enclosing)
            if enclosing is None:
                continue  # below an agent that is no turn's root (a broken chain)
            parent = turn_parts[enclosing]
            own = [
                members[k].value
                for k in own_steps(tree, delegation, lambda k: _wrote_output(members[k]))
            ]
            if not is_turn_of_its_own(own, main_thread(parent.spans.steps)):
                continue
            part = self._part(
                group, members[delegation.agent], [members[k] for k in delegation.subtree]
            )
            part.parent = parent
            part.agent_key = delegation.agent
            turn_parts[delegation.agent] = part
            out.append(part)
        return out

    def _part(
        self,
        group: _Group,
        agent: _Member | None,
        owned: list[_Member],
        peers: Sequence[_Member] = (),
    ) -> _Part:
        """`peers`: the group's other outermost agent spans (agents of the same run)."""
        steps = [m for m in owned if isinstance(m.value, LlmStep)]
        first = min(steps, key=lambda m: m.start_ns, default=agent)
        root = agent if agent is not None else first
        service = next((m.service for m in (root, *owned) if m is not None and m.service), "")
        agent_value = agent.value if agent is not None else None
        agent_run = agent_value if isinstance(agent_value, AgentInvocation) else None
        calls = tuple(m.value for m in steps if isinstance(m.value, LlmStep))
        spans = TurnSpans(
            steps=calls,
            tools=_one_per_execution(owned),
            agent=agent_run,
            earlier=self._earlier(group.tenant, service, calls, agent_run),
            tenant=group.tenant,
            trace_id=first.trace_id if first is not None else "",
            service=service,
            inner_agents=tuple(
                m.value for m in owned if m is not agent and isinstance(m.value, AgentInvocation)
            ),
            peer_agents=tuple(
                m.value
                for m in peers
                if agent is not None
                and m.trace_id == agent.trace_id
                and isinstance(m.value, AgentInvocation)
            ),
        )
        return _Part(spans, tuple(owned))


def _wrote_output(member: _Member) -> bool:
    value = member.value
    return isinstance(value, LlmStep) and bool(value.output_messages)


def _with_logs(span: SpanRecord, logs: tuple[_HeldLog, ...]) -> SpanRecord:
    """The span with the log events folded into it, in time order after its own."""
    if not logs:
        return span
    events = sorted((event for _, event in logs), key=lambda e: e.time_unix_nano)
    return replace(span, events=(*span.events, *events))


def _one_per_execution(owned: list[_Member]) -> tuple[ToolExecution, ...]:
    """The tool executions of a turn, one per execution. A tool span below a tool span of
    the same tool records the same execution once more: two instrumentations layered, such
    as OpenInference's AutoGen TOOL span (arguments and result, no call id) around
    AutoGen's own `execute_tool` span (the call id and the error status, no result), or an
    MCP server's `tools/call` span (the tool's name and whether its result was flagged
    `isError`, no arguments) under the client's span of the call, with the client's
    request span (`MCP send tools/call`, which no reader reads) between the two. Spans
    between them that say nothing about a turn are passed through; any other span (an
    agent, an LLM call) makes the inner tool an execution of its own. The two are one
    execution: each field from whichever span recorded it, and failed when either says
    so."""
    by_key = {(m.trace_id, m.span_id): m for m in owned}
    tools = {
        (m.trace_id, m.span_id): (m, m.value) for m in owned if isinstance(m.value, ToolExecution)
    }
    outer_of: dict[_SpanKey, _SpanKey] = {}
    for key, (m, value) in tools.items():
        outer = _enclosing_tool(m, by_key)
        if outer is not None and outer in tools and tools[outer][1].name == value.name:
            outer_of[key] = outer
    inner: dict[_SpanKey, list[ToolExecution]] = {}
    for key in outer_of:
        root, depth = key, 0
        while root in outer_of and depth < _MAX_DEPTH:  # layers of one execution, any depth
            root, depth = outer_of[root], depth + 1
        inner.setdefault(root, []).append(tools[key][1])
    out: list[ToolExecution] = []
    for key, (_, value) in tools.items():
        if key in outer_of:
            continue
        for same in inner.get(key, ()):
            value = replace(
                value,
                call_id=value.call_id or same.call_id,
                arguments=value.arguments or same.arguments,
                result=value.result if value.result is not None else same.result,
                error=value.error or same.error,
            )
        out.append(value)
    return tuple(out)


def _enclosing_tool(member: _Member, by_key: Mapping[_SpanKey, _Member]) -> _SpanKey | None:
    """The tool span `member` runs in: its nearest ancestor, through spans that say
    nothing about a turn, when that ancestor is a tool span; else None."""
    current = member
    for _ in range(_MAX_DEPTH):
        if not current.parent_span_id:
            return None
        key = (current.trace_id, current.parent_span_id)
        parent = by_key.get(key)
        if parent is None:
            return None
        if parent.value is not None:
            return key if isinstance(parent.value, ToolExecution) else None
        current = parent
    return None


class _Scopes:
    __slots__ = ("agents", "owner")

    def __init__(self, agents: tuple[_SpanKey, ...], owner: dict[_SpanKey, _SpanKey]) -> None:
        self.agents = agents
        """Outermost agent spans, each the root of one turn."""
        self.owner = owner
        """Span -> the outermost agent whose subtree holds it (agents own themselves)."""


def _agent_scopes(members: Mapping[_SpanKey, _Member]) -> _Scopes:
    top: dict[_SpanKey, tuple[_SpanKey | None, bool]] = {}  # -> (outermost agent, broken)
    for start in members:
        path: list[_SpanKey] = []
        current: _SpanKey | None = start
        base: tuple[_SpanKey | None, bool] = (None, False)
        while current is not None:
            if current in top:
                base = top[current]
                break
            member = members.get(current)
            if member is None:
                base = (None, True)  # the chain leaves the spans we hold
                break
            if len(path) >= _MAX_DEPTH or current in path:
                break
            path.append(current)
            parent = member.parent_span_id
            current = (member.trace_id, parent) if parent else None
        above = base[0]
        for k in reversed(path):
            if above is None and isinstance(members[k].value, AgentInvocation):
                above = k
            top[k] = (above, base[1])
    agents = tuple(
        sorted(
            (k for k, (agent, _) in top.items() if agent == k),
            key=lambda k: (members[k].start_ns, k),
        )
    )
    owner = {k: agent for k, (agent, _) in top.items() if agent is not None}
    # A broken chain (a parent we never received) falls back on time: the agent run of
    # the same trace that contains the span.
    for k, (agent, broken) in top.items():
        if agent is None and broken:
            found = _containing_agent(members, agents, members[k])
            if found is not None:
                owner[k] = found
    return _Scopes(agents, owner)


def _containing_agent(
    members: Mapping[_SpanKey, _Member], agents: tuple[_SpanKey, ...], member: _Member
) -> _SpanKey | None:
    if not member.start_ns:
        return None
    for k in agents:
        agent = members[k]
        if (
            agent.trace_id == member.trace_id
            and agent.start_ns <= member.start_ns
            and (member.end_ns or member.start_ns) <= agent.end_ns
        ):
            return k
    return None


def _salted(turn_id: str, ordinal: int) -> str:
    return hashlib.sha256(f"{turn_id}#{ordinal}".encode()).hexdigest()[:32]


def _take_while(
    index: OrderedDict[int, None], predicate: Callable[[_Group], bool], groups: dict[int, _Group]
) -> Iterator[int]:
    for gid in index:
        if not predicate(groups[gid]):
            return
        yield gid
