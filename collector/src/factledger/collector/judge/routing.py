"""Which judge worker a span goes to, so that every span of one conversation meets in one.

Each judge worker process assembles turns on its own (`collector.judge.worker_process`), so what
turn assembly puts together must reach the same worker: the spans of a trace, and the
per-call traces of one conversation that are joined into one turn (`processors.assembly.joins`).
The routing key of a trace is:

- its conversation id, scoped to the tenant, when one of its spans carries one (the
  attributes the normalizers read: `gen_ai.conversation.id`, `session.id`, ...,
  `CONVERSATION_KEYS`);
- else its trace id.

The key is decided once per trace, from the spans of the first batch that holds any of
its spans: the first conversation id among them, else the trace id. The decision is
remembered (the `MAX_TRACES` most recently routed traces) and every later span of the
trace follows it, whatever it carries, so a trace is never split, its late spans
included. Where only some spans carry the id (an agent span does, its LLM and tool
spans do not) the trace goes where the id says as long as one of them comes in that
first batch, which is how SDKs export a trace that ends within their batch delay.

What this does not keep together, by design or by bound:

- a trace whose first batch has no conversation id stays on its trace id's worker when
  a later batch brings one. A trace with an agent span is a turn of its own and never
  joined, so this costs it nothing; a per-call trace whose LLM span comes after spans
  without the id may miss a join on the conversation id;
- per-call traces joined on evidence alone (history, tool call ids) without any
  conversation id meet only when their trace ids lead to the same worker: with more
  than one worker, give such calls a conversation id;
- a trace forgotten (`MAX_TRACES` traces routed since) is decided again from the spans
  at hand: a late span without the conversation id then goes by its trace id.

Not thread-safe: the pipeline's turn processor routes, alone.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Collection, Sequence

from factledger.processors.normalize.values import conversation_id
from factledger.processors.spans import SpanRecord

MAX_TRACES = 100_000
"""Traces whose route is remembered; far more than a worker keeps judged groups for late
spans (`TurnAssembler`'s `max_completed_groups`), so a late span that could still join
its turn finds the worker holding it."""


def route_key(tenant: str, conversation: str, trace_id: str) -> str:
    """The key a trace is routed by: its conversation id when it has one, else its trace
    id, within the tenant (conversations never join across tenants)."""
    if conversation:
        return f"c\x00{tenant}\x00{conversation}"
    return f"t\x00{tenant}\x00{trace_id}"


def worker_for(key: str, workers: int) -> int:
    """The worker (0 to `workers` - 1) of a routing key: a stable hash, the same in every
    process and across restarts."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % workers


class Router:
    """Sorts spans into one list per worker, every span of a trace into one list (see the
    module docstring for the rule)."""

    def __init__(self, workers: int, *, max_traces: int = MAX_TRACES) -> None:
        if workers < 1:
            raise ValueError(f"a router needs at least one worker, not {workers}")
        self.workers = workers
        self._max_traces = max(1, max_traces)
        self._routes: OrderedDict[tuple[str, str], int] = OrderedDict()

    def __len__(self) -> int:
        """Traces whose route is remembered."""
        return len(self._routes)

    def key_of(self, tenant: str, trace_id: str, spans: Sequence[SpanRecord]) -> str:
        """The routing key of a trace seen for the first time, from its spans at hand."""
        for span in spans:
            found = conversation_id(span.attributes)
            if found:
                return route_key(tenant, found, trace_id)
        return route_key(tenant, "", trace_id)

    def route(
        self, spans: Sequence[SpanRecord], only: Collection[int] | None = None
    ) -> tuple[list[list[SpanRecord]], int]:
        """The spans for each worker (in their order), and how many were left out.

        With `only`, a trace already routed to a worker outside `only` is left out (it is
        that worker's to hold); a trace not routed yet is routed, wherever it goes."""
        by_trace: dict[tuple[str, str], list[SpanRecord]] = {}
        for span in spans:
            by_trace.setdefault((span.tenant, span.trace_id), []).append(span)
        assigned: dict[tuple[str, str], int] = {}
        left_out = 0
        for trace, members in by_trace.items():
            worker = self._routes.get(trace)
            if worker is None:
                worker = worker_for(self.key_of(trace[0], trace[1], members), self.workers)
            elif only is not None and worker not in only:
                left_out += len(members)
                continue
            self._remember(trace, worker)
            assigned[trace] = worker
        parts: list[list[SpanRecord]] = [[] for _ in range(self.workers)]
        for span in spans:
            worker_index = assigned.get((span.tenant, span.trace_id))
            if worker_index is not None:
                parts[worker_index].append(span)
        return parts, left_out

    def _remember(self, trace: tuple[str, str], worker: int) -> None:
        self._routes[trace] = worker
        self._routes.move_to_end(trace)
        while len(self._routes) > self._max_traces:
            self._routes.popitem(last=False)
