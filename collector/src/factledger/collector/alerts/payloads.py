"""What a notice says: one line of text, the generic JSON payload and the Slack one.

Pure functions of an `AlertEvent` and its rule; the notifier only sends what they build.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .evaluator import AlertEvent
from .rules import AlertRule, WebhookFormat, format_duration
from .slack_text import mrkdwn_text

_COUNTED = {"reject": "rejected", "flag": "flagged", "any": "rejected or flagged"}
_HEADLINE = {"firing": "FIRING", "repeat": "STILL FIRING", "resolved": "RESOLVED"}
_EMOJI = {
    "firing": ":rotating_light:",
    "repeat": ":rotating_light:",
    "resolved": ":white_check_mark:",
}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def group_label(rule: AlertRule, key: str) -> str:
    """ "model gpt-4o", "kind stall", "agent (none)"."""
    return f"{rule.group_by} {key or '(none)'}"


def alert_message(rule: AlertRule, event: AlertEvent) -> str:
    """One line for people: what, how much, against what, since when."""
    d = event.decision
    window = format_duration(rule.window)
    if rule.group_by == "kind":
        what = f"{d.value:.1%} of {d.turns} turns had a {event.key or '(none)'} finding"
        what += f" ({_COUNTED[rule.verdict]})"
    else:
        what = f"{_COUNTED[rule.verdict]} {d.value:.1%} of {d.turns} turns"
    context = f"limit {event.threshold:.1%}"
    if d.baseline is not None:
        context += f", baseline {d.baseline:.1%}"
    head = f"{_HEADLINE[event.kind]} {rule.name}: {group_label(rule, event.key)}"
    if event.kind == "resolved":
        return (
            f"{head} back to {d.value:.1%} of {d.turns} turns over the last {window} "
            f"({context}); fired {_clock(event.fired_at)}"
        )
    tail = f"; firing since {_clock(event.fired_at)}" if event.kind == "repeat" else ""
    return f"{head} {what} over the last {window} ({context}){tail}"


def json_payload(
    rule: AlertRule, event: AlertEvent, *, tenant: str, dashboard_url: str | None = None
) -> dict[str, Any]:
    """The generic webhook body (see docs/alerting.md for every field)."""
    d = event.decision
    payload: dict[str, Any] = {
        "alert_id": event.alert_id,
        "tenant": tenant,
        "rule": rule.name,
        "state": event.state,
        "repeat": event.kind == "repeat",
        "group_by": rule.group_by,
        "key": event.key,
        "verdict": rule.verdict,
        "value": d.value,
        "threshold": event.threshold,
        "baseline": d.baseline,
        "baseline_factor": rule.baseline_factor,
        "turns": d.turns,
        "hits": d.hits,
        "window": format_duration(rule.window),
        "window_seconds": int(rule.window.total_seconds()),
        "fired_at": _iso(event.fired_at),
        "resolved_at": _iso(event.resolved_at),
        "sent_for": _iso(event.at),
        "message": alert_message(rule, event),
    }
    if dashboard_url:
        payload["dashboard_url"] = dashboard_url
    return payload


def slack_payload(
    rule: AlertRule, event: AlertEvent, *, tenant: str, dashboard_url: str | None = None
) -> dict[str, Any]:
    """A Slack incoming-webhook body: `text` for notifications, `blocks` for the message."""
    d = event.decision
    # The message names the group, and group keys are whatever senders wrote.
    text = f"{_EMOJI[event.kind]} {mrkdwn_text(alert_message(rule, event))}"
    fields = [
        f"*Value*\n{d.value:.1%} ({d.hits} of {d.turns} turns)",
        f"*Limit*\n{event.threshold:.1%}",
        f"*Baseline*\n{'-' if d.baseline is None else format(d.baseline, '.1%')}",
        f"*Window*\n{format_duration(rule.window)}",
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": f} for f in fields]},
    ]
    context = (
        f"tenant `{mrkdwn_text(tenant)}` · alert `{event.alert_id}`"
        f" · fired {_clock(event.fired_at)}"
    )
    if dashboard_url:
        context += f" · <{dashboard_url}|dashboard>"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    return {"text": text, "blocks": blocks}


def payload(
    fmt: WebhookFormat,
    rule: AlertRule,
    event: AlertEvent,
    *,
    tenant: str,
    dashboard_url: str | None = None,
) -> dict[str, Any]:
    """The body for a webhook of format `fmt`, naming the tenant whose turns it counts."""
    build = slack_payload if fmt == "slack" else json_payload
    return build(rule, event, tenant=tenant, dashboard_url=dashboard_url)
