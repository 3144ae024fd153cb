"""Verification end to end: a real `factledger serve` (judge in a worker process) with a
`[verification]` settings file, agent turns on the real OpenTelemetry SDK, and a real git
repository as the source of truth.

The agent lists `tests/` and reads `src/app.py`, then names files, functions and commits,
some real and some invented. The first verdict is the validators'; the verified version
that follows has what the sources settled applied: the invented files the listing does not
show and the invented function git does not have are rejects, the real names are
withdrawn, and of the two short SHAs (commits by their sentence, so the identifier check
rejects both) the invented one stays a reject and the real one is withdrawn. A source
that never answers leaves the first verdict standing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from factledger.ports import check_port_free
from factledger.service_process import ServiceProcess, free_port

SERVICE = "repo-agent"
REPO = "acme/site"
APP_PY = '''"""The application's registry."""


class Registry:
    def __init__(self) -> None:
        self.entries: dict[str, object] = {}


def build_registry(cfg):
    registry = Registry()
    registry.entries.update(cfg)
    return registry
'''
TEST_APP_PY = """from src.app import build_registry


def test_build():
    assert build_registry({"a": 1}).entries == {"a": 1}
"""
SETTINGS_PY = """def load_settings(path):
    return {"path": path}
"""
CONFTEST_PY = "import pytest\n"


@dataclass(frozen=True)
class Repository:
    path: Path
    commits: tuple[str, ...]
    """Full SHAs, oldest first."""

    def short(self, exclude: str = "") -> str:
        """A 7-hex prefix of a real commit, with a digit and a letter (a short SHA
        candidate), of a commit other than `exclude`."""
        for sha in self.commits:
            prefix = sha[:7]
            if sha != exclude and not prefix.isdigit() and not prefix.isalpha():
                return prefix
        raise AssertionError("no commit has a short SHA with a digit and a letter")

    def invented_short(self) -> str:
        """A 7-hex short SHA no object of the repository starts with."""
        for candidate in ("e4f1c9a", "9b7d2e1", "c0ffe42", "7a3b9d5"):
            found = _git(self.path, "rev-parse", "--verify", "--quiet", f"{candidate}^{{object}}")
            if found.returncode != 0:
                return candidate
        raise AssertionError("every invented short SHA exists")


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.org", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def _commit(path: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    assert _git(path, "add", *files).returncode == 0
    assert _git(path, "commit", "-q", "-m", message).returncode == 0
    return _git(path, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Repository:
    """A working tree: three commits on main, one more on a branch (checked out main)."""
    path = tmp_path_factory.mktemp("site")
    assert _git(path, "init", "-q", "-b", "main").returncode == 0
    first = _commit(path, {"src/app.py": APP_PY}, "registry")
    second = _commit(
        path, {"tests/test_app.py": TEST_APP_PY, "tests/conftest.py": CONFTEST_PY}, "tests"
    )
    third = _commit(path, {"src/settings.py": SETTINGS_PY}, "settings")
    assert _git(path, "checkout", "-q", "-b", "feature/cache").returncode == 0
    branch = _commit(path, {"docs/cache.md": "# Cache\n"}, "cache notes")
    assert _git(path, "checkout", "-q", "main").returncode == 0
    return Repository(path, (first, second, third, branch))


def _settings_file(directory: Path, body: str) -> Path:
    path = directory / "factledger.toml"
    path.write_text(body)
    return path


def _git_section(location: str, mirror_dir: Path, limits: str = "") -> str:
    return (
        f"[verification]\n{limits}\n"
        "[verification.git]\n"
        f"repositories = {{ {json.dumps(REPO)} = {json.dumps(location)} }}\n"
        f"defaults = {{ {json.dumps(SERVICE)} = {json.dumps(REPO)} }}\n"
        f"mirror_dir = {json.dumps(str(mirror_dir))}\n"
    )


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, repository: Repository
) -> Iterator[ServiceProcess]:
    data = tmp_path_factory.mktemp("verified")
    config = _settings_file(data, _git_section(str(repository.path), data / "mirrors"))
    env = {"FACTLEDGER_API_OPEN": "1"}
    with ServiceProcess(data, env, args=["--config", str(config)]) as svc:
        yield svc


# --- the agent --------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]
    result: str


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _agent_turn(url: str, ask: str, calls: Sequence[Call], reply: str) -> str:
    """One GenAI agent turn through the OTel SDK's OTLP/HTTP exporter: a chat span per
    tool call, its `execute_tool` span, and a last chat span with the reply. Returns the
    trace id."""
    provider = TracerProvider(resource=Resource({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("tests.verification")
    tools = json.dumps([{"type": "function", "name": c.tool, "parameters": {}} for c in calls])
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    history = [_text("user", ask)]

    def chat_span(output: list[dict[str, Any]]) -> None:
        with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT) as span:
            span.set_attributes(chat)
            span.set_attribute("gen_ai.tool.definitions", tools)
            span.set_attribute("gen_ai.input.messages", json.dumps(history))
            span.set_attribute("gen_ai.output.messages", json.dumps(output))

    try:
        with tracer.start_as_current_span(
            "invoke_agent coder",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"},
        ) as root:
            for index, call in enumerate(calls, 1):
                call_id = f"call_{index}"
                part = {
                    "type": "tool_call",
                    "id": call_id,
                    "name": call.tool,
                    "arguments": call.arguments,
                }
                request = {"role": "assistant", "parts": [part]}
                chat_span([request])
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.tool,
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.call.arguments": json.dumps(call.arguments),
                    "gen_ai.tool.call.result": call.result,
                }
                with tracer.start_as_current_span(f"execute_tool {call.tool}", attributes=tool):
                    pass
                response = {"type": "tool_call_response", "id": call_id, "response": call.result}
                history += [request, {"role": "tool", "parts": [response]}]
            chat_span([_text("assistant", reply)])
            trace_id = format(root.get_span_context().trace_id, "032x")
    finally:
        provider.shutdown()
    return trace_id


# --- reading back -----------------------------------------------------------------------


def _turn(url: str, trace_id: str, *, versions: int, timeout: float = 60) -> dict[str, Any]:
    """The turn of `trace_id` once it has `versions` verdicts (a bounded poll)."""
    deadline = time.monotonic() + timeout
    shown: dict[str, Any] = {}
    while time.monotonic() < deadline:
        listed = httpx.get(f"{url}/api/v1/turns", params={"trace_id": trace_id}, timeout=10)
        for summary in listed.json()["turns"]:
            answer = httpx.get(f"{url}/api/v1/turns/{summary['turn_id']}", timeout=10)
            shown = answer.json()
            if len(shown["versions"]) >= versions:
                return shown
        time.sleep(0.1)
    raise AssertionError(f"trace {trace_id}: not {versions} versions in {timeout}s: {shown}")


def _findings(turn: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """token -> (kind, severity) of the latest verdict."""
    return {f["token"]: (f["kind"], f["severity"]) for f in turn["findings"]}


def _answers(turn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in turn["verifications"]}


def _report_delay(case: str, turn: dict[str, Any]) -> None:
    """How long after the first verdict the verified one was judged (`pytest -s`)."""
    first, verified = (datetime.fromisoformat(v["validated_at"]) for v in turn["versions"][:2])
    print(f"{case}: verified version {(verified - first).total_seconds():.3f}s after the first")


def _metric_lines(url: str, name: str) -> list[str]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return [line for line in text.splitlines() if line.startswith(name + "{")]


# --- the tests ------------------------------------------------------------------------


def _listing(repository: Repository, directory: str) -> str:
    return "\n".join(sorted(p.name for p in (repository.path / directory).iterdir()))


def test_the_verified_version_applies_the_trace_and_git(
    service: ServiceProcess, repository: Repository
) -> None:
    full = repository.commits[1]
    short = repository.short(exclude=full)
    invented = repository.invented_short()
    calls = [
        Call("list_files", {"path": "tests"}, _listing(repository, "tests")),
        Call("read_file", {"path": "src/app.py"}, (repository.path / "src/app.py").read_text()),
    ]
    reply = (
        "I listed tests/ and read src/app.py. The project has `src/settings.py` and the "
        "`test_build` test, plus `tests/test_registry_cache.py` and "
        "`tests/test_registry_loader.py`; `load_plugins()` wires the registry up. "
        f"The registry landed in {short}, its tests in commit {full}, and the cache fix "
        f"in {invented}."
    )
    trace_id = _agent_turn(service.url, "What does the registry have?", calls, reply)

    first = _turn(service.url, trace_id, versions=1)
    verified = _turn(service.url, trace_id, versions=2)
    _report_delay("trace and git", verified)

    # Read before verification answered: as validated. By the version its findings are of:
    # the history is read apart from them, so a version judged in between can be missing.
    if first["version"] == 1:
        before = _findings(first)
        assert before[full] == ("fabricated_identifier", "reject")
        for name in ("tests/test_registry_cache.py", "src/settings.py", "test_build"):
            assert before[name] == ("confabulated_identifier_set", "flag")
        # "commit" in their sentence makes both short SHAs commits: checked like a full one.
        assert before[invented] == before[short] == ("fabricated_identifier", "reject")
        assert first["verifications"] == []
    validated = verified["versions"][0]
    assert validated["verdict"] == "reject"
    assert validated["kinds"] == ["fabricated_identifier", "confabulated_identifier_set"]

    after = _findings(verified)
    assert after == {
        "tests/test_registry_cache.py": ("confabulated_identifier_set", "reject"),
        "tests/test_registry_loader.py": ("confabulated_identifier_set", "reject"),
        "load_plugins": ("confabulated_identifier_set", "reject"),
        invented: ("fabricated_identifier", "reject"),
    }
    assert verified["verdict"] == "reject"
    assert [v["version"] for v in verified["versions"]] == [1, 2]

    answers = _answers(verified)
    listing = answers["tests/test_registry_cache.py"]
    assert listing["outcome"] == "confirmed"
    assert listing["source"].startswith("trace:list_files (")
    for name, outcome in (
        ("load_plugins", "confirmed"),
        (invented, "confirmed"),
        ("src/settings.py", "refuted"),
        ("test_build", "refuted"),
        (full, "refuted"),
        (short, "refuted"),
    ):
        answer = answers[name]
        assert (answer["outcome"], answer["source"]) == (outcome, f"git:{REPO}"), answer
    for answer in answers.values():
        assert answer["query"] and answer["answer"], answer
        assert answer["checked_at"] is not None and answer["duration_ms"] >= 0

    counted = _metric_lines(service.url, "factledger_verifications_total")
    assert any('source="git"' in line and 'outcome="confirmed"' in line for line in counted)
    assert any('source="trace"' in line and 'outcome="confirmed"' in line for line in counted)
    assert any('outcome="refuted"' in line for line in counted)
    findings = _metric_lines(service.url, "factledger_verification_findings_total")
    assert any('kind="fabricated_identifier"' in line for line in findings), findings


def test_a_turn_whose_findings_are_all_refuted_passes_when_verified(
    service: ServiceProcess, repository: Repository
) -> None:
    head = repository.commits[2]
    calls = [Call("git_status", {}, "On branch main\nnothing to commit, working tree clean")]
    reply = (
        "The working tree is clean. The repository contains `src/settings.py`, "
        f"`tests/conftest.py` and the `test_build` test; HEAD is {head}."
    )
    trace_id = _agent_turn(service.url, "Is the tree clean?", calls, reply)

    verified = _turn(service.url, trace_id, versions=2)
    _report_delay("all refuted", verified)

    assert verified["versions"][0]["verdict"] == "reject"
    assert verified["verdict"] == "pass"
    assert verified["findings"] == []
    answers = _answers(verified)
    assert set(answers) == {"src/settings.py", "tests/conftest.py", "test_build", head}
    assert {a["outcome"] for a in answers.values()} == {"refuted"}
    assert {a["source"] for a in answers.values()} == {f"git:{REPO}"}


# --- settings that do not start ---------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "key"),
    [
        pytest.param("[verification]\nthreads = 0\n", "verification.threads", id="threads-0"),
        pytest.param(
            '[verification.git]\nrepositories = { "acme/site" = "/srv/site" }\ncolour = "red"\n',
            "colour",
            id="unknown-git-key",
        ),
    ],
)
def test_a_bad_verification_setting_stops_serve_before_it_listens(
    tmp_path: Path, section: str, key: str
) -> None:
    config = _settings_file(tmp_path, section)
    port = free_port()
    serve = ["serve", "--port", str(port), "--config", str(config)]
    started = subprocess.run(
        [sys.executable, "-m", "factledger.cli", *serve],
        env={**os.environ, "FACTLEDGER_DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert started.returncode != 0
    assert key in started.stderr, started.stderr
    # It never listened: no server started, and the port is free to take.
    assert "Uvicorn running" not in started.stderr and "serving on" not in started.stderr
    check_port_free("127.0.0.1", port, "--port")


# --- a source that never answers ------------------------------------------------------


@pytest.fixture
def silent_remote() -> Iterator[str]:
    """An http URL of a loopback server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/acme/site.git"
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        server.close()


def test_a_source_that_never_answers_leaves_the_first_verdict(
    tmp_path: Path, silent_remote: str, repository: Repository
) -> None:
    limits = "per_source_seconds = 1\nretry_seconds = [1]\n"
    config = _settings_file(tmp_path, _git_section(silent_remote, tmp_path / "mirrors", limits))
    invented = repository.invented_short()
    full = repository.commits[0]
    reply = (
        "The repository contains `src/settings.py`, `tests/conftest.py` and the "
        f"`test_build` test; the registry landed in {full}, the fix in {invented}."
    )
    calls = [Call("git_status", {}, "On branch main\nnothing to commit, working tree clean")]
    data = tmp_path / "data"
    with ServiceProcess(data, {"FACTLEDGER_API_OPEN": "1"}, args=["--config", str(config)]) as svc:
        trace_id = _agent_turn(svc.url, "Where did the registry land?", calls, reply)
        first = _turn(svc.url, trace_id, versions=1)
        verified = _turn(svc.url, trace_id, versions=2, timeout=90)
    _report_delay("silent source", verified)

    first_findings = {f["token"]: f["kind"] for f in first["findings"]}
    assert verified["verdict"] == verified["versions"][0]["verdict"] == "reject"
    assert {f["token"]: f["kind"] for f in verified["findings"]} == first_findings
    assert full in first_findings and "src/settings.py" in first_findings
    answers = _answers(verified)
    assert invented in answers and full in answers
    for answer in answers.values():
        assert answer["outcome"] == "unverifiable", answer
        assert answer["reason"] in ("timeout", "unreachable"), answer
        assert answer["source"] == f"git:{REPO}"
