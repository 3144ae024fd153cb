"""The `factledger` command line."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factledger import reply_marks
from factledger.alerts_cli import add_alerts_parser
from factledger.collector.private_dirs import restrict_umask, usable_data_directory
from factledger.evaluation import Case, CaseResult, evaluate, read_cases
from factledger.extras import MissingExtra, require
from factledger.ports import DEFAULT_GRPC_PORT, DEFAULT_HOST, DEFAULT_PORT, check_port_free
from factledger.processors.config_files import read_toml
from factledger.processors.errors import FactLedgerError, TranscriptError
from factledger.processors.guard import CheckResult, check
from factledger.processors.kinds import hallucination_class_of
from factledger.processors.model import Finding
from factledger.processors.runner import ValidationRunner
from factledger.processors.settings import ValidationSettings
from factledger.processors.verification.base import Verification, Verifier
from factledger.progress import progress_bar
from factledger.reviews_cli import add_reviews_parser
from factledger.verifiers.settings import VerificationSettings

if TYPE_CHECKING:  # the service's settings import its dependencies (the service extra)
    from factledger.collector.settings import ServiceSettings

_ALERTS_HELP = "alert rules TOML (env FACTLEDGER_ALERTS; default: the built-in rule)"
_DATA_DIR_HELP = (
    "embedded store and write-ahead log (env FACTLEDGER_DATA_DIR; default ./.factledger)"
)
COLOR_CHOICES = ("auto", "always", "never")
DEMO_MODES = ("auto", "always", "never")
"""`factledger up --demo` (factledger.up.DemoMode), here so --help imports no service code."""
DEMO_TURNS = 200
"""The demo turns `factledger demo` sends, and `factledger up` sends at start: one default."""
HINT_MAX_BYTES = 64 * 1024 * 1024
"""A file that fails as eval cases is read whole, to see whether it is one transcript,
only up to this size."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)  # --help writes too
        code: int = args.handler(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
    except BrokenPipeError:
        return _reader_gone()
    except MissingExtra as exc:
        print(exc, file=sys.stderr)  # names the command itself
        return 2
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
        help="settings TOML ([validation] section: switches, severities, claim rules; "
        "default: the built-in settings)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_check = sub.add_parser(
        "check",
        help="validate one transcript (OpenAI-style chat JSON)",
        description="Validate one transcript and print its verdict, the reply with the "
        "offending tokens marked, and the findings. For a JSONL file of labelled cases "
        "use `factledger eval`.",
    )
    p_check.add_argument("file", type=Path, help="transcript JSON: {model, tools, messages}")
    p_check.add_argument("--json", action="store_true", help="print the result as JSON")
    p_check.add_argument(
        "--nudge",
        action="store_true",
        help="also print the self-correction message an agent loop would send the model",
    )
    p_check.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the marks (default %(default)s: when printing to a terminal and "
        "NO_COLOR is unset)",
    )
    p_check.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="[NAME=]PATH_OR_URL",
        help="a git repository to settle the reply's commits, branches, paths and symbols "
        "at (repeatable; a URL is mirrored); with one, every turn concerns it (default: "
        "the repositories of --config's [verification.git], if any)",
    )
    p_check.add_argument(
        "--workspace",
        metavar="DIR",
        help="a directory the agent worked in, to settle paths and symbols at (default: "
        "--config's [verification.workspace], if any)",
    )
    p_check.add_argument(
        "--links",
        action="store_true",
        help="check the reply's links over HTTP(S) (public addresses only; default: off "
        "unless --config's [verification.links] is there)",
    )
    p_check.add_argument(
        "--verify-budget",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time for every source of truth together (default %(default)s)",
    )
    p_check.set_defaults(handler=_cmd_check)

    p_eval = sub.add_parser(
        "eval",
        help="score the validators on labelled cases (JSONL)",
        description="Score the validators on labelled cases, one JSON object per line. "
        "For a single transcript use `factledger check`.",
    )
    p_eval.add_argument("file", type=Path, help="JSONL of {id, transcript, expected}")
    p_eval.add_argument("--json", action="store_true", help="print the report as JSON")
    p_eval.set_defaults(handler=_cmd_eval)

    p_serve = sub.add_parser(
        "serve",
        help="run the service: OTLP receiver, validation, query API",
        description="Run the service: receive OTLP traces, rebuild agent turns from their "
        "spans, validate each turn against its tool trace, store spans and verdicts, and "
        "answer the query API (/api/v1) that the dashboard reads.",
    )
    p_serve.add_argument("--host", help=f"address to bind (default {DEFAULT_HOST})")
    p_serve.add_argument(
        "--port", type=int, help=f"HTTP port: OTLP/HTTP and the query API (default {DEFAULT_PORT})"
    )
    _add_grpc_options(p_serve)
    p_serve.add_argument(
        "--no-otlp-http",
        dest="otlp_http",
        action="store_const",
        const=False,
        help="take OTLP over gRPC only: no /v1/traces and /v1/logs on the HTTP port, the query "
        "API stays (env FACTLEDGER_OTLP_HTTP_ENABLED=false; default: OTLP on both ports)",
    )
    p_serve.add_argument(
        "--store",
        help="store DSN, chdb:///path or http(s)://... (env FACTLEDGER_STORE; default: "
        "the embedded store in the data directory)",
    )
    p_serve.add_argument("--data-dir", type=Path, help=_DATA_DIR_HELP)
    p_serve.add_argument("--alerts", type=Path, metavar="FILE", help=_ALERTS_HELP)
    # Also after the command, where a service's options are looked for; SUPPRESS keeps
    # one given before it (`factledger --config FILE serve`).
    p_serve.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="settings TOML ([validation], [verification]), as before the command "
        "(default: the one given before it, else the built-in settings)",
    )
    p_serve.set_defaults(handler=_cmd_serve)

    p_up = sub.add_parser(
        "up",
        help="run the service on the embedded store with the dashboard and demo traffic",
        description="Run the service on the embedded store, the dashboard and demo traffic. "
        "The data stays in the data directory between runs; demo traffic goes only into "
        "an empty store unless --demo always; --fresh starts from an empty store.",
    )
    p_up.add_argument(
        "--port", type=int, help=f"HTTP port: OTLP/HTTP and the query API (default {DEFAULT_PORT})"
    )
    _add_grpc_options(p_up)
    p_up.add_argument("--data-dir", type=Path, help=_DATA_DIR_HELP)
    p_up.add_argument(
        "--fresh",
        action="store_true",
        help="remove the embedded store and write-ahead log of the data directory first",
    )
    p_up.add_argument(
        "--demo",
        choices=DEMO_MODES,
        default="auto",
        help="demo traffic: auto sends it only into an empty store (default %(default)s)",
    )
    p_up.add_argument(
        "--demo-turns",
        type=int,
        default=DEMO_TURNS,
        help="demo turns sent at start, then a trickle (default %(default)s; 0: none)",
    )
    p_up.add_argument(
        "--demo-rate",
        type=float,
        default=20.0,
        help="demo turns per second at start (default %(default)s)",
    )
    p_up.add_argument(
        "--dashboard-port",
        type=int,
        default=8501,
        help="dashboard port (default %(default)s; 0: no dashboard)",
    )
    p_up.add_argument("--alerts", type=Path, metavar="FILE", help=_ALERTS_HELP)
    p_up.set_defaults(handler=_cmd_up)

    p_dash = sub.add_parser(
        "dashboard",
        help="run the dashboard (Streamlit) against a service",
        description="Serve the Streamlit dashboard (Overview, Turns, Verify, Alerts) against "
        "a running service; it reads only the service's /api/v1. FACTLEDGER_READ_TOKEN is "
        "the token it reads with (a review token to label turns), FACTLEDGER_REVIEWER the "
        "name its labels carry until one is typed.",
    )
    p_dash.add_argument(
        "--api",
        default=os.environ.get("FACTLEDGER_API") or f"http://{DEFAULT_HOST}:{DEFAULT_PORT}",
        help="the service's base URL (default $FACTLEDGER_API, else %(default)s)",
    )
    p_dash.add_argument("--port", type=int, default=8501, help="port (default %(default)s)")
    p_dash.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    p_dash.set_defaults(handler=_cmd_dashboard)

    endpoint_help = (
        "OTLP base URL; /v1/traces is appended "
        "(default $OTEL_EXPORTER_OTLP_ENDPOINT or http://127.0.0.1:4318)"
    )
    p_replay = sub.add_parser(
        "replay",
        help="send eval-format transcripts as GenAI spans",
        description="Send each transcript of an eval-format JSONL file (the cases of "
        "`factledger eval`) to an OTLP/HTTP endpoint as the GenAI spans of one agent turn, "
        "for a running service to validate and store.",
    )
    p_replay.add_argument("file", type=Path, help="JSONL of {id, transcript, expected}")
    p_replay.add_argument("--endpoint", default=_default_endpoint(), help=endpoint_help)
    _add_export_options(p_replay)
    p_replay.set_defaults(handler=_cmd_replay)

    p_demo = sub.add_parser(
        "demo",
        help="scripted agents sending clean and hallucinated turns",
        description="Run two scripted agents (coder, support) against real in-memory tools "
        "and send their turns, clean and hallucinated, to an OTLP/HTTP endpoint as GenAI "
        "spans: traffic to see the service and the dashboard at work.",
    )
    p_demo.add_argument("--endpoint", default=_default_endpoint(), help=endpoint_help)
    p_demo.add_argument(
        "--turns", type=int, default=DEMO_TURNS, help="turns to send (default %(default)s)"
    )
    p_demo.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    p_demo.add_argument(
        "--rate", type=float, help="turns per second (default: as fast as possible)"
    )
    _add_export_options(p_demo)
    p_demo.set_defaults(handler=_cmd_demo)

    add_alerts_parser(sub)
    add_reviews_parser(sub)
    return parser


def _reader_gone() -> int:
    """The reader of stdout went away (`factledger ... | head`): end quietly, as a Unix
    tool does. Python would report the broken pipe again when it flushes stdout at exit,
    so stdout is pointed at /dev/null first."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout without a descriptor (captured): nothing to do
        pass
    return 128 + 13  # what a shell reports for a process ended by SIGPIPE


def _add_grpc_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--grpc-port",
        type=int,
        metavar="PORT",
        help=f"OTLP/gRPC port (env FACTLEDGER_GRPC_PORT; default {DEFAULT_GRPC_PORT}; 0: none)",
    )
    parser.add_argument(
        "--no-grpc",
        dest="grpc_port",
        action="store_const",
        const=0,
        help="no OTLP/gRPC receiver, as --grpc-port 0 (default: one on the gRPC port)",
    )


def _check_ports_free(settings: ServiceSettings) -> None:
    check_port_free(settings.host, settings.port, "--port")
    if settings.grpc_port:
        check_port_free(settings.host, settings.grpc_port, "--grpc-port")


def _default_endpoint() -> str:
    return os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://127.0.0.1:4318"


def _add_export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra HTTP header, e.g. Authorization='Bearer TOKEN' (repeatable; default: none)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="export timeout in seconds (default %(default)s)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar on stderr (shown after a second)"
    )


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
    require("serve", "service")
    restrict_umask()  # the data directory's files: the service's user only
    from factledger.collector.app import create_app
    from factledger.collector.http_server import serve
    from factledger.collector.settings import ServiceSettings

    settings = ServiceSettings.from_env(
        host=args.host,
        port=args.port,
        grpc_port=args.grpc_port,
        otlp_http=args.otlp_http,
        store_dsn=args.store,
        data_dir=args.data_dir,
        validation_config=args.config,
        alerts_file=args.alerts,
    )
    _check_alert_rules(settings)
    usable_data_directory(settings.data_dir)
    _check_ports_free(settings)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    serve(create_app(settings), settings)
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    require("up", *(("service", "dashboard") if args.dashboard_port else ("service",)))
    restrict_umask()  # the data directory's files: the service's user only
    from factledger.collector.settings import ServiceSettings
    from factledger.up import run_up

    settings = ServiceSettings.from_env(
        port=args.port,
        grpc_port=args.grpc_port,
        data_dir=args.data_dir,
        validation_config=args.config,
        alerts_file=args.alerts,
    )
    _check_alert_rules(settings)
    usable_data_directory(settings.data_dir)
    _check_ports_free(settings)
    if args.dashboard_port:
        from factledger.dashboard_cli import DEFAULT_DASHBOARD_HOST

        check_port_free(DEFAULT_DASHBOARD_HOST, args.dashboard_port, "--dashboard-port")
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return run_up(
        settings,
        demo_turns=args.demo_turns,
        demo_rate=args.demo_rate,
        dashboard_port=args.dashboard_port,
        demo=args.demo,
        fresh=args.fresh,
    )


def _cmd_dashboard(args: argparse.Namespace) -> int:
    require("dashboard", "dashboard")
    from factledger.dashboard_cli import run_dashboard

    check_port_free(args.host, args.port, "--port")
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
    transcript = _read_transcript(args.file)
    verifiers = _verifiers(args)
    result = check(
        transcript,
        runner=_runner(args),
        verifiers=verifiers,
        budget_seconds=args.verify_budget,
    )
    if args.json:
        payload = {
            "verdict": result.outcome.value,
            "findings": [finding_json(f) for f in result.findings],
            "nudge": result.nudge,
            "annotated_reply": result.annotate(),
            "user_quoted": list(result.user_quoted),
            "validators": list(result.verdict.validators),
            "verifications": [verification_json(v) for v in result.verifications],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(_check_text(result, color=_use_color(args.color), nudge=args.nudge))
    return 0


def _verifiers(args: argparse.Namespace) -> list[Verifier]:
    """The sources `--config`'s [verification] section and the flags name; none without
    either (the trace alone is a source then only when the section asks for it)."""
    section: dict[str, Any] = {}
    if args.config:
        section = dict(read_toml(args.config, "the settings").get("verification", {}))
    if args.repo:
        repositories = dict(section.get("git", {}).get("repositories", {}))
        for spec in args.repo:
            name, sep, location = spec.partition("=")
            if not sep:
                name, location = Path(spec.rstrip("/")).name or spec, spec
            repositories[name] = location
        section["git"] = {**section.get("git", {}), "repositories": repositories}
    if args.workspace:
        section["workspace"] = {**section.get("workspace", {}), "root": args.workspace}
    if args.links:
        section.setdefault("links", {})
    if not section:
        return []
    return VerificationSettings.from_mapping(section).verifiers()


def _check_text(result: CheckResult, *, color: bool, nudge: bool) -> str:
    """The verdict, the reply with the findings' tokens marked and numbered in reading
    order, the findings under those numbers, and the self-correction nudge when asked for."""
    lines = [f"verdict: {result.outcome.value}"]
    if not result.findings:
        return lines[0]
    findings = reply_marks.in_reply_order(result.turn.reply, result.findings)
    reply = reply_marks.render(result.turn.reply, findings, color=color)
    lines += ["", "reply:", *("  " + line for line in reply.splitlines()), "", "findings:"]
    for number, f in enumerate(findings, start=1):
        where = f" @{f.span.start}-{f.span.end}" if f.span else ""
        token = f" `{f.token[:80]}`" if f.token else ""
        severity = reply_marks.severity_text(f.effective_severity, color=color)
        lines.append(f"  [{number}] {severity} {f.kind.value}{token}{where}: {f.message}")
    if result.verifications:
        lines += ["", "verified at the source:"]
        for answer in result.verifications:
            why = f" ({answer.reason})" if answer.reason else ""
            lines.append(
                f"  {answer.outcome.value} {answer.subject.kind.value} `{answer.subject.name}`"
                f" by {answer.source}{why}: {answer.answer or answer.query}"
            )
    if result.nudge and nudge:
        lines += ["", "self-correction nudge:", result.nudge]
    elif result.nudge:
        lines += ["", "(--nudge prints the self-correction message for the agent)"]
    return "\n".join(lines)


def _use_color(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return (
        sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    )


def _read_transcript(path: Path) -> Any:
    """The transcript in `path`; a file of eval cases (JSONL) gets a hint naming `eval`."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError as exc:
        if _first_line_is_case(text):
            raise TranscriptError(_cases_hint(path)) from exc
        raise TranscriptError(f"{path}: invalid JSON: {exc}") from exc
    if _looks_like_case(data):
        raise TranscriptError(_cases_hint(path))
    return data


def _cases_hint(path: Path) -> str:
    return (
        f"{path} holds labelled cases ({{id, transcript, expected}}), not one transcript; "
        f"score them with `factledger eval {path}`"
    )


def _first_line_is_case(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return _looks_like_case(json.loads(first))
    except ValueError:
        return False


def _looks_like_case(data: Any) -> bool:
    return (
        isinstance(data, Mapping)
        and "expected" in data
        and ("transcript" in data or "otlp" in data)
    )


def _cmd_eval(args: argparse.Namespace) -> int:
    runner = _runner(args)
    cases = _read_cases(args.file)
    with progress_bar(total=len(cases), unit="case") as bar:

        def advance(_: CaseResult) -> None:
            bar.update()

        report = evaluate(cases, runner, on_result=advance)
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
    else:
        print(report.table())
    return 0


def _read_cases(path: Path) -> list[Case]:
    """The cases in `path`; one transcript given instead gets a hint naming `check`."""
    try:
        return list(read_cases(path))
    except TranscriptError as exc:
        if _holds_one_transcript(path):
            raise TranscriptError(
                f"{path} is one transcript, not labelled cases (JSONL of {{id, transcript, "
                f"expected}}); check it with `factledger check {path}`"
            ) from exc
        raise


def _holds_one_transcript(path: Path) -> bool:
    try:
        if path.stat().st_size > HINT_MAX_BYTES:
            return False
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, Mapping) and "messages" in data and "expected" not in data


def finding_json(f: Finding) -> dict[str, Any]:
    """A finding as the JSON the CLI prints: the keys and types of the query API's findings
    (`class` null for a kind without one)."""
    return {
        "kind": f.kind.value,
        "class": hallucination_class_of(f.hallucination_class),
        "severity": f.effective_severity.value,
        "message": f.message,
        "token": f.token,
        "checked_against": list(f.checked_against),
        "checked_note": f.checked_note,
        "span": None if f.span is None else [f.span.start, f.span.end],
        "validator": f.validator,
        "score": f.score,
        "call_id": f.call_id,
    }


def verification_json(answer: Verification) -> dict[str, Any]:
    """A source's answer as the CLI prints it: the keys of the query API's verifications
    that a check without a store has (no finding index, no stored time)."""
    subject = answer.subject
    return {
        "subject_kind": subject.kind.value,
        "name": subject.name,
        "claimed_absent": subject.claimed_absent,
        "span": None if subject.span is None else [subject.span.start, subject.span.end],
        "finding_kind": subject.finding_kind.value if subject.finding_kind else None,
        "outcome": answer.outcome.value,
        "source": answer.source,
        "query": answer.query,
        "answer": answer.answer,
        "reason": answer.reason or None,
        "duration_ms": round(answer.duration_ms, 3),
    }


if __name__ == "__main__":
    raise SystemExit(main())
