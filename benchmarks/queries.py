"""Query latency of the dashboard overview's API calls on a large store.

Loads synthetic turns (default 1,000,000; `--quick` 100,000) with their findings, spans
and some human reviews into a fresh data directory through `Store.insert_turns`,
`insert_findings`, `insert_spans` and `insert_review`, so the same tables and the
`turn_stats_1m` materialized view fill as they do behind the pipeline. The load runs in a
child process (chDB allows one process per data path), in time order, as ingest would
write it. Then `factledger serve` starts on that directory, the script waits until the
service's background merges settle, and it times every call the overview, the turns
list, the review queue and a turn's page make over loopback HTTP: one cold call, then
`--repeat` timed calls each (whole round trips on one keep-alive client). It prints
p50/p95/max per call beside the 500 ms target (judged on p95).

The mix: 5 models (one of them with a reject spike over the last two hours), 4 agents in
3 services, about 20% rejected and 8% flagged turns, findings of every kind, times spread
over the last 7 days, 1% of turns judged twice (a late span), four spans per turn.

    python -m benchmarks.queries [--turns N] [--quick] [--repeat N] [--data-dir DIR]

With `--data-dir`, the loaded store is kept there and a later run with the same `--turns`
reuses it (its turns then end at the time of the load, not now).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import httpx

from factledger.collector.rows import (
    FINDING_COLUMNS,
    REPLY_PREVIEW_CHARS,
    SPAN_COLUMNS,
    TURN_COLUMNS,
    review_row,
)
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig
from factledger.processors.kinds import KIND_INFO, HallucinationClass, Kind, Severity
from factledger.service_process import ServiceProcess

TARGET_MS = 500.0
"""Every call's p95 round trip on the loaded store."""
DEFAULT_TURNS = 1_000_000
QUICK_TURNS = 100_000
DEFAULT_REPEAT = 10
BATCH_TURNS = 50_000
"""Turns per insert: the store's chunk size, so one batch is one INSERT per table."""
DAYS = 7
TENANT = "default"
DATABASE = ServiceSettings().database
RELOADED_AS = "queries-benchmark.json"
"""The load report, written into the data directory once the load is complete."""

SETTLE_CPU_SHARE = 0.05
"""The service counts as settled when it uses less than this share of one core..."""
SETTLE_SECONDS = 3
"""...for this many seconds in a row,"""
SETTLE_LIMIT_SECONDS = 300.0
"""...or after this long in any case."""

# --- the synthetic mix -------------------------------------------------------------------


@dataclass(frozen=True)
class ModelMix:
    name: str
    provider: str
    share: float
    reject: float
    flag: float


MODELS = (
    ModelMix("gpt-4o", "openai", 0.30, 0.14, 0.07),
    ModelMix("gpt-4o-mini", "openai", 0.25, 0.30, 0.09),
    ModelMix("claude-3-5-sonnet", "anthropic", 0.20, 0.12, 0.06),
    ModelMix("llama-3.1-70b-instruct", "meta", 0.10, 0.30, 0.10),
    ModelMix("gemini-1.5-pro", "google", 0.15, 0.18, 0.08),
)
AGENTS = (  # name, service, share
    ("support-agent", "support-api", 0.40),
    ("refund-agent", "support-api", 0.20),
    ("ops-agent", "ops-console", 0.25),
    ("research-agent", "research-svc", 0.15),
)
SPIKE_MODEL = "gpt-4o-mini"
SPIKE_SECONDS = 2 * 3600
SPIKE_FACTOR = 2.0
"""The spike model rejects this many times as often over the last SPIKE_SECONDS."""
REJUDGED_SHARE = 0.01
"""Turns that get a second verdict version (a span arrived after the first verdict)."""
REVIEWED_PER_TURNS = 1_000
"""One human review per this many turns: people label hundreds a day, not thousands."""

REJECT_KINDS = {
    Kind.FABRICATED_IDENTIFIER: 30,
    Kind.BORROWED_IDENTIFIER: 10,
    Kind.ERROR_REPORTED_AS_SUCCESS: 15,
    Kind.CLAIM_WITHOUT_TOOL: 15,
    Kind.UNREGISTERED_TOOL_CALL: 5,
    Kind.CITATION_UNREGISTERED_TOOL: 3,
    Kind.CITATION_UNCALLED_TOOL: 4,
    Kind.SUMMARY_WITHOUT_ACTION: 6,
    Kind.NEGATED_EXISTING_IDENTIFIER: 4,
    Kind.UNFETCHED_CITATION: 4,
    Kind.STALL: 4,
}
FLAG_KINDS = {
    Kind.MISSING_TOOL_ARGUMENTS: 30,
    Kind.UNGROUNDED_TOOL_ARGUMENT: 40,
    Kind.CONFABULATED_IDENTIFIER_SET: 30,
}
_VALIDATOR_OF_CLASS: dict[HallucinationClass | Literal["-"], str] = {
    "1": "identifiers",
    "2": "identifiers",
    "3": "outcomes",
    "4": "claims",
    "4b": "arguments",
    "5": "identifier_sets",
    "mirror": "negations",
    "citation": "citations",
    "stall": "stall",
    "-": "runner",
}
VALIDATORS = sorted({f"{name}@1" for name in _VALIDATOR_OF_CLASS.values()})

_QUESTIONS = (
    "Where is my order {order}? It was supposed to arrive on Monday.",
    "Can you refund order {order}? The jacket arrived torn.",
    "Please check why the nightly job for {order} failed and restart it.",
    "Find the commit that introduced the regression in build {order}.",
)
_REPLIES = (
    "I looked up order {order}: it shipped with UPS, tracking number {tracking}, and should "
    "arrive by Friday. The package left the Reno warehouse yesterday evening. ",
    "I have created refund {refund} for order {order}; the amount goes back to the card "
    "ending in 4417 within five business days. Tracking {tracking} is no longer needed. ",
    "The job for {order} failed on step 3 (exit code 137, out of memory). I restarted it "
    "as run {refund}; it is at step 2 now. The failing commit was {sha}. ",
)


def _weights(pairs: dict[Kind, int]) -> tuple[list[Kind], list[int]]:
    return list(pairs), list(pairs.values())


@dataclass
class Batch:
    """Rows of one time slice, in the store's column order."""

    turns: list[tuple[Any, ...]] = field(default_factory=list)
    findings: list[tuple[Any, ...]] = field(default_factory=list)
    spans: list[tuple[Any, ...]] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    sample: list[str] = field(default_factory=list)


class Generator:
    """Synthetic turns, deterministic for a seed. Turns of one batch share a time slice."""

    def __init__(self, seed: int, now_ms: int) -> None:
        self.rng = random.Random(seed)
        self.now_ms = now_ms
        self.models = list(MODELS)
        self.model_weights = [m.share for m in MODELS]
        self.agent_weights = [share for _, _, share in AGENTS]
        self.reject_kinds = _weights(REJECT_KINDS)
        self.flag_kinds = _weights(FLAG_KINDS)
        self.conversation = ""
        self._span_templates: dict[tuple[str, str], list[tuple[Any, ...]]] = {}

    def _hex(self, bits: int) -> str:
        return f"{self.rng.getrandbits(bits):0{bits // 4}x}"

    def batch(self, first_ms: int, end_ms: int, count: int, sample_every: int) -> Batch:
        """`count` turns started in [first_ms, end_ms). After every `sample_every` turns the
        next rejected or flagged one joins `sample` (the turns people open)."""
        rng = self.rng
        batch = Batch()
        models = rng.choices(self.models, self.model_weights, k=count)
        agents = rng.choices(AGENTS, self.agent_weights, k=count)
        wanted = False
        for i in range(count):
            started = rng.randrange(first_ms, end_ms)
            turn_id, verdict = self._turn(batch, models[i], agents[i], started)
            wanted = wanted or i % sample_every == 0
            if wanted and verdict != "pass":
                batch.sample.append(turn_id)
                wanted = False
        return batch

    def _verdict(self, model: ModelMix, started_ms: int) -> str:
        reject = model.reject
        if model.name == SPIKE_MODEL and self.now_ms - started_ms < SPIKE_SECONDS * 1000:
            reject *= SPIKE_FACTOR
        draw = self.rng.random()
        return "reject" if draw < reject else "flag" if draw < reject + model.flag else "pass"

    def _findings(self, verdict: str) -> list[tuple[Kind, float]]:
        rng = self.rng
        if verdict == "pass":
            return [(Kind.VALIDATOR_ERROR, -1.0)] if rng.random() < 0.01 else []
        if verdict == "reject":
            kinds, weights = self.reject_kinds
            n = 1 + (rng.random() < 0.3) + (rng.random() < 0.08)
            chosen = rng.choices(kinds, weights, k=n)
            if rng.random() < 0.15:
                chosen.append(rng.choices(*self.flag_kinds)[0])
        else:
            kinds, weights = self.flag_kinds
            chosen = rng.choices(kinds, weights, k=1 + (rng.random() < 0.25))
        return [
            (
                kind,
                round(rng.uniform(0.3, 0.99), 3)
                if kind is Kind.CONFABULATED_IDENTIFIER_SET
                else -1.0,
            )
            for kind in chosen
        ]

    def _turn(
        self, batch: Batch, model: ModelMix, agent: tuple[str, str, float], started: int
    ) -> tuple[str, str]:
        rng = self.rng
        agent_name, service, _ = agent
        turn_id, trace_id = self._hex(128), self._hex(128)
        if not self.conversation or rng.random() < 0.4:
            self.conversation = self._hex(128)
        ids = {
            "order": f"#W{rng.randrange(10**10):010d}",
            "tracking": f"1Z{self._hex(48).upper()}",
            "refund": f"RF-{rng.randrange(10**8):08d}",
            "sha": self._hex(160),
        }
        user = rng.choice(_QUESTIONS).format(**ids)
        reply = "".join(rng.choice(_REPLIES).format(**ids) for _ in range(rng.randint(1, 3)))
        span_ids = [self._hex(64) for _ in range(4)]
        duration = rng.randint(800, 20_000)
        result = {"order_id": ids["order"], "status": "shipped", "tracking_number": ids["tracking"]}
        tool_calls = json.dumps(
            [
                {
                    "name": "get_order",
                    "call_id": f"call_{self._hex(32)}",
                    "arguments": {"order_id": ids["order"]},
                    "result": json.dumps(result),
                    "ok": True,
                    "span_id": span_ids[2],
                    "origin": "structured",
                }
            ]
        )
        verdict = self._verdict(model, started)
        findings = self._findings(verdict)
        versions = [(1, verdict, findings)]
        if rng.random() < REJUDGED_SHARE:
            versions = [(1, "pass", []), (2, verdict, findings)]
        for version, outcome, found in versions:
            kinds = list(dict.fromkeys(kind.value for kind, _ in found))
            scores = [score for kind, score in found if score >= 0]
            validated = started + duration + 2_000 + 30_000 * (version - 1)
            row = {
                "Tenant": TENANT,
                "TurnId": turn_id,
                "Version": version,
                "TraceId": trace_id,
                "ConversationId": self.conversation,
                "ServiceName": service,
                "AgentName": agent_name,
                "Model": model.name,
                "Provider": model.provider,
                "StartedAt": started,
                "EndedAt": started + duration,
                "ValidatedAt": validated,
                "Verdict": outcome,
                "Kinds": kinds,
                "MaxScore": max(scores, default=0.0),
                "HasClass5": 1 if scores else 0,
                "UserMessage": user,
                "Reply": reply,
                "ToolCalls": tool_calls,
                "SpanIds": span_ids,
                "Validators": VALIDATORS,
                "ReplyPreview": reply[:REPLY_PREVIEW_CHARS],
                "AgentStartedAt": started,
                "ClockSkewSeconds": 0.0,
                "ParentTurnId": "",
                "GuardChecks": 0,
                "GuardNudges": 0,
                "GuardOutcome": "",
                "GuardAction": "",
                "GuardResult": "unguarded",
            }
            batch.turns.append(tuple(row[c] for c in TURN_COLUMNS))
            for idx, (kind, score) in enumerate(found):
                batch.findings.append(
                    self._finding(
                        turn_id, version, idx, kind, score, reply, ids, model, agent_name, started
                    )
                )
        if verdict == "flag":
            batch.flagged.append(turn_id)
        self._spans(batch, trace_id, span_ids, model, agent_name, service, started, duration)
        return turn_id, verdict

    def _finding(
        self,
        turn_id: str,
        version: int,
        idx: int,
        kind: Kind,
        score: float,
        reply: str,
        ids: dict[str, str],
        model: ModelMix,
        agent: str,
        started: int,
    ) -> tuple[Any, ...]:
        info = KIND_INFO[kind]
        token = ids["tracking"] if kind is not Kind.STALL else ""
        start = reply.find(token) if token else -1
        row = {
            "Tenant": TENANT,
            "TurnId": turn_id,
            "Version": version,
            "Idx": idx,
            "Kind": kind.value,
            "Class": info.hallucination_class,
            "Severity": info.default_severity.value,
            "Message": f"{kind.value.replace('_', ' ')}: {token or 'the reply'} not in the tools",
            "Token": token,
            "CheckedAgainst": ["get_order"] if info.default_severity is not Severity.INFO else [],
            "CheckedNote": "",
            "SpanStart": start,
            "SpanEnd": start + len(token) if start >= 0 else -1,
            "Validator": _VALIDATOR_OF_CLASS[info.hallucination_class],
            "Score": score,
            "CallId": "",
            "Model": model.name,
            "AgentName": agent,
            "StartedAt": started,
            # The real identifier a finding was compared with: none in generated traffic.
            "Real.Token": [],
            "Real.Tool": [],
            "Real.CallId": [],
        }
        return tuple(row[c] for c in FINDING_COLUMNS)

    def _spans(
        self,
        batch: Batch,
        trace_id: str,
        span_ids: list[str],
        model: ModelMix,
        agent: str,
        service: str,
        started: int,
        duration: int,
    ) -> None:
        """The turn's four spans: the agent span, a chat span that calls get_order, the
        tool span and the chat span of the reply, one after another."""
        key = (model.name, agent)
        templates = self._span_templates.get(key)
        if templates is None:
            templates = self._span_templates[key] = _span_templates(model, agent, service)
        ms = 1_000_000
        begin, end = started * ms, (started + duration) * ms
        third = (end - begin) // 3
        times = [(begin, end), (begin + ms, begin + third)]
        times += [(begin + third, begin + 2 * third), (begin + 2 * third, end - ms)]
        for i, (template, (start_ns, end_ns)) in enumerate(zip(templates, times, strict=True)):
            row = list(template)
            row[_SPAN_AT["Timestamp"]] = start_ns
            row[_SPAN_AT["TraceId"]] = trace_id
            row[_SPAN_AT["SpanId"]] = span_ids[i]
            row[_SPAN_AT["ParentSpanId"]] = span_ids[0] if i else ""
            row[_SPAN_AT["Duration"]] = end_ns - start_ns
            row[_SPAN_AT["IngestedAt"]] = end_ns // ms + 50
            batch.spans.append(tuple(row))


_SPAN_AT = {name: i for i, name in enumerate(SPAN_COLUMNS)}


def _span_templates(model: ModelMix, agent: str, service: str) -> list[tuple[Any, ...]]:
    """The four spans of one model and agent with what every turn shares filled in (the
    attribute maps are shared between rows: nothing mutates them)."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model.name}
    tool = {"gen_ai.operation.name": "execute_tool"}
    shapes: list[tuple[str, str, dict[str, str], bool]] = [  # name, kind, attributes, tokens
        (f"invoke_agent {agent}", "INTERNAL", {"gen_ai.operation.name": "invoke_agent"}, False),
        (f"chat {model.name}", "CLIENT", {**chat, "gen_ai.usage.input_tokens": "912"}, True),
        ("execute_tool get_order", "INTERNAL", {**tool, "gen_ai.tool.name": "get_order"}, False),
        (f"chat {model.name}", "CLIENT", {**chat, "gen_ai.usage.input_tokens": "1377"}, True),
    ]
    templates = []
    for name, kind, attributes, typed in shapes:
        row = {
            "Timestamp": 0,
            "Tenant": TENANT,
            "TraceId": "",
            "SpanId": "",
            "ParentSpanId": "",
            "TraceState": "",
            "SpanName": name,
            "SpanKind": f"SPAN_KIND_{kind}",
            "ServiceName": service,
            "ResourceAttributes": {"service.name": service},
            "ScopeName": "opentelemetry.instrumentation.openai_v2",
            "ScopeVersion": "2.1b0",
            "SpanAttributes": {"gen_ai.agent.name": agent, **attributes},
            "Duration": 0,
            "StatusCode": "STATUS_CODE_UNSET",
            "StatusMessage": "",
            "Events.Timestamp": [],
            "Events.Name": [],
            "Events.Attributes": [],
            "AttributeTypes": {"s:gen_ai.usage.input_tokens": "int"} if typed else {},
            "IngestedAt": 0,
        }
        templates.append(tuple(row[c] for c in SPAN_COLUMNS))
    return templates


# --- loading -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadReport:
    """What was loaded, how long it took, and turn ids to open one by one."""

    turns: int
    verdict_rows: int
    findings: int
    spans: int
    reviews: int
    now_ms: int
    generate_seconds: float
    insert_seconds: dict[str, float]
    sample: tuple[str, ...]

    @property
    def load_seconds(self) -> float:
        return self.generate_seconds + sum(self.insert_seconds.values())


def load(data_dir: Path, turns: int, seed: int) -> LoadReport:
    """Fill the data directory's store with `turns` synthetic turns, oldest first, and
    write the report into it. Run in a child process: this process then owns the chDB path."""
    now_ms = int(time.time() * 1000)
    generator = Generator(seed, now_ms)
    store = Store.open(StoreConfig(dsn=ServiceSettings(data_dir=data_dir).dsn, database=DATABASE))
    inserted = {"turns": 0.0, "findings": 0.0, "spans": 0.0, "reviews": 0.0}
    counts = {"turns": 0, "findings": 0, "spans": 0}
    generating = 0.0
    flagged: list[str] = []
    sample: list[str] = []
    batches = math.ceil(turns / BATCH_TURNS)
    span_ms = DAYS * 86_400_000
    first_ms = now_ms - span_ms
    try:
        for b in range(batches):
            count = min(BATCH_TURNS, turns - b * BATCH_TURNS)
            clock = time.perf_counter()
            batch = generator.batch(
                first_ms + span_ms * b // batches,
                first_ms + span_ms * (b + 1) // batches,
                count,
                sample_every=max(1, turns // 200),
            )
            generating += time.perf_counter() - clock
            for table, rows, insert in (
                ("turns", batch.turns, store.insert_turns),
                ("findings", batch.findings, store.insert_findings),
                ("spans", batch.spans, store.insert_spans),
            ):
                clock = time.perf_counter()
                insert(rows)
                inserted[table] += time.perf_counter() - clock
                counts[table] += len(rows)
            flagged.extend(batch.flagged)
            sample.extend(batch.sample)
            done = b * BATCH_TURNS + count
            print(f"\rloaded {done:,} of {turns:,} turns", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        reviewed = random.Random(seed).sample(
            flagged, min(len(flagged), turns // REVIEWED_PER_TURNS)
        )
        clock = time.perf_counter()
        created = datetime.fromtimestamp(now_ms / 1000, UTC)
        for i, turn_id in enumerate(reviewed):
            store.insert_review(
                review_row(
                    tenant=TENANT,
                    turn_id=turn_id,
                    review_id=f"review-{i}",
                    label="hallucination" if i % 3 else "not_hallucination",
                    note="checked against the order system",
                    reviewer="benchmark",
                    created_at=created,
                )
            )
        inserted["reviews"] = time.perf_counter() - clock
    finally:
        store.close()
    report = LoadReport(
        turns=turns,
        verdict_rows=counts["turns"],
        findings=counts["findings"],
        spans=counts["spans"],
        reviews=len(reviewed),
        now_ms=now_ms,
        generate_seconds=generating,
        insert_seconds=inserted,
        sample=tuple(sample),
    )
    (data_dir / RELOADED_AS).write_text(json.dumps(asdict(report)), encoding="utf-8")
    return report


def loaded(data_dir: Path, turns: int) -> LoadReport | None:
    """The report of a complete earlier load of `turns` turns into `data_dir`, if any."""
    path = data_dir / RELOADED_AS
    if not path.exists():
        return None
    fields = json.loads(path.read_text(encoding="utf-8"))
    fields["sample"] = tuple(fields["sample"])
    report = LoadReport(**fields)
    return report if report.turns == turns else None


def load_in_child(data_dir: Path, turns: int, seed: int) -> LoadReport:
    # A fresh interpreter (spawn), so that chDB's engine is gone before the service opens it.
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(load, data_dir, turns, seed).result()


# --- the calls ---------------------------------------------------------------------------

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
WEEK = timedelta(days=7)
WINDOWS = ((HOUR, "1h", "5m"), (DAY, "24h", "1h"), (WEEK, "7d", "1d"))


@dataclass(frozen=True)
class Call:
    """One API request. `{turn}` in the path is a sampled turn id, another one each time;
    with `window`, `since` is that long before the moment of the request."""

    section: str
    name: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    window: timedelta | None = None

    def request(self, i: int, now: datetime, sample: Sequence[str]) -> tuple[str, dict[str, str]]:
        params = dict(self.params)
        if self.window is not None:
            params["since"] = (now - self.window).isoformat()
        return self.path.replace("{turn}", sample[i % len(sample)]), params


def calls() -> list[Call]:
    """Every request the overview, turns list, review queue and turn page make."""
    rate = "/api/v1/stats/reject-rate"
    overview = [
        Call(
            "overview",
            f"reject-rate by {group}, {label} in {bucket} buckets",
            rate,
            (("group_by", group), ("bucket", bucket)),
            window,
        )
        for group in ("model", "agent", "kind")
        for window, label, bucket in WINDOWS
    ]
    overview.append(
        Call(
            "overview",
            "reject-rate by model, 14d in 1d buckets (rise)",
            rate,
            (("group_by", "model"), ("bucket", "1d")),
            2 * WEEK,
        )
    )
    turns = "/api/v1/turns"
    lists = [
        Call("turns", "rejected", turns, (("verdict", "reject"), ("limit", "50"))),
        Call("turns", "flagged", turns, (("verdict", "flag"), ("limit", "50"))),
        Call(
            "turns",
            f"rejected, model={SPIKE_MODEL}",
            turns,
            (("verdict", "reject"), ("model", SPIKE_MODEL), ("limit", "50")),
        ),
        Call(
            "turns",
            "rejected, agent=refund-agent",
            turns,
            (("verdict", "reject"), ("agent", "refund-agent"), ("limit", "50")),
        ),
        Call(
            "turns",
            "rejected, kind=borrowed_identifier",
            turns,
            (("verdict", "reject"), ("kind", "borrowed_identifier"), ("limit", "50")),
        ),
        Call(
            "turns",
            "rejected, last 24h",
            turns,
            (("verdict", "reject"), ("limit", "50")),
            DAY,
        ),
        Call("turns", "review queue", "/api/v1/review-queue", (("limit", "50"),)),
        Call("turns", "one turn's page", "/api/v1/turns/{turn}"),
    ]
    return overview + lists


def _answer(body: Any) -> str:
    """What came back, in a few words: a fast empty answer would prove nothing."""
    if "series" in body:
        points = sum(len(series["points"]) for series in body["series"])
        return f"{len(body['series'])} series, {points} points"
    if "findings" in body:
        return f"{len(body['findings'])} findings, {len(body['spans'])} spans"
    if "total" in body:
        return f"{len(body['turns'])} of {body['total']:,}"
    return "?"


@dataclass(frozen=True)
class Timing:
    call: Call
    cold_ms: float
    ms: tuple[float, ...]
    failures: tuple[str, ...]
    answer: str

    def percentile(self, share: float) -> float:
        """Nearest rank: with 10 calls, p95 is the slowest."""
        ordered = sorted(self.ms)
        return ordered[max(0, math.ceil(share * len(ordered)) - 1)]

    @property
    def ok(self) -> bool:
        return not self.failures and self.percentile(0.95) < TARGET_MS


def time_call(client: httpx.Client, call: Call, repeat: int, sample: Sequence[str]) -> Timing:
    """One cold call, then `repeat` timed ones; a non-200 answer is a failure."""
    times: list[float] = []
    failures: list[str] = []
    answer = ""
    for i in range(repeat + 1):
        path, params = call.request(i, datetime.now(UTC), sample)
        clock = time.perf_counter()
        response = client.get(path, params=params)
        body = response.json()
        times.append((time.perf_counter() - clock) * 1000)
        if response.status_code != 200:
            failures.append(f"{response.status_code} {response.text[:200]}")
        elif not answer:
            answer = _answer(body)
    return Timing(call, times[0], tuple(times[1:]), tuple(failures), answer)


# --- the service -------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    # utime and stime are fields 14 and 15 of /proc/PID/stat, after the "(comm)" field.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def wait_settled(pid: int) -> float:
    """Seconds until the service idles (chDB merges the loaded parts in the background,
    which a long-running store has long done), at most SETTLE_LIMIT_SECONDS."""
    start = time.monotonic()
    quiet = 0
    used = _cpu_seconds(pid)
    while quiet < SETTLE_SECONDS and time.monotonic() - start < SETTLE_LIMIT_SECONDS:
        time.sleep(1.0)
        now_used = _cpu_seconds(pid)
        quiet = quiet + 1 if now_used - used < SETTLE_CPU_SHARE else 0
        used = now_used
    return time.monotonic() - start


def _load_average() -> float:
    """The machine's 1-minute load average: other work on the two cores skews the figures."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def _disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@dataclass(frozen=True)
class Run:
    load: LoadReport
    loaded_now: bool
    disk_bytes: int
    ready_seconds: float
    settle_seconds: float
    rss_bytes: int
    repeat: int
    timings: tuple[Timing, ...]
    load_averages: tuple[float, float]


def measure(data_dir: Path, turns: int, repeat: int, seed: int) -> Run:
    report = loaded(data_dir, turns)
    loaded_now = report is None
    if report is None:
        report = load_in_child(data_dir, turns, seed)
    disk = _disk_bytes(data_dir / "chdb")
    service = ServiceProcess(data_dir)
    clock = time.perf_counter()
    with service:
        ready = time.perf_counter() - clock
        assert service.proc is not None
        pid = service.proc.pid
        settled = wait_settled(pid)
        before = _load_average()
        with httpx.Client(base_url=service.url, timeout=120.0) as client:
            timings = tuple(time_call(client, call, repeat, report.sample) for call in calls())
        rss = _rss_bytes(pid)
    return Run(
        report, loaded_now, disk, ready, settled, rss, repeat, timings, (before, _load_average())
    )


# --- the report --------------------------------------------------------------------------


def report_lines(run: Run) -> list[str]:
    load = run.load
    ins = load.insert_seconds
    age = timedelta(milliseconds=int(time.time() * 1000) - load.now_ms)
    lines = [
        f"FactLedger query benchmark: {load.turns:,} turns over the {DAYS} days before the "
        f"load, `factledger serve` on embedded chDB, {os.cpu_count()} cores",
        f"store    {load.verdict_rows:,} verdict rows, {load.findings:,} findings, "
        f"{load.spans:,} spans, {load.reviews:,} reviews; {run.disk_bytes / 2**20:,.0f} MiB "
        "on disk",
    ]
    if run.loaded_now:
        lines.append(
            f"load     {load.load_seconds:.1f} s ({load.turns / load.load_seconds:,.0f} turns/s):"
            f" generating {load.generate_seconds:.1f} s, inserting turns {ins['turns']:.1f} s,"
            f" findings {ins['findings']:.1f} s, spans {ins['spans']:.1f} s,"
            f" reviews {ins['reviews']:.1f} s"
        )
    else:
        lines.append(
            f"load     reused (loaded {age.total_seconds() / 3600:.1f} h ago in "
            f"{load.load_seconds:.1f} s)"
        )
    lines += [
        f"service  ready in {run.ready_seconds:.1f} s, idle after {run.settle_seconds:.0f} s "
        f"(background merges), RSS {run.rss_bytes / 2**20:,.0f} MiB after the calls",
        f"timing   one cold call, then {run.repeat} timed calls each: whole HTTP round trips "
        "on one keep-alive client, in ms",
        f"machine  load average {run.load_averages[0]:.2f} before the calls, "
        f"{run.load_averages[1]:.2f} after (the service alone adds up to 1)",
        "",
        f"{'call':<50} {'answer':<24} {'cold':>7} {'p50':>7} {'p95':>7} {'max':>7}  target",
    ]
    section = ""
    for t in run.timings:
        if t.call.section != section:
            section = t.call.section
            lines.append(section)
        verdict = "OK" if t.ok else "ERROR" if t.failures else "MISS"
        lines.append(
            f"  {t.call.name:<48} {t.answer:<24} {t.cold_ms:>7.0f} {t.percentile(0.5):>7.0f}"
            f" {t.percentile(0.95):>7.0f} {max(t.ms):>7.0f}  <{TARGET_MS:.0f} {verdict}"
        )
        lines.extend(f"    {failure}" for failure in t.failures[:1])
    day = [t for t in run.timings if t.call.window == DAY and t.call.section == "overview"]
    page = sum(t.percentile(0.5) for t in day)
    misses = [t for t in run.timings if not t.ok]
    lines += [
        "",
        f"overview at its default 24h window, {len(day)} calls one after another: "
        f"{page:,.0f} ms (sum of p50)",
        f"result: {len(run.timings) - len(misses)} of {len(run.timings)} calls under "
        f"{TARGET_MS:.0f} ms at p95: " + ("OK" if not misses else "MISS"),
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--turns", type=int, default=None, help=f"turns to load ({DEFAULT_TURNS:,})"
    )
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_TURNS:,} turns")
    parser.add_argument(
        "--repeat", type=int, default=DEFAULT_REPEAT, help=f"timed calls each ({DEFAULT_REPEAT})"
    )
    parser.add_argument("--data-dir", type=Path, help="keep the store here; reuse a same-size one")
    parser.add_argument("--seed", type=int, default=4, help="random seed of the synthetic turns")
    args = parser.parse_args(argv)
    turns = args.turns or (QUICK_TURNS if args.quick else DEFAULT_TURNS)
    if not 1_000 <= turns <= 100_000_000 or not 1 <= args.repeat <= 10_000:
        parser.error("--turns must be 1,000..100,000,000 and --repeat 1..10,000")
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        run = measure(args.data_dir.resolve(), turns, args.repeat, args.seed)
    else:
        folder = Path(tempfile.mkdtemp(prefix="factledger-queries-"))
        try:
            run = measure(folder, turns, args.repeat, args.seed)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print("\n".join(report_lines(run)))
    return 0 if all(t.ok for t in run.timings) else 1


if __name__ == "__main__":
    raise SystemExit(main())
