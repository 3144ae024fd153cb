"""`factledger reviews export`: the human labels of a running service as `factledger eval`
cases, so confirmed hallucinations and confirmed false alarms become regression cases.

It asks the service (GET /api/v1/reviews?format=jsonl, page after page: a page holds at
most EXPORT_PAGE turns) rather than opening the store, so it runs beside `factledger
serve` on an embedded store too.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from factledger.extras import require
from factledger.ports import DEFAULT_HOST, DEFAULT_PORT
from factledger.processors.errors import FactLedgerError

TOKEN_ENV = "FACTLEDGER_READ_TOKEN"
API_ENV = "FACTLEDGER_API"
EXPORT_PAGE = 1000
"""Labelled turns asked for per request: the service's most (MAX_REVIEW_EXPORT)."""


def add_reviews_parser(sub: Any) -> None:
    """Register `reviews export` on the CLI's subcommands (`sub` from add_subparsers)."""
    p_reviews = sub.add_parser("reviews", help="human labels: export them as eval cases")
    reviews_sub = p_reviews.add_subparsers(dest="reviews_command", required=True)
    p_export = reviews_sub.add_parser(
        "export",
        help="write every labelled turn as a `factledger eval` case (JSONL)",
        description="Write each labelled turn's latest label as a `factledger eval` case:\n"
        "the turn's spans as an OTLP/JSON request, the expected verdict from the label\n"
        "(hallucination: the flagged kinds; not a hallucination: pass).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_export.add_argument(
        "--api",
        default=os.environ.get(API_ENV) or f"http://{DEFAULT_HOST}:{DEFAULT_PORT}",
        help="the service's base URL (default $FACTLEDGER_API or the local service)",
    )
    p_export.add_argument("--out", type=Path, metavar="FILE", help="write here (default: stdout)")
    p_export.add_argument(
        "--label",
        choices=("hallucination", "not_hallucination"),
        help="only turns with this label (default: every label)",
    )
    p_export.add_argument("--tenant", help="the tenant to read (default: the token's)")
    p_export.add_argument("--timeout", type=float, default=60.0, help="seconds (default 60)")
    p_export.set_defaults(handler=run_export)


def fetch_export(
    api: str,
    *,
    token: str | None = None,
    tenant: str | None = None,
    label: str | None = None,
    timeout: float = 60.0,
    page: int = EXPORT_PAGE,
) -> str:
    """The service's export as JSONL text, every page of it; raises FactLedgerError
    naming what failed."""
    params = {"format": "jsonl", "limit": str(page)}
    if tenant:
        params["tenant"] = tenant
    if label:
        params["label"] = label
    import httpx  # of the service extra (`run_export` checks for it)

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{api.rstrip('/')}/api/v1/reviews"
    texts: list[str] = []
    offset = 0
    while True:
        try:
            response = httpx.get(
                url, params={**params, "offset": str(offset)}, headers=headers, timeout=timeout
            )
        except httpx.HTTPError as exc:
            raise FactLedgerError(f"cannot reach the FactLedger API at {api}: {exc}") from exc
        if response.status_code != 200:
            answer = f"{response.status_code}: {response.text[:300]}"
            raise FactLedgerError(f"GET {url} answered {answer}")
        texts.append(response.text)
        following = response.headers.get("X-Next-Offset", "")
        if not following.isdigit() or int(following) <= offset:
            return "".join(texts)
        offset = int(following)


def run_export(args: argparse.Namespace) -> int:
    """The `reviews export` command; the count of cases goes to stderr."""
    require("reviews export", "service")
    text = fetch_export(
        args.api,
        token=os.environ.get(TOKEN_ENV, "").strip() or None,
        tenant=args.tenant,
        label=args.label,
        timeout=args.timeout,
    )
    lines = text.splitlines()
    cases = sum(1 for line in lines if line.strip() and not line.startswith("//"))
    skipped = sum(1 for line in lines if line.startswith("//"))
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    where = f" to {args.out}" if args.out else ""
    left_out = f" ({skipped} labelled turns left out: their spans are gone)" if skipped else ""
    print(f"exported {cases} labelled turns{where}{left_out}", file=sys.stderr)
    return 0
