"""`factledger alerts check`: evaluate the alert rules once against the store and print
what would fire. Nothing is recorded and no webhook is called.

It opens the store itself. An embedded chDB path can be open in one process only, so
this cannot run while `factledger serve` or `up` holds the same path (it says so and
stops); against a ClickHouse server it can run beside the service. A running service
shows its alerts at GET /api/v1/alerts.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factledger.collector.access import DEFAULT_TENANT
from factledger.collector.alerts.evaluator import Decision
from factledger.collector.alerts.rules import AlertConfig, AlertRule, format_duration
from factledger.extras import require
from factledger.processors.errors import FactLedgerError

if TYPE_CHECKING:  # the loop imports the store driver: only `run_check` needs it
    from factledger.collector.alerts.loop import RuleCheck

_FIRING = ("WOULD FIRE", "FIRING")
_RATE = {"reject": "reject rate", "flag": "flag rate", "any": "reject-or-flag rate"}
MAX_OK_LINES = 20
"""Groups within their limits printed per rule; the rest are counted."""

_EPILOG = """\
exit status: 0 nothing would fire, 1 some group is (or would start) firing, 2 an error.

The store is opened directly. An embedded store (chdb://) can be opened by one process
only: stop `factledger serve`/`up` on that data directory first, or ask the running
service instead (GET /api/v1/alerts). A ClickHouse server (http://...) can be checked
while the service runs.
"""


def add_alerts_parser(sub: Any) -> None:
    """Register `alerts check` on the CLI's subcommands (`sub` from add_subparsers)."""
    p_alerts = sub.add_parser("alerts", help="alert rules: check them against the store")
    alerts_sub = p_alerts.add_subparsers(dest="alerts_command", required=True)
    p_check = alerts_sub.add_parser(
        "check",
        help="evaluate the rules once and print what would fire (service must not hold "
        "the same chDB path)",
        description="Evaluate the alert rules once against the store and print what would\n"
        "fire. Nothing is recorded, no webhook is called.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_check.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="alert rules TOML (default $FACTLEDGER_ALERTS, else the built-in rule)",
    )
    p_check.add_argument(
        "--store",
        metavar="DSN",
        help="chdb:///path or http(s)://... (default $FACTLEDGER_STORE, else the embedded "
        "store under --data-dir); must not be a chDB path a running service holds",
    )
    p_check.add_argument(
        "--data-dir", type=Path, help="data directory of the embedded store (default ./.factledger)"
    )
    p_check.add_argument("--database", help="ClickHouse database (default factledger)")
    p_check.add_argument(
        "--tenant",
        default=DEFAULT_TENANT,
        help="the tenant whose turns are checked (default: default)",
    )
    p_check.add_argument(
        "--at", type=_moment, metavar="TIME", help="evaluate as of this ISO 8601 time (default now)"
    )
    p_check.add_argument("--json", action="store_true", help="print the decisions as JSON")
    p_check.set_defaults(handler=run_check)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def run_check(args: argparse.Namespace) -> int:
    """The `alerts check` command: 0 nothing fires, 1 something fires."""
    require("alerts check", "service")
    from factledger.collector.alerts.loop import check_rules
    from factledger.collector.alerts.rules import load_alert_config
    from factledger.collector.settings import ServiceSettings
    from factledger.collector.store import Store, StoreConfig, StoreError

    settings = ServiceSettings.from_env(
        store_dsn=args.store, data_dir=args.data_dir, alerts_file=args.rules
    )
    database = args.database or settings.database
    config = load_alert_config(settings.alerts_file)
    dsn = settings.dsn
    path = embedded_path(dsn)
    if path is not None:
        if not path.exists():
            raise FactLedgerError(f"no store at {path}: nothing to check (see --store)")
        ensure_unlocked(path)
    try:
        store = Store.open(StoreConfig(dsn=dsn, database=database, cluster=settings.cluster))
    except StoreError as exc:
        if path is not None and _is_lock_error(str(exc)):
            raise FactLedgerError(_locked_message(path)) from None
        raise FactLedgerError(f"cannot open the store {dsn}: {exc}") from None
    try:
        now = args.at or datetime.now(UTC)
        checks = check_rules(store, config, now=now, tenant=args.tenant)
    finally:
        store.close()
    if args.json:
        print(json.dumps(checks_json(checks, config, now), ensure_ascii=False, indent=2))
    else:
        print(format_checks(checks, config, now))
    firing = any(_status(c, d) in _FIRING for c in checks for d in c.decisions)
    return 1 if firing else 0


# --- the store's lock ---------------------------------------------------------------------


def embedded_path(dsn: str) -> Path | None:
    """The data path of a `chdb://` DSN, None for a server DSN."""
    if not dsn.lower().startswith("chdb://"):
        return None
    return Path(dsn[len("chdb://") :].partition("?")[0] or ".")


def ensure_unlocked(path: Path) -> None:
    """Raise FactLedgerError when another process holds the chDB data path.

    ClickHouse holds an exclusive flock on `<path>/status` while it runs; probing it
    first gives a clear message instead of the engine's own error."""
    status = path / "status"
    if not status.exists():
        return
    fd = os.open(status, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except BlockingIOError:
        raise FactLedgerError(_locked_message(path)) from None
    finally:
        os.close(fd)


def _is_lock_error(text: str) -> bool:
    return "EmbeddedServer" in text or "Cannot lock file" in text


def _locked_message(path: Path) -> str:
    return (
        f"the store at {path} is in use by another process (is `factledger serve` or "
        "`factledger up` running on it?). An embedded store opens in one process only: "
        "stop the service first, or ask it instead: GET /api/v1/alerts"
    )


# --- output -------------------------------------------------------------------------------


def _status(check: RuleCheck, d: Decision) -> str:
    already = d.key in check.firing
    if d.firing:
        return "FIRING" if already else "WOULD FIRE"
    return "WOULD RESOLVE" if already else "ok"


def describe_rule(rule: AlertRule) -> str:
    """ "model, reject rate over 15m: above 30.0% or 2x baseline (4 windows); >= 20 turns"."""
    limits = []
    if rule.threshold is not None:
        limits.append(f"{rule.threshold:.1%}")
    if rule.baseline_factor is not None:
        limits.append(f"{rule.baseline_factor:g}x baseline ({rule.baseline_windows} windows)")
    return (
        f"{rule.group_by}, {_RATE[rule.verdict]} over {format_duration(rule.window)}: "
        f"above {' or '.join(limits)}; at least {rule.min_turns} turns"
    )


def format_checks(checks: Sequence[RuleCheck], config: AlertConfig, now: datetime) -> str:
    """The human-readable report of `alerts check`."""
    source = config.source or "built-in default rule"
    lines = [f"rules: {source}; evaluated at {now.astimezone(UTC).isoformat()}"]
    total = 0
    for check in checks:
        lines.append("")
        lines.append(f"{check.rule.name}  ({describe_rule(check.rule)})")
        if check.error:
            lines.append(f"  not evaluated: {check.error}")
            continue
        if not check.decisions:
            lines.append("  no turns in the window")
            continue
        shown_ok = 0
        width = max(len(d.key or "(none)") for d in check.decisions)
        for d in sorted(check.decisions, key=lambda d: (_status(check, d) == "ok", -d.value)):
            status = _status(check, d)
            if status == "ok":
                shown_ok += 1
                if shown_ok > MAX_OK_LINES:
                    continue
            elif status in _FIRING:
                total += 1
            baseline = "-" if d.baseline is None else f"{d.baseline:.1%}"
            since = ""
            if d.key in check.firing:
                since = f"; firing since {check.firing[d.key].fired_at:%Y-%m-%d %H:%M} UTC"
            lines.append(
                f"  {status:<13} {d.key or '(none)':<{width}}  {d.value:6.1%}  "
                f"{d.hits}/{d.turns} turns  baseline {baseline}  {d.reason}{since}"
            )
        if shown_ok > MAX_OK_LINES:
            lines.append(f"  ... and {shown_ok - MAX_OK_LINES} more groups within their limits")
    lines.append("")
    lines.append(
        f"{total} group{'s' if total != 1 else ''} firing or would fire"
        if total
        else "nothing would fire"
    )
    return "\n".join(lines)


def checks_json(checks: Sequence[RuleCheck], config: AlertConfig, now: datetime) -> dict[str, Any]:
    """The JSON report of `alerts check --json`."""
    return {
        "rules_source": str(config.source) if config.source else None,
        "evaluated_at": now.astimezone(UTC).isoformat(),
        "rules": [
            {
                "rule": check.rule.as_json(),
                "error": check.error,
                "groups": [
                    {
                        "key": d.key,
                        "status": _status(check, d),
                        "firing": d.firing,
                        "value": d.value,
                        "hits": d.hits,
                        "turns": d.turns,
                        "limit": d.limit,
                        "baseline": d.baseline,
                        "baseline_turns": d.baseline_turns,
                        "reason": d.reason,
                    }
                    for d in check.decisions
                ],
            }
            for check in checks
        ],
    }
