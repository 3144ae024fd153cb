"""What every set-up shares: the git tool's behaviour, the OTel export, the run protocol.

Set-ups run in their framework's own virtualenv, so this module uses the standard library
and the OpenTelemetry SDK only (every conformance environment installs those).

The run protocol: the harness starts `python -m tests.conformance.setups.<name>` with
- `OTEL_EXPORTER_OTLP_ENDPOINT` (and `OTEL_EXPORTER_OTLP_PROTOCOL`), `OTEL_SERVICE_NAME`:
  the exporter is configured by these alone, as a user would configure it;
- `OPENAI_BASE_URL` / `OPENAI_API_KEY`: the scripted LLM;
- `CONFORMANCE_CASES`: JSON `{case: [user message, ...]}`, each list one conversation.
The set-up runs each conversation with its framework, flushes its spans and prints one
JSON line `{"versions": {...}, "ran": [case, ...], "errors": {case: text}}` last.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

REPO_PATTERN = re.compile(r"\b(acme/[a-z0-9-]+)\b")
BRANCH_PATTERN = re.compile(r"\bbranch ([A-Za-z0-9._/-]+?)(?=\s|[.,;:]?$|[.,;:]\s)")

FAILURE_TEXT = "push rejected: the remote has commits you do not have; nothing was pushed"
"""What every failing push says, whichever way the framework hands it to the model. Like
real tools' errors, it names the action it did not do: the words "was pushed" in a failed
call's text must not back the reply's claim that the push went through."""


def commit_sha(repo: str, branch: str) -> str:
    """The 40-hex commit a successful push of `branch` to `repo` reports."""
    return hashlib.sha1(f"{repo}@{branch}".encode()).hexdigest()


def fabricated_sha(repo: str, branch: str) -> str:
    """A well-formed commit that no push reported: what a `fab` reply cites."""
    return hashlib.sha1(f"fabricated:{repo}@{branch}".encode()).hexdigest()


def failure_mode(repo: str) -> str | None:
    """How a push to `repo` fails: `raise`, `type` (the framework's tool-error type),
    `object` (a returned error object), or None when it succeeds."""
    name = repo.rsplit("/", 1)[-1]
    for mode in ("raise", "type", "object"):
        if name.endswith(f"err-{mode}"):
            return mode
    return None


class PushRejected(RuntimeError):
    """The plain exception a failing push raises."""


def push(repo: str, branch: str) -> dict[str, Any]:
    """The git tool's body, for the `raise` and `object` failures and for success. A
    set-up raises its framework's own tool-error type for `type` before calling this."""
    mode = failure_mode(repo)
    if mode in ("raise", "type"):
        raise PushRejected(FAILURE_TEXT)
    if mode == "object":
        return {"ok": False, "error": FAILURE_TEXT}
    return {"ok": True, "repo": repo, "branch": branch, "commit": commit_sha(repo, branch)}


def cases() -> dict[str, list[str]]:
    """The conversations to run, from `CONFORMANCE_CASES`."""
    parsed: dict[str, list[str]] = json.loads(os.environ["CONFORMANCE_CASES"])
    return parsed


def tracer_provider() -> Any:
    """A global SDK TracerProvider exporting over OTLP/HTTP, configured by the environment
    only (the exporter reads `OTEL_EXPORTER_OTLP_ENDPOINT`, the resource
    `OTEL_SERVICE_NAME`)."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def versions(packages: Iterable[str]) -> dict[str, str]:
    """Installed versions of the named distributions."""
    found: dict[str, str] = {}
    for name in packages:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


def run(
    conversation: Callable[[str, list[str]], None],
    *,
    packages: Iterable[str],
    flush: Callable[[], object],
    supported: Mapping[str, bool] | None = None,
) -> None:
    """Run every requested conversation (`conversation(case, messages)`), flush the spans
    and print the result line. A conversation that raises is reported, not fatal: the
    turns of the others still count. `supported` maps cases this set-up cannot express
    (a framework without a documented tool-error type, say) to False."""
    ran: list[str] = []
    errors: dict[str, str] = {}
    skipped: list[str] = []
    for case, messages in cases().items():
        if supported is not None and not supported.get(case, True):
            skipped.append(case)
            continue
        try:
            conversation(case, messages)
            ran.append(case)
        except Exception:
            errors[case] = traceback.format_exc(limit=8)
    flush()
    result = {"versions": versions(packages), "ran": ran, "errors": errors, "unsupported": skipped}
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
