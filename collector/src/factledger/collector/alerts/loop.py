"""The alert loop: evaluates every rule on a schedule, records state changes in the
`alerts` table and hands notices to the notifier.

It runs on its own daemon thread and only reads aggregated counts from the store, so it
never holds up ingest. One evaluation runs at a time (`run_once` may also be called
directly, with a chosen `now`, as the tests and `factledger alerts check` do). At start
the firing alerts are read back from the store, so a restart neither fires an alert
again nor forgets to resolve it. A state change counts only once its row is stored: if
the insert fails the change is retried at the next evaluation, not lost.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .. import rows
from ..metric_catalogue import CATALOGUE
from ..metrics import MAX_LABEL_CHARS, MAX_LABEL_VALUES, OTHER, GaugeFamily, Metrics
from ..store import MAX_LIST_LIMIT, Store, StoreError
from .evaluator import AlertEvent, Decision, FiringAlert, evaluate, step
from .gauges import RejectRateGauges, prometheus_labels
from .notifier import DeliveryAttempt, Notifier
from .payloads import alert_message, payload
from .rules import AlertConfig, AlertRule, redact_url
from .stats import window_stats

log = logging.getLogger("factledger.alerts")

DEFAULT_TENANT = "default"
DEFAULT_INTERVAL_SECONDS = 30.0
EVALUATIONS = "factledger_alert_evaluations_total"
NOTICES = "factledger_alert_notices_total"
FIRING = "factledger_alert_firing"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class RuleCheck:
    """One rule's decisions at one moment, and the alerts already firing for it."""

    rule: AlertRule
    decisions: tuple[Decision, ...]
    firing: dict[str, FiringAlert]
    error: str | None = None


def restore_states(
    store: Store, config: AlertConfig, tenant: str
) -> dict[tuple[str, str], FiringAlert]:
    """The alerts still firing, per (rule, key), from the store (rules no longer configured
    are left out). Raises StoreError."""
    names = {rule.name for rule in config.rules}
    states: dict[tuple[str, str], FiringAlert] = {}
    for alert in store.alert_summaries(tenant, limit=MAX_LIST_LIMIT, latest_per_group=True):
        if alert["state"] == "firing" and alert["rule"] in names:
            states[(alert["rule"], alert["key"])] = FiringAlert(
                alert_id=alert["alert_id"],
                fired_at=alert["fired_at"],
                notified_at=alert["notified_at"],
                threshold=alert["threshold"],
            )
    return states


def check_rules(
    store: Store, config: AlertConfig, *, now: datetime, tenant: str = DEFAULT_TENANT
) -> list[RuleCheck]:
    """Every rule's decisions at `now`, without recording or sending anything (for
    `factledger alerts check`). A rule whose counts cannot be read carries `error`."""
    config = config.for_tenant(tenant)
    try:
        states = restore_states(store, config, tenant)
    except StoreError as exc:
        log.warning("could not read the alert states: %s", exc)
        states = {}
    checks = []
    for rule in config.rules:
        firing = {key: s for (name, key), s in states.items() if name == rule.name}
        try:
            current, baseline = window_stats(store, tenant, rule, now)
        except StoreError as exc:
            checks.append(RuleCheck(rule, (), firing, str(exc)))
            continue
        decisions = evaluate(rule, current, baseline, keys=firing)
        checks.append(RuleCheck(rule, tuple(decisions), firing))
    return checks


class AlertLoop:
    """Evaluates `config`'s rules for `tenant` (its own section's, where the file has
    one) every `interval` seconds against `store`.

    `start()` restores the firing alerts and starts the notifier and the loop thread;
    `shutdown()` is idempotent. `clock` and `new_id` are injectable for tests.
    """

    def __init__(
        self,
        store: Store,
        config: AlertConfig,
        *,
        tenant: str = DEFAULT_TENANT,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        metrics: Metrics | None = None,
        clock: Callable[[], datetime] = _utcnow,
        new_id: Callable[[], str] = _new_id,
        notifier: Notifier | None = None,
        labels: Mapping[str, str] | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive, not {interval}")
        config = config.for_tenant(tenant)
        self._store = store
        self._config = config
        self._tenant = tenant
        self._interval = interval
        self._metrics = metrics
        self._clock = clock
        self._new_id = new_id
        self._notifier = notifier or Notifier(
            self._record_delivery, config.delivery, metrics=metrics, redact=redact
        )
        model_rule = next((r for r in config.rules if r.group_by == "model"), None)
        self._labels = dict(labels or {})
        self.gauges = RejectRateGauges(
            store,
            tenant,
            model_rule.window if model_rule else config.rules[0].window,
            labels=self._labels,
        )
        self._states: dict[tuple[str, str], FiringAlert] = {}
        self._decisions: dict[str, tuple[datetime, list[Decision]]] = {}
        self._evaluated_at: datetime | None = None
        self._run_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False

    @property
    def config(self) -> AlertConfig:
        return self._config

    @property
    def notifier(self) -> Notifier:
        return self._notifier

    @property
    def interval(self) -> float:
        return self._interval

    @property
    def evaluated_at(self) -> datetime | None:
        """When the rules were last evaluated (None: not yet since start)."""
        return self._evaluated_at

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        try:
            restored = restore_states(self._store, self._config, self._tenant)
        except StoreError as exc:
            # Serving beats not starting: at worst a firing alert is announced again (new id).
            log.warning("could not restore the alert states: %s", exc)
            restored = {}
        with self._state_lock:
            self._states = restored
        self._notifier.start()
        self._thread = threading.Thread(target=self._run, name="factledger-alerts", daemon=True)
        self._thread.start()
        log.info(
            "alerts: %d rules (%s), every %gs, %d firing",
            len(self._config.rules),
            self._config.source or "built-in default",
            self._interval,
            len(restored),
        )

    def shutdown(self, timeout: float = 10.0) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
        self._notifier.shutdown(timeout)

    def _run(self) -> None:
        # The first evaluation waits one interval: the restored states cover the restart.
        while not self._stop.wait(self._interval):
            try:
                self.run_once()
            except Exception:  # the loop outlives any one bad evaluation
                log.exception("alert evaluation failed")

    # --- evaluation -----------------------------------------------------------------------

    def run_once(self, now: datetime | None = None) -> list[AlertEvent]:
        """Evaluate every rule at `now` (default: the clock); record and send the events."""
        with self._run_lock:
            moment = now or self._clock()
            events: list[AlertEvent] = []
            for rule in self._config.rules:
                events.extend(self._run_rule(rule, moment))
            self._evaluated_at = moment
            return events

    def _run_rule(self, rule: AlertRule, now: datetime) -> list[AlertEvent]:
        try:
            current, baseline = window_stats(self._store, self._tenant, rule, now)
        except StoreError as exc:
            log.warning("alert rule %s not evaluated: %s", rule.name, exc)
            self._count(EVALUATIONS, outcome="error")
            return []
        self._count(EVALUATIONS, outcome="ok")
        with self._state_lock:
            firing = [key for (name, key) in self._states if name == rule.name]
        decisions = evaluate(rule, current, baseline, keys=firing)
        events = []
        for decision in decisions:
            slot = (rule.name, decision.key)
            with self._state_lock:
                status = self._states.get(slot)
            new, event = step(rule, status, decision, now=now, new_id=self._new_id)
            if event is None:
                continue
            if not self._record(rule, event):
                continue
            with self._state_lock:
                if new is None:
                    self._states.pop(slot, None)
                else:
                    self._states[slot] = new
            self._notify(rule, event)
            events.append(event)
        with self._state_lock:
            self._decisions[rule.name] = (now, decisions)
        return events

    def _record(self, rule: AlertRule, event: AlertEvent) -> bool:
        row = rows.alert_row(
            tenant=self._tenant,
            alert_id=event.alert_id,
            rule=rule.name,
            group_key=event.key,
            state=event.state,
            value=event.decision.value,
            threshold=event.threshold,
            turns=event.decision.turns,
            fired_at=event.fired_at if event.kind == "resolved" else event.at,
            resolved_at=event.resolved_at,
            message=alert_message(rule, event),
        )
        try:
            self._store.insert_alert(row)
        except StoreError as exc:
            log.warning(
                "alert %s of %s not recorded, retried next time: %s", event.kind, rule.name, exc
            )
            return False
        self._count(NOTICES, state=event.kind)
        log.info("%s", alert_message(rule, event))
        return True

    def _notify(self, rule: AlertRule, event: AlertEvent) -> None:
        for hook in rule.webhooks:
            body = payload(
                hook.format,
                rule,
                event,
                tenant=self._tenant,
                dashboard_url=self._config.dashboard_url,
            )
            self._notifier.submit(event.alert_id, hook.url, body)

    def _record_delivery(self, attempt: DeliveryAttempt) -> None:
        self._store.insert_alert_delivery(
            rows.alert_delivery_row(
                tenant=self._tenant,
                alert_id=attempt.alert_id,
                target=redact_url(attempt.target),
                attempt=attempt.attempt,
                ok=attempt.ok,
                status_code=attempt.status_code,
                error=attempt.error,
                at=attempt.at,
            )
        )

    def _count(self, name: str, **labels: str) -> None:
        if self._metrics is not None:
            self._metrics.inc(name, 1.0, **labels)

    # --- reading --------------------------------------------------------------------------

    def current(self) -> list[dict[str, Any]]:
        """Every (rule, group) of the latest evaluation plus every firing alert: firing
        first, then by rule and key. Keys: rule, group_by, key, state (firing | ok),
        alert_id, fired_at, notified_at (None when ok), value, limit, baseline, turns,
        hits, reason, evaluated_at (None for a restored alert not evaluated yet)."""
        with self._state_lock:
            states = dict(self._states)
            decisions = dict(self._decisions)
        entries: dict[tuple[str, str], dict[str, Any]] = {}
        for configured in self._config.rules:
            evaluated_at, latest = decisions.get(configured.name, (None, []))
            for d in latest:
                entries[(configured.name, d.key)] = {
                    "rule": configured.name,
                    "group_by": configured.group_by,
                    "key": d.key,
                    "value": d.value,
                    "limit": d.limit,
                    "baseline": d.baseline,
                    "turns": d.turns,
                    "hits": d.hits,
                    "reason": d.reason,
                    "evaluated_at": evaluated_at,
                }
        for (name, key), status in states.items():
            rule = self._config.rule(name)
            entry = entries.setdefault(
                (name, key),
                {
                    "rule": name,
                    "group_by": rule.group_by if rule else None,
                    "key": key,
                    "value": None,
                    "limit": status.threshold,
                    "baseline": None,
                    "turns": None,
                    "hits": None,
                    "reason": "restored at start",
                    "evaluated_at": None,
                },
            )
            entry.update(alert_id=status.alert_id, fired_at=status.fired_at)
            entry["notified_at"] = status.notified_at
        for (name, key), entry in entries.items():
            firing = (name, key) in states
            entry["state"] = "firing" if firing else "ok"
            if not firing:
                entry.update(alert_id=None, fired_at=None, notified_at=None)
        return sorted(entries.values(), key=lambda e: (e["state"] != "firing", e["rule"], e["key"]))

    @property
    def tenant(self) -> str:
        return self._tenant

    def metric_families(self) -> tuple[GaugeFamily, ...]:
        """The reject-rate gauges and `factledger_alert_firing{rule,key}`, every sample with
        this loop's `labels`."""
        with self._state_lock:
            firing = sorted(self._states)
        # Group keys are model names from senders: bound them like every other label.
        keys: dict[str, set[str]] = {}
        for name, key in firing:
            kept = keys.setdefault(name, set())
            label = key[:MAX_LABEL_CHARS]
            kept.add(label if label in kept or len(kept) < MAX_LABEL_VALUES else OTHER)
        samples = tuple(
            (prometheus_labels(**self._labels, rule=name, key=key), 1.0)
            for name in sorted(keys)
            for key in sorted(keys[name])
        )
        firing_family = GaugeFamily(FIRING, CATALOGUE[FIRING].help, samples)
        return (*self.gauges.families(), firing_family)
