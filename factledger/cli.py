"""The `factledger` command line."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from factledger.alerts_cli import add_alerts_parser
from factledger.collector.private_dirs import restrict_umask
from factledger.evaluation import evaluate, read_cases
from factledger.processors.errors import FactLedgerError
from factledger.processors.guard import check
from factledger.processors.model import Finding
from factledger.processors.runner import ValidationRunner
from factledger.processors.settings import ValidationSettings
from factledger.reviews_cli import add_reviews_parser
from factledger.settings import DEFAULT_HOST, DEFAULT_PORT, ServiceSettings

PROGRESS_MIN_BYTES = 256 * 1024
_ALERTS_HELP = "alert rules TOML (env FACTLEDGER_ALERTS; default: the built-in rule)"
"""Files at least this large get a progress bar on stderr."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except FactLedgerError as exc:
        print(f"factledger: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"factledger: {exc}", file=sys.stderr)
        return 2
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="factledger",
        description="Check LLM agent replies against their own tool trace.",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="settings TOML ([validation] section: switches, severities, claim rules)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_check = sub.add_parser("check", help="validate one transcript (OpenAI-style chat JSON)")
    p_check.add_argument("file", type=Path, help="transcript JSON: {model, tools, messages}")
    p_check.add_argument("--json", action="store_true", help="print the result as JSON")
    p_check.set_defaults(handler=_cmd_check)

    p_eval = sub.add_parser("eval", help="score the validators on labelled cases (JSONL)")
    p_eval.add_argument("file", type=Path, help="JSONL of {id, transcript, expected}")
    p_eval.add_argument("--json", action="store_true", help="print the report as JSON")
    p_eval.set_defaults(handler=_cmd_eval)

    p_serve = sub.add_parser("serve", help="run the service: OTLP receiver, validation, query API")
    p_serve.add_argument("--host", help=f"address to bind (default {DEFAULT_HOST})")
    p_serve.add_argument("--port", type=int, help=f"port (default {DEFAULT_PORT})")
    p_serve.add_argument(
        "--store", help="store DSN, chdb:///path or http(s)://... (env FACTLEDGER_STORE)"
    )
    p_serve.add_argument(
        "--data-dir", type=Path, help="embedded store and write-ahead log (default ./.factledger)"
    )
    p_serve.add_argument("--alerts", type=Path, metavar="FILE", help=_ALERTS_HELP)
    p_serve.set_defaults(handler=_cmd_serve)

    p_up = sub.add_parser("up", help="run the service on the embedded store with demo traffic")
    p_up.add_argument("--port", type=int, help=f"port (default {DEFAULT_PORT})")
    p_up.add_argument("--data-dir", type=Path, help="data directory (default ./.factledger)")
    p_up.add_argument("--demo-turns", type=int, default=300, help="demo turns to send (0: none)")
    p_up.add_argument("--demo-rate", type=float, default=20.0, help="demo turns per second")
    p_up.add_argument(
        "--dashboard-port", type=int, default=8501, help="dashboard port (default 8501; 0: none)"
    )
    p_up.add_argument("--alerts", type=Path, metavar="FILE", help=_ALERTS_HELP)
    p_up.set_defaults(handler=_cmd_up)

    p_dash = sub.add_parser("dashboard", help="run the dashboard (Streamlit) against a service")
    p_dash.add_argument(
        "--api",
        default=os.environ.get("FACTLEDGER_API") or f"http://{DEFAULT_HOST}:{DEFAULT_PORT}",
        help="the service's base URL (default $FACTLEDGER_API or the local service)",
    )
    p_dash.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p_dash.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p_dash.set_defaults(handler=_cmd_dashboard)

    endpoint_help = (
        "OTLP base URL; /v1/traces is appended "
        "(default $OTEL_EXPORTER_OTLP_ENDPOINT or http://127.0.0.1:4318)"
    )
    p_replay = sub.add_parser("replay", help="send eval-format transcripts as GenAI spans")
    p_replay.add_argument("file", type=Path, help="JSONL of {id, transcript, expected}")
    p_replay.add_argument("--endpoint", default=_default_endpoint(), help=endpoint_help)
    _add_export_options(p_replay)
    p_replay.set_defaults(handler=_cmd_replay)

    p_demo = sub.add_parser("demo", help="scripted agents sending clean and hallucinated turns")
    p_demo.add_argument("--endpoint", default=_default_endpoint(), help=endpoint_help)
    p_demo.add_argument("--turns", type=int, default=200, help="turns to send (default 200)")
    p_demo.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    p_demo.add_argument(
        "--rate", type=float, help="turns per second (default: as fast as possible)"
    )
    _add_export_options(p_demo)
    p_demo.set_defaults(handler=_cmd_demo)

    add_alerts_parser(sub)
    add_reviews_parser(sub)
    return parser


def _default_endpoint() -> str:
    return os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://127.0.0.1:4318"


def _add_export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra HTTP header, e.g. Authorization='Bearer TOKEN' (repeatable)",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="export timeout in seconds")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _headers(pairs: list[str]) -> dict[str, str]:
    headers = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise FactLedgerError(f"--header must be KEY=VALUE, not {pair!r}")
        headers[key.strip()] = value
    return headers


def _cmd_replay(args: argparse.Namespace) -> int:
    from factledger.replay import replay

    report = replay(
        args.file,
        args.endpoint,
        headers=_headers(args.header),
        timeout=args.timeout,
        progress=not args.quiet,
    )
    print(
        f"replayed {report.records} records as {report.spans} spans "
        f"({report.failed} not acknowledged, {report.skipped} skipped)"
    )
    for error in report.errors:
        print(f"  skipped: {error}", file=sys.stderr)
    return 0 if report.failed == 0 else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    from factledger.demo import run_demo

    report = run_demo(
        args.endpoint,
        turns=args.turns,
        seed=args.seed,
        rate=args.rate,
        headers=_headers(args.header),
        timeout=args.timeout,
        progress=not args.quiet,
    )
    print(
        f"sent {report.turns} turns ({report.clean} clean) as {report.spans} spans, "
        f"{report.failed} not acknowledged"
    )
    return 0 if report.failed == 0 else 1


def _cmd_serve(args: argparse.Namespace) -> int:
    restrict_umask()  # the data directory's files: the service's user only
    from factledger.collector.app import create_app
    from factledger.collector.http_server import serve

    settings = ServiceSettings.from_env(
        host=args.host,
        port=args.port,
        store_dsn=args.store,
        data_dir=args.data_dir,
        validation_config=args.config,
        alerts_file=args.alerts,
    )
    _check_alert_rules(settings)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    serve(create_app(settings), settings)
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    restrict_umask()  # the data directory's files: the service's user only
    from factledger.up import run_up

    settings = ServiceSettings.from_env(
        port=args.port,
        data_dir=args.data_dir,
        validation_config=args.config,
        alerts_file=args.alerts,
    )
    _check_alert_rules(settings)
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return run_up(
        settings,
        demo_turns=args.demo_turns,
        demo_rate=args.demo_rate,
        dashboard_port=args.dashboard_port,
    )


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from factledger.dashboard_cli import run_dashboard

    return run_dashboard(args.api, port=args.port, host=args.host)


def _check_alert_rules(settings: ServiceSettings) -> None:
    """Read the alert rules before starting: a bad file fails here, naming the key (or
    the tenant section naming no tenant of this service)."""
    from factledger.collector.alerts.rules import load_alert_config

    load_alert_config(settings.alerts_file).check_tenants(settings.access.tenants)


def _runner(args: argparse.Namespace) -> ValidationRunner:
    settings = ValidationSettings.from_toml(args.config) if args.config else ValidationSettings()
    return ValidationRunner.from_settings(settings)


def _cmd_check(args: argparse.Namespace) -> int:
    try:
        transcript = json.loads(args.file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise FactLedgerError(f"{args.file}: invalid JSON: {exc}") from exc
    result = check(transcript, runner=_runner(args))
    if args.json:
        payload = {
            "verdict": result.outcome.value,
            "findings": [finding_json(f) for f in result.findings],
            "nudge": result.nudge,
            "annotated_reply": result.annotate(),
            "user_quoted": list(result.user_quoted),
            "validators": list(result.verdict.validators),
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(f"verdict: {result.outcome.value}")
        for f in result.findings:
            where = f" @{f.span.start}-{f.span.end}" if f.span else ""
            token = f" `{f.token[:80]}`" if f.token else ""
            print(f"  [{f.effective_severity.value}] {f.kind.value}{token}{where}: {f.message}")
        if result.nudge:
            print("\nself-correction nudge:\n" + result.nudge)
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    runner = _runner(args)
    cases = list(read_cases(args.file))
    show_progress = args.file.stat().st_size >= PROGRESS_MIN_BYTES
    with tqdm(total=len(cases), disable=not show_progress, unit="case", file=sys.stderr) as bar:
        report = evaluate(cases, runner, on_result=lambda _: _advance(bar))
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
    else:
        print(report.table())
    return 0


def _advance(bar: tqdm[Any]) -> None:
    bar.update()


def finding_json(f: Finding) -> dict[str, Any]:
    """A finding as the JSON the CLI (and later the API) prints."""
    return {
        "kind": f.kind.value,
        "class": f.hallucination_class,
        "severity": f.effective_severity.value,
        "message": f.message,
        "token": f.token,
        "checked_against": list(f.checked_against),
        "span": None if f.span is None else [f.span.start, f.span.end],
        "validator": f.validator,
        "score": f.score,
    }


if __name__ == "__main__":
    raise SystemExit(main())
