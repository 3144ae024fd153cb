"""Alerts: the rules and their current state per group, what fires now, and the history
of fired and resolved alerts (GET /alerts/rules and GET /alerts), and a line per verdict
export target (GET /export/status). A service without alerting (404) gets a message."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import streamlit as st

from factledger.dashboard import charts, palette
from factledger.dashboard.client import ApiClient, ExportTargetStatus, NotFound
from factledger.dashboard.figures import parse_time, time_format
from factledger.dashboard.safe_text import markdown_text
from factledger.dashboard.ui import percent, when

_FIRING_CSS = (
    '<style>.st-key-fl_firing_card [data-testid="stMetric"] {'
    f" background: {palette.REJECT_BACKGROUND}; color: {palette.REJECT_TEXT};"
    f" border-color: {palette.REJECT}; }}</style>"
)
HISTORY_LIMIT = 200
MAX_STATE_BARS = 40
TIMELINE_MIN = timedelta(hours=1)
"""The history chart spans at least an hour, so a fresh alert is not a full-width bar."""
TIMELINE_PAD = 0.05
"""Room on either side of the alerts, as a share of the time they span."""


def render(api: ApiClient) -> None:
    st.title("Alerts")
    try:
        config = api.alert_rules()
        payload = api.alerts(limit=HISTORY_LIMIT)
    except NotFound:
        st.info(
            "**This service has no alerting API** (`GET /api/v1/alerts` answered 404). "
            "Alert rules, firing alerts and their history show here once the service runs "
            "a version with alerting.",
            icon=":material/notifications_off:",
        )
        return

    rules = _dicts(config.get("rules"))
    current = _dicts(payload.get("current"))
    history = _dicts(payload.get("history"))
    firing = [c for c in current if c.get("state") == "firing"]

    cells = st.columns(4)
    if firing:  # the card in the reject red: only a firing alert takes it
        st.html(_FIRING_CSS)
    with cells[0].container(key="fl_firing_card"):
        st.metric("Firing", len(firing), border=True)
    cells[1].metric("Rules", len(rules), border=True)
    cells[2].metric("Alerts in the history", len(history), border=True)
    evaluated = payload.get("evaluated_at")
    interval = config.get("interval_seconds")
    cells[3].metric(
        "Last evaluated",
        when(evaluated)[11:] if evaluated else "not yet",
        border=True,
        help=f"Rules are evaluated every {interval:g} s." if interval else None,
    )

    st.subheader("Firing now")
    if firing:
        windows = {r.get("name"): r.get("window") for r in rules}
        notices = {a.get("alert_id"): a for a in history if a.get("alert_id")}
        for entry in firing:
            line = firing_line(
                entry,
                window=windows.get(entry.get("rule")),
                notice=notices.get(entry.get("alert_id")),
            )
            st.error(line, icon=":material/notifications_active:")
    else:
        st.success("Nothing is firing.", icon=":material/check_circle:")

    st.subheader("Rules")
    if rules:
        st.dataframe(rule_rows(rules, current), hide_index=True)
        if config.get("source") == "file":
            st.caption("From the service's rules file (`--alerts FILE` or `FACTLEDGER_ALERTS`).")
        else:
            st.caption("The built-in rule (no rules file is configured).")
    else:
        st.info("No alert rules are configured (`--alerts FILE` or `FACTLEDGER_ALERTS`).")

    st.subheader("Current state per group")
    states = state_rows(current)[:MAX_STATE_BARS]
    if states:
        st.altair_chart(charts.alert_states(states), width="stretch")
        st.caption("Each group's rate over the rule's window; the tick is the limit it fires at.")
    else:
        st.info("The rules have not been evaluated yet, or no group has turns in the window.")

    _export_section(api)

    st.subheader("History")
    if history:
        now = datetime.now(UTC)
        timeline = timeline_rows(history, now)
        start, end = timeline_domain(timeline, now)
        st.altair_chart(
            charts.alert_timeline(
                timeline,
                domain=(start.isoformat(), end.isoformat()),
                time_format=time_format(end - start),
            ),
            width="stretch",
        )
        st.dataframe(
            history_rows(history),
            hide_index=True,
            column_config={"message": st.column_config.TextColumn("message", width="large")},
        )
    else:
        st.info("No alert has fired yet.")


def _export_section(api: ApiClient) -> None:
    try:
        targets = api.export_status()["targets"]
    except NotFound:
        return  # a service from before verdict export: nothing to say
    st.subheader("Verdict export")
    if not targets:
        st.caption("No export target is configured (`[export]` in the settings file).")
        return
    for target in targets:
        line = export_line(target)
        if target["pending"] and target["lag_seconds"] > EXPORT_LAG_WARNING_SECONDS:
            st.info(line, icon=":material/schedule_send:")
        else:
            st.markdown(line)


EXPORT_LAG_WARNING_SECONDS = 300.0
"""A target whose oldest pending verdict has waited longer than this shows as a warning."""


def export_line(target: ExportTargetStatus) -> str:
    """One export target's counts as a line of Markdown (every value escaped)."""
    dropped = {reason: n for reason, n in target["dropped"].items() if n}
    drops = ", ".join(f"{markdown_text(r)} {n}" for r, n in sorted(dropped.items()))
    lag = f", oldest waiting {target['lag_seconds']:.0f} s" if target["pending"] else ""
    return (
        f"**{markdown_text(target['target'])}**: {target['sent']} sent, "
        f"{target['retried']} retried, {sum(dropped.values())} dropped"
        f"{f' ({drops})' if drops else ''}, {target['pending']} pending{lag}"
    )


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _rate(value: Any) -> str:
    return percent(float(value)) if isinstance(value, int | float) else "–"


def firing_line(
    entry: Mapping[str, Any], *, window: Any = None, notice: Mapping[str, Any] | None = None
) -> str:
    """One firing alert as one sentence of Markdown (every value escaped): the group, its
    rate now over how many turns of the rule's window, the limit it is above and which
    limit that is, since when. The history holds the figures of the alert's last notice;
    where they differ from now's, the sentence says them too, so the banner and the
    history never show two counts without saying which is which. The evaluator's reason
    says the same figures as now's, so it is not repeated."""
    rule = markdown_text(entry.get("rule", "alert"))
    group = markdown_text(f"{entry.get('group_by') or 'group'} {entry.get('key') or ''}".strip())
    since = f", firing since {when(entry['fired_at'])}" if entry.get("fired_at") else ""
    source = _limit_source(str(entry.get("reason") or ""))
    which = f" ({markdown_text(source)})" if source else ""
    span = f" in the last {markdown_text(window)}" if isinstance(window, str) and window else ""
    turns = entry.get("turns") or 0
    return (
        f"**{rule}** · {group}: {_rate(entry.get('value'))} of {turns} turns{span} now, "
        f"above its limit of {_rate(entry.get('limit'))}{which}{since}"
        f"{_at_notice(entry, notice)}."
    )


def _at_notice(entry: Mapping[str, Any], notice: Mapping[str, Any] | None) -> str:
    """`; at its last notice, 40.0% of 99 turns` when the history's figures differ."""
    if notice is None:
        return ""
    then = (_rate(notice.get("value")), notice.get("turns"))
    if then == (_rate(entry.get("value")), entry.get("turns")) or then[1] is None:
        return ""
    at = f" ({when(notice['notified_at'])[11:]})" if notice.get("notified_at") else ""
    return f"; at its last notice{at}, {then[0]} of {then[1]} turns"


_LIMIT_SOURCE = re.compile(r"^above (.+?) \(")


def _limit_source(reason: str) -> str:
    """Which limit a firing reason names: `above 2x baseline (...)` -> `2× the baseline`."""
    found = _LIMIT_SOURCE.match(reason)
    if not found:
        return ""
    source = found.group(1)
    if source == "threshold":
        return "the threshold"
    factor = source.removesuffix("x baseline")
    return f"{factor}× the baseline" if factor != source else source


def rule_rows(
    rules: Iterable[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The rules as table rows, each with its state: how many of its groups fire."""
    out = []
    for rule in rules:
        name = rule.get("name")
        groups = [c for c in current if c.get("rule") == name]
        firing = sum(1 for c in groups if c.get("state") == "firing")
        factor = rule.get("baseline_factor")
        out.append(
            {
                "rule": name,
                "state": (
                    f"firing ({firing})"
                    if firing
                    else f"ok ({len(groups)} {'group' if len(groups) == 1 else 'groups'})"
                    if groups
                    else "not evaluated yet"
                ),
                "per": rule.get("group_by"),
                "verdict": rule.get("verdict"),
                "window": rule.get("window"),
                "threshold": _rate(rule.get("threshold")),
                "baseline": baseline_text(factor, rule.get("baseline_windows")),
                "min turns": rule.get("min_turns"),
                "cool-down": rule.get("cooldown"),
                "webhooks": len(rule.get("webhooks") or []),
            }
        )
    return out


def baseline_text(factor: Any, windows: Any) -> str:
    """A rule's baseline comparison in words: `above 2× the rate of the 4 windows before`
    (`–` for a rule with an absolute threshold only)."""
    if not isinstance(factor, int | float) or isinstance(factor, bool) or not factor:
        return "–"
    before = f"the {windows} windows before" if windows != 1 else "the window before"
    return f"above {factor:g}× the rate of {before}"


def state_rows(current: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Evaluated (rule, group) pairs with a value, for the state chart: firing first."""
    out = [
        {
            "group": f"{c.get('rule')} · {c.get('key')}",
            "state": str(c.get("state") or "ok"),
            "value": float(c["value"]),
            "limit": float(c["limit"]) if isinstance(c.get("limit"), int | float) else None,
            "turns": c.get("turns"),
        }
        for c in current
        if isinstance(c.get("value"), int | float)
    ]
    return sorted(out, key=lambda r: (r["state"] != "firing", -r["value"], r["group"]))


def timeline_rows(history: Iterable[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """Each alert as a bar from when it fired to when it resolved (now while firing)."""
    out = []
    for alert in history:
        if not alert.get("fired_at"):
            continue
        resolved = alert.get("resolved_at")
        out.append(
            {
                "group": f"{alert.get('rule')} · {alert.get('key')}",
                "state": str(alert.get("state") or ""),
                "start": parse_time(alert["fired_at"]).isoformat(),
                "end": (parse_time(resolved) if resolved else now).isoformat(),
                "value": alert.get("value"),
                "message": str(alert.get("message") or ""),
            }
        )
    return out


def timeline_domain(rows: Sequence[Mapping[str, Any]], now: datetime) -> tuple[datetime, datetime]:
    """The history chart's time axis: from just before the first alert to just after the
    last one ends (now while one fires), at least TIMELINE_MIN long, so alerts of last
    week fill the chart rather than a sliver at the start of a week of nothing."""
    if not rows:
        return now - TIMELINE_MIN, now
    first = min(parse_time(r["start"]) for r in rows)
    last = max(parse_time(r["end"]) for r in rows)
    pad = (last - first) * TIMELINE_PAD
    start, end = first - pad, min(now, last + pad)
    if end - start < TIMELINE_MIN:  # widened on both sides, never past now
        end = min(now, end + (TIMELINE_MIN - (end - start)) / 2)
        start = end - TIMELINE_MIN
    return start, end


def history_rows(history: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Alerts as table rows, newest first as the API sends them."""
    out = []
    for alert in history:
        deliveries = _dicts(alert.get("deliveries"))
        failed = sum(1 for d in deliveries if not d.get("ok"))
        out.append(
            {
                "rule": alert.get("rule"),
                "group": alert.get("key"),
                "state": alert.get("state"),
                "fired": when(alert["fired_at"]) if alert.get("fired_at") else "",
                "resolved": when(alert["resolved_at"]) if alert.get("resolved_at") else "",
                "rate at last notice": _rate(alert.get("value")),
                "threshold": _rate(alert.get("threshold")),
                "turns at last notice": alert.get("turns"),
                "notices": alert.get("notices"),
                "deliveries": f"{len(deliveries) - failed} ok, {failed} failed"
                if deliveries
                else "–",
                "message": alert.get("message"),
            }
        )
    return out
