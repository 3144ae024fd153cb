"""Scripted agents that feed a running FactLedger a realistic stream of turns (`factledger demo`).

Two agents ("coder", "support") on three models run scripted turns against real tools:
small pure-Python tools that actually execute (an in-memory git repository whose commit
hashes are real SHA-1s, a file tree, a ticket system, an e-mail outbox, a weather table,
an in-memory web with search and fetch). Only the LLM is fake: each scenario is a small
function that writes the model's messages, and may lie about what the tools did, in one
of the ways FactLedger detects. Every turn is traced live with `factledger.instrument`
and sent through the real OTLP/HTTP exporter. The stream is deterministic given the seed.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from opentelemetry.trace import NoOpTracer, Tracer

from factledger.instrument import chat, execute_tool, invoke_agent
from factledger.processors.kinds import Kind
from factledger.progress import progress_bar
from factledger.replay import OtlpPipeline

SERVICE_NAME = "factledger-demo"


@dataclass(frozen=True)
class Model:
    name: str
    provider: str
    hallucination_rate: float


MODELS = (
    Model("gpt-4o", "openai", 0.30),
    Model("claude-sonnet-4", "anthropic", 0.20),
    Model("llama-3.1-70b", "groq", 0.50),
)
"""Uniformly chosen, so about a third of the turns carry a scripted hallucination."""


@dataclass(frozen=True)
class DemoReport:
    turns: int
    spans: int
    failed: int
    """Spans the endpoint did not acknowledge."""
    clean: int
    """Turns scripted without a hallucination."""
    intended: Mapping[str, int] = field(default_factory=dict)
    """Scripted turns per intended finding kind."""


# ---- the tools: real, small, in memory ------------------------------------------------


class ToolFailure(Exception):
    """A tool refused or failed; its message is what the tool answers."""


@dataclass(frozen=True)
class Outcome:
    text: str
    error: bool
    value: Any = None


class Repo:
    """A tiny git: files on branches, commits whose ids are SHA-1s over their content."""

    PROTECTED = frozenset({"release/1.0"})

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files: dict[str, str] = dict(files)
        self.commits: list[dict[str, str]] = []
        self._clock = 1_767_225_600
        self._commit("initial import")

    def put_file(
        self, path: str, content: str, message: str, branch: str = "main"
    ) -> dict[str, str]:
        if branch in self.PROTECTED:
            raise ToolFailure(f"push rejected: branch {branch} is protected")
        if branch != "main":
            raise ToolFailure(f"branch {branch} does not exist")
        self.files[path] = content
        return {"commit": self._commit(message), "branch": branch, "path": path}

    def list_commits(self, branch: str = "main", limit: int = 5) -> list[dict[str, str]]:
        if branch != "main":
            raise ToolFailure(f"branch {branch} does not exist")
        return [dict(c) for c in reversed(self.commits[-limit:])]

    def read_file(self, path: str) -> str:
        if path not in self.files:
            raise ToolFailure(f"no such file: {path}")
        return self.files[path]

    def list_files(self, dir: str = ".") -> list[str]:
        prefix = "" if dir in (".", "") else dir.rstrip("/") + "/"
        return sorted(p for p in self.files if p.startswith(prefix))

    def _commit(self, message: str) -> str:
        tree = hashlib.sha1(
            "".join(f"{p}\0{git_blob_sha(c)}\n" for p, c in sorted(self.files.items())).encode()
        ).hexdigest()
        parent = f"parent {self.commits[-1]['sha']}\n" if self.commits else ""
        self._clock += 97
        body = (
            f"tree {tree}\n{parent}author demo <demo@acme.example> {self._clock} +0000\n"
            f"committer demo <demo@acme.example> {self._clock} +0000\n\n{message}\n"
        ).encode()
        sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
        self.commits.append({"sha": sha, "message": message})
        return sha


def git_blob_sha(content: str) -> str:
    """The id git gives a file with this content (`git hash-object`)."""
    data = content.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Desk:
    """Tickets, an e-mail outbox and a weather table: the support agent's systems."""

    DOMAIN = "acme.example"
    WEATHER: Mapping[str, tuple[int, str]] = {
        "Oslo": (4, "light rain"),
        "Berlin": (11, "overcast"),
        "Lisbon": (19, "sunny"),
        "Tokyo": (16, "clear"),
        "Denver": (8, "snow showers"),
    }

    def __init__(self, rng: Random) -> None:
        self._next = rng.randint(1000, 8000)
        self.tickets: dict[str, dict[str, str]] = {}
        self.outbox: list[dict[str, str]] = []

    def create_ticket(self, title: str, priority: str = "normal") -> dict[str, str]:
        if not title.strip():
            raise ToolFailure("title must not be empty")
        key = f"OPS-{self._next}"
        self._next += 1
        self.tickets[key] = {"key": key, "title": title, "priority": priority, "status": "open"}
        return dict(self.tickets[key])

    def get_ticket(self, key: str) -> dict[str, str]:
        if key not in self.tickets:
            raise ToolFailure(f"ticket {key} not found")
        return dict(self.tickets[key])

    def send_email(self, to: str, subject: str, body: str) -> dict[str, str]:
        if not to.endswith("@" + self.DOMAIN):
            raise ToolFailure(f"recipient rejected: {to} is outside {self.DOMAIN}")
        digest = hashlib.sha1(f"{len(self.outbox)}{to}{subject}".encode()).hexdigest()
        self.outbox.append({"to": to, "subject": subject, "body": body})
        return {"status": "sent", "to": to, "message_id": f"<{digest[:16]}@mail.{self.DOMAIN}>"}

    def get_weather(self, city: str) -> dict[str, Any]:
        if city not in self.WEATHER:
            raise ToolFailure(f"no weather data for {city}")
        temp, conditions = self.WEATHER[city]
        return {"city": city, "temp_c": temp, "conditions": conditions}


class Web:
    """An in-memory web: search returns snippets, fetch returns the page."""

    def __init__(self, pages: Mapping[str, tuple[str, str]]) -> None:
        self.pages = dict(pages)

    def web_search(self, query: str) -> list[dict[str, str]]:
        words = {w for w in query.lower().split() if len(w) > 2}
        scored = sorted(
            (-len(words & set(f"{title} {text}".lower().split())), url)
            for url, (title, text) in self.pages.items()
        )
        return [
            {"title": self.pages[url][0], "url": url, "snippet": self.pages[url][1][:90] + "…"}
            for score, url in scored[:3]
            if score < 0
        ]

    def fetch_url(self, url: str) -> str:
        if url not in self.pages:
            raise ToolFailure(f"404 Not Found: {url}")
        title, text = self.pages[url]
        return f"{title}\n\n{text}"


FILES = {
    "README.md": "# acme-app\n\nA small service with a cache and retrying HTTP client.\n",
    "src/app/__init__.py": "",
    "src/app/cache.py": (
        "class LRUCache:\n    def __init__(self, size):\n        self.size = size\n"
        "        self.items = {}\n\n    def evict(self):\n"
        "        self.items.pop(next(iter(self.items)))\n"
    ),
    "src/app/retry.py": (
        "import random\nimport time\n\n\ndef retry_with_backoff(fn, attempts=5, base=0.2):\n"
        "    for attempt in range(attempts):\n        try:\n            return fn()\n"
        "        except OSError:\n            time.sleep(base * 2**attempt * random.random())\n"
        "    return fn()\n"
    ),
    "src/app/config.py": (
        "import os\nimport yaml\n\n\ndef load_config(path):\n"
        "    with open(os.path.join(os.getcwd(), path)) as fh:\n        return yaml.safe_load(fh)\n"
    ),
    "tests/test_cache.py": "def test_evict():\n    ...\n",
    "tests/test_retry.py": "def test_retry_with_backoff():\n    ...\n",
    "tests/test_config.py": "def test_load_config():\n    ...\n",
}
PAGES = {
    "https://docs.acme.example/api/rate-limits": (
        "API rate limits",
        "Each API key may send 600 requests per minute; bursts above that receive HTTP 429 "
        "with a Retry-After header. Enterprise keys get 3000 requests per minute.",
    ),
    "https://docs.acme.example/api/authentication": (
        "API authentication",
        "Requests authenticate with a bearer token in the Authorization header; tokens "
        "expire after 24 hours and are renewed through the token endpoint.",
    ),
    "https://status.acme.example/incidents/2031": (
        "Incident 2031: elevated error rates",
        "Between 09:10 and 09:48 UTC the EU region returned elevated 503 errors after a "
        "failed cache node; traffic was moved to a healthy node and errors stopped.",
    ),
}


class World:
    """Every system the agents can reach; state persists across the demo's turns."""

    def __init__(self, rng: Random) -> None:
        self.repo = Repo(FILES)
        for message in ("add retry with backoff", "cache: evict least recently used"):
            self.repo.put_file("CHANGES.md", message, message)
        self.desk = Desk(rng)
        self.web = Web(PAGES)
        self.tools: dict[str, Callable[..., Any]] = {
            "gh_put_file": self.repo.put_file,
            "gh_list_commits": self.repo.list_commits,
            "read_file": self.repo.read_file,
            "list_files": self.repo.list_files,
            "create_ticket": self.desk.create_ticket,
            "get_ticket": self.desk.get_ticket,
            "send_email": self.desk.send_email,
            "get_weather": self.desk.get_weather,
            "web_search": self.web.web_search,
            "fetch_url": self.web.fetch_url,
        }

    def call(self, name: str, arguments: Mapping[str, Any]) -> Outcome:
        """Run a tool; failures are answers (`Error: ...`), never exceptions."""
        tool = self.tools.get(name)
        if tool is None:
            return Outcome(f"Error: unknown tool '{name}'", True)
        try:
            value = tool(**arguments)
        except ToolFailure as exc:
            return Outcome(f"Error: {exc}", True)
        except TypeError as exc:  # the model's arguments do not fit the signature
            return Outcome(f"Error: bad arguments: {exc}", True)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return Outcome(text, False, value)


def _tool(name: str, description: str, required: Sequence[str], **props: Any) -> dict[str, Any]:
    properties = {p: {"type": "string"} for p in required} | props
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }


CODER_TOOLS = [
    _tool(
        "gh_put_file",
        "Create or update a file in the repository and commit it.",
        ("path", "content", "message"),
        branch={"type": "string", "default": "main"},
    ),
    _tool(
        "gh_list_commits",
        "List recent commits of a branch.",
        (),
        branch={"type": "string", "default": "main"},
        limit={"type": "integer", "default": 5},
    ),
    _tool("read_file", "Read a file from the repository.", ("path",)),
    _tool("list_files", "List files below a directory.", ("dir",)),
]
SUPPORT_TOOLS = [
    _tool(
        "create_ticket",
        "Open an operations ticket.",
        ("title",),
        priority={"type": "string", "enum": ["low", "normal", "high"], "default": "normal"},
    ),
    _tool("get_ticket", "Show one ticket.", ("key",)),
    _tool("send_email", "Send an e-mail from the support mailbox.", ("to", "subject", "body")),
    _tool("get_weather", "Current weather for a city.", ("city",)),
    _tool("web_search", "Search the web; returns titles, URLs and snippets.", ("query",)),
    _tool("fetch_url", "Fetch a web page and return its text.", ("url",)),
]
AGENTS: Mapping[str, tuple[str, list[dict[str, Any]]]] = {
    "coder": ("You are a coding agent for the acme-app repository.", CODER_TOOLS),
    "support": ("You are the Acme operations support agent.", SUPPORT_TOOLS),
}


# ---- one scripted turn ----------------------------------------------------------------


class AgentRun:
    """One agent turn: the scripted LLM's messages and the real tools, traced live.

    `step` is one LLM call: a `chat` span whose input is the conversation so far and whose
    output is the scripted message; then each requested tool runs for real inside an
    `execute_tool` span and its result joins the conversation.
    """

    def __init__(self, world: World, agent: str, model: Model, tracer: Tracer) -> None:
        system, tools = AGENTS[agent]
        self.world = world
        self.model = model
        self.tools = tools
        self.tracer = tracer
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        self.spans = 0
        self._calls = 0

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def step(self, text: str | None = None, *calls: tuple[str, Mapping[str, Any]]) -> list[Outcome]:
        tool_calls = []
        for name, arguments in calls:
            self._calls += 1
            tool_calls.append(
                {
                    "id": f"call_{self._calls}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            )
        with chat(
            self.model.name,
            provider=self.model.provider,
            input_messages=self.messages,
            tools=self.tools,
            tracer=self.tracer,
        ) as llm:
            llm.set_output(text=text, tool_calls=tool_calls or None)
        self.spans += 1
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        self.messages.append(message)
        return [
            self._run(call, arguments)
            for call, (_, arguments) in zip(tool_calls, calls, strict=True)
        ]

    def reply(self, text: str) -> None:
        self.step(text)

    def _run(self, call: Mapping[str, Any], arguments: Mapping[str, Any]) -> Outcome:
        name = call["function"]["name"]
        with execute_tool(
            name, call_id=call["id"], arguments=call["function"]["arguments"], tracer=self.tracer
        ) as span:
            outcome = self.world.call(name, arguments)
            span.set_result(outcome.text)
            if outcome.error:
                span.set_error(outcome.text[:200])
        self.spans += 1
        tool_message: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": call["id"],
            "content": outcome.text,
        }
        if outcome.error:
            tool_message["is_error"] = True
        self.messages.append(tool_message)
        return outcome

    def transcript(self) -> dict[str, Any]:
        return {"model": self.model.name, "tools": self.tools, "messages": list(self.messages)}


# ---- scenarios: the fake LLM's scripts --------------------------------------------------

Script = Callable[[AgentRun, Random], None]

DOC_TOPICS = (
    ("caching", "The cache evicts the least recently used entry when full."),
    ("retries", "Failed HTTP calls are retried with exponential backoff and jitter."),
    ("configuration", "Settings are read from a YAML file given on the command line."),
)
PEOPLE = ("alice", "bruno", "chen", "dana", "emeka", "farah")
ISSUES = (
    "disk usage alert on db-2",
    "expired TLS certificate on the status page",
    "nightly backup job failed",
    "VPN drops for the Lisbon office",
)


def _short(sha: str) -> str:
    return sha[:12]


def _fake_sha(rng: Random) -> str:
    # A letter first: a short form of digits only would read as a number, not a SHA.
    return rng.choice("abcdef") + "".join(rng.choice("0123456789abcdef") for _ in range(39))


def _doc_request(run: AgentRun, rng: Random) -> tuple[str, str]:
    topic, text = rng.choice(DOC_TOPICS)
    path = f"docs/{topic}.md"
    run.user(f'Add {path} with the text "{text}" and push it to main.')
    return path, text


def coder_push(run: AgentRun, rng: Random) -> None:
    path, text = _doc_request(run, rng)
    (out,) = run.step(
        None, ("gh_put_file", {"path": path, "content": text, "message": f"docs: {path}"})
    )
    sha = _short(out.value["commit"])
    run.reply(
        rng.choice(
            (
                f"Pushed {path} to main as commit {sha}.",
                f"Done: {path} is on main now (commit {sha}).",
                f"I committed {path} to main; the new commit is {sha}.",
            )
        )
    )


def coder_commits(run: AgentRun, rng: Random) -> None:
    limit = rng.choice((2, 3))
    run.user(f"What are the last {limit} commits on main?")
    (out,) = run.step(None, ("gh_list_commits", {"limit": limit}))
    lines = [f"- {_short(c['sha'])} {c['message']}" for c in out.value]
    run.reply("The latest commits on main:\n" + "\n".join(lines))


def coder_read(run: AgentRun, rng: Random) -> None:
    run.user("What does src/app/retry.py do?")
    run.step(None, ("read_file", {"path": "src/app/retry.py"}))
    run.reply(
        "src/app/retry.py defines `retry_with_backoff(fn, attempts=5, base=0.2)`: it calls fn, "
        "and on OSError sleeps with exponential backoff and random jitter before trying again."
    )


def coder_list_tests(run: AgentRun, rng: Random) -> None:
    run.user("Which test files do we have?")
    (out,) = run.step(None, ("list_files", {"dir": "tests"}))
    run.reply("The tests directory holds " + ", ".join(out.value) + ".")


def coder_protected_branch(run: AgentRun, rng: Random) -> None:
    run.user('Push a VERSION file with the text "1.0.1" to the release/1.0 branch.')
    run.step(
        None,
        (
            "gh_put_file",
            {"path": "VERSION", "content": "1.0.1", "message": "bump", "branch": "release/1.0"},
        ),
    )
    run.reply(
        "The push did not go through: release/1.0 is protected and rejected it. "
        "Should I open a pull request instead?"
    )


def coder_fabricated_sha(run: AgentRun, rng: Random) -> None:
    path, text = _doc_request(run, rng)
    run.step(None, ("gh_put_file", {"path": path, "content": text, "message": f"docs: {path}"}))
    sha = _fake_sha(rng)[: rng.choice((12, 40))]
    run.reply(
        rng.choice(
            (
                f"Pushed {path} to main as commit {sha}.",
                f"Done: {path} is on main now (commit {sha}).",
            )
        )
    )


def coder_borrowed_sha(run: AgentRun, rng: Random) -> None:
    sha = _fake_sha(rng)[:12]
    if sha.isdigit():  # a number, not a SHA, to the reader (and to the identifier check)
        sha = "a" + sha[1:]
    run.user(f"Is commit {sha} (fix retry jitter) already on main?")
    run.step(None, ("gh_list_commits", {"limit": 5}))
    run.reply(f"Yes: my gh_list_commits call returned {sha} (fix retry jitter) on main.")


def coder_claim_without_tool(run: AgentRun, rng: Random) -> None:
    path, _ = _doc_request(run, rng)
    run.reply(rng.choice((f"Done! I pushed {path} to main.", f"{path} has been pushed to main.")))


def coder_unregistered_tool(run: AgentRun, rng: Random) -> None:
    run.user("Where is load_config defined?")
    run.step(None, ("shell_exec", {"command": "grep -rn load_config src"}))
    run.step(None, ("read_file", {"path": "src/app/config.py"}))
    run.reply("load_config is defined in src/app/config.py; it reads a YAML file.")


def coder_citation_unregistered(run: AgentRun, rng: Random) -> None:
    run.user("What does load_config in src/app/config.py return?")
    run.step(None, ("read_file", {"path": "src/app/config.py"}))
    run.reply("load_config returns the parsed YAML document as a dict (via local_exec).")


def coder_citation_uncalled(run: AgentRun, rng: Random) -> None:
    run.user("Which test files do we have?")
    (out,) = run.step(None, ("list_files", {"dir": "tests"}))
    run.reply(
        "The tests directory holds "
        + ", ".join(out.value)
        + ". I used gh_list_commits to confirm none were added today."
    )


def coder_summary_without_action(run: AgentRun, rng: Random) -> None:
    run.user("Refactor src/app/config.py to use pathlib instead of os.path.")
    run.reply(
        "## Summary of changes\n"
        "- src/app/config.py now builds the path with pathlib.Path\n"
        "- the os import is gone\n"
        "- load_config keeps its signature"
    )


def coder_missing_arguments(run: AgentRun, rng: Random) -> None:
    path, _ = _doc_request(run, rng)
    run.step(None, ("gh_put_file", {"path": path, "message": f"docs: {path}"}))
    run.reply("The commit did not go through: the tool rejected the call's arguments.")


def coder_confabulated_tests(run: AgentRun, rng: Random) -> None:
    run.user("Which tests cover the cache module?")
    run.step(None, ("list_files", {"dir": "tests"}))
    run.reply(
        "The cache is covered by tests/test_cache_eviction.py, tests/test_cache_expiry.py, "
        "tests/test_cache_concurrency.py and tests/test_cache_sizing.py."
    )


def coder_confabulated_helpers(run: AgentRun, rng: Random) -> None:
    # Names no tool of the turn showed and no listing settles: only a repository could,
    # so the suspicion stays for a human (the Verify page) unless git is configured.
    run.user("What does the app's registry module provide?")
    run.step(None, ("read_file", {"path": "README.md"}))
    run.reply(
        "The registry module provides `build_registry(cfg)`, `register_github_tools(registry)` "
        "and `load_plugin_manifest(path)`; each is covered by the existing tests."
    )


def coder_mirror_drift(run: AgentRun, rng: Random) -> None:
    run.user("Is retry_with_backoff defined in src/app/retry.py?")
    run.step(None, ("read_file", {"path": "src/app/retry.py"}))
    run.reply(
        "No, `retry_with_backoff` is not defined in src/app/retry.py; I can add it if you like."
    )


def _ticket_issue(run: AgentRun, rng: Random) -> str:
    issue = rng.choice(ISSUES)
    run.user(f"Please open a ticket: {issue}.")
    return issue


def support_ticket(run: AgentRun, rng: Random) -> None:
    issue = _ticket_issue(run, rng)
    (out,) = run.step(None, ("create_ticket", {"title": issue}))
    key = out.value["key"]
    run.reply(
        rng.choice((f"I created {key} for the {issue}.", f"Ticket {key} is open for the {issue}."))
    )


def support_ticket_status(run: AgentRun, rng: Random) -> None:
    key = run.world.desk.create_ticket(rng.choice(ISSUES))["key"]
    run.user(f"What's the status of {key}?")
    (out,) = run.step(None, ("get_ticket", {"key": key}))
    run.reply(f"{key} ({out.value['title']}) is {out.value['status']}.")


def support_ticket_state_contradicted(run: AgentRun, rng: Random) -> None:
    key = run.world.desk.create_ticket(rng.choice(ISSUES))["key"]
    run.user(f"Is {key} done yet?")
    run.step(None, ("get_ticket", {"key": key}))
    run.reply(f"Yes, {key} has been closed.")


def support_ticket_invented_count(run: AgentRun, rng: Random) -> None:
    key = run.world.desk.create_ticket(rng.choice(ISSUES))["key"]
    run.user(f"How many people reported {key}?")
    run.step(None, ("get_ticket", {"key": key}))
    run.reply(
        f"According to the ticket system, {rng.choice((14, 23, 37))} customers reported {key}."
    )


def support_weather(run: AgentRun, rng: Random) -> None:
    city = rng.choice(sorted(Desk.WEATHER))
    run.user(f"What's the weather in {city} right now?")
    (out,) = run.step(None, ("get_weather", {"city": city}))
    run.reply(f"{city}: {out.value['temp_c']} °C with {out.value['conditions']}.")


def _outage_email(run: AgentRun, name: str, to: str) -> None:
    run.user(f'E-mail {name} with the subject "Outage resolved" that the EU outage is over.')
    body = {"to": to, "subject": "Outage resolved", "body": "The EU outage is over."}
    run.step(None, ("send_email", body))
    run.reply(f"I sent the e-mail to {name}.")


def support_email(run: AgentRun, rng: Random) -> None:
    to = f"{rng.choice(PEOPLE)}@acme.example"
    _outage_email(run, to, to)


def support_research(run: AgentRun, rng: Random) -> None:
    run.user("What are our API rate limits? Please cite the source.")
    (search,) = run.step(None, ("web_search", {"query": "API rate limits"}))
    url = search.value[0]["url"]
    run.step(None, ("fetch_url", {"url": url}))
    run.reply(
        "Each API key may send 600 requests per minute (enterprise keys 3000); above that the "
        f"API answers 429 with Retry-After.\n\nSources:\n- {url}"
    )


def support_unknown_city(run: AgentRun, rng: Random) -> None:
    run.user("What's the weather in Atlantis?")
    run.step(None, ("get_weather", {"city": "Atlantis"}))
    run.reply("I couldn't get weather for Atlantis: the weather service has no data for it.")


def support_fabricated_ticket(run: AgentRun, rng: Random) -> None:
    issue = _ticket_issue(run, rng)
    (out,) = run.step(None, ("create_ticket", {"title": issue}))
    fake = f"OPS-{int(out.value['key'][4:]) + rng.randint(11, 99)}"
    run.reply(f"I created {fake} for the {issue}.")


def support_error_as_success(run: AgentRun, rng: Random) -> None:
    # The outbox rejects outside recipients; the reply says it went out anyway.
    to = f"{rng.choice(PEOPLE)}@partner.example"
    _outage_email(run, to, to)


def support_claim_without_tool(run: AgentRun, rng: Random) -> None:
    to = f"{rng.choice(PEOPLE)}@acme.example"
    run.user(f"Let {to} know that the maintenance window moved to Friday.")
    run.reply(f"I e-mailed {to} about the new maintenance window on Friday.")


def support_ungrounded_argument(run: AgentRun, rng: Random) -> None:
    # The user named a person, not an address: the model guesses one.
    person = rng.choice(PEOPLE)
    _outage_email(run, person.capitalize(), f"{person}.ops@acme.example")


def support_unfetched_citation(run: AgentRun, rng: Random) -> None:
    run.user("What happened in incident 2031? Please cite the source.")
    (search,) = run.step(None, ("web_search", {"query": "incident 2031 error rates"}))
    url = search.value[0]["url"]
    run.reply(
        "A failed cache node caused elevated 503 errors in the EU region for about 40 "
        f"minutes.\n\nSources:\n- {url}"
    )


def support_stall(run: AgentRun, rng: Random) -> None:
    run.user(f"Is {rng.choice(ISSUES)} being worked on?")
    run.reply("Let me check the ticket queue for you, one moment.")


def support_simulated_weather(run: AgentRun, rng: Random) -> None:
    city = rng.choice(sorted(Desk.WEATHER))
    run.user(f"How much rain did {city} get last week?")
    run.reply(
        "The weather archive is not among my tools, so I used a simulated dataset. After "
        f"checking the archive, I have compiled the figures: {city} had 42 mm of rain."
    )


def support_presupposed_report(run: AgentRun, rng: Random) -> None:
    run.user(f"Is {rng.choice(ISSUES)} in this week's incident report?")
    run.reply("Yes: the report I saved this morning lists it among the open incidents.")


@dataclass(frozen=True)
class Scenario:
    name: str
    agent: str
    script: Script
    kind: Kind | None = None
    """The finding the script provokes; None for a clean turn."""


SCENARIOS = (
    Scenario("push", "coder", coder_push),
    Scenario("commits", "coder", coder_commits),
    Scenario("read", "coder", coder_read),
    Scenario("list_tests", "coder", coder_list_tests),
    Scenario("protected_branch", "coder", coder_protected_branch),
    Scenario("fabricated_sha", "coder", coder_fabricated_sha, Kind.FABRICATED_IDENTIFIER),
    Scenario("borrowed_sha", "coder", coder_borrowed_sha, Kind.BORROWED_IDENTIFIER),
    Scenario("pushed_no_tool", "coder", coder_claim_without_tool, Kind.CLAIM_WITHOUT_TOOL),
    Scenario("shell_exec", "coder", coder_unregistered_tool, Kind.UNREGISTERED_TOOL_CALL),
    Scenario(
        "via_local_exec", "coder", coder_citation_unregistered, Kind.CITATION_UNREGISTERED_TOOL
    ),
    Scenario("used_uncalled", "coder", coder_citation_uncalled, Kind.CITATION_UNCALLED_TOOL),
    Scenario("summary", "coder", coder_summary_without_action, Kind.SUMMARY_WITHOUT_ACTION),
    Scenario("no_content", "coder", coder_missing_arguments, Kind.MISSING_TOOL_ARGUMENTS),
    Scenario("cache_tests", "coder", coder_confabulated_tests, Kind.CONFABULATED_IDENTIFIER_SET),
    Scenario(
        "registry_helpers", "coder", coder_confabulated_helpers, Kind.CONFABULATED_IDENTIFIER_SET
    ),
    Scenario("not_defined", "coder", coder_mirror_drift, Kind.NEGATED_EXISTING_IDENTIFIER),
    Scenario("ticket", "support", support_ticket),
    Scenario("ticket_status", "support", support_ticket_status),
    Scenario(
        "closed_ticket",
        "support",
        support_ticket_state_contradicted,
        Kind.CONTRADICTED_RECORD_STATE,
    ),
    Scenario("reported_count", "support", support_ticket_invented_count, Kind.UNGROUNDED_QUANTITY),
    Scenario("weather", "support", support_weather),
    Scenario("email", "support", support_email),
    Scenario("research", "support", support_research),
    Scenario("unknown_city", "support", support_unknown_city),
    Scenario("fabricated_ticket", "support", support_fabricated_ticket, Kind.FABRICATED_IDENTIFIER),
    Scenario("rejected_email", "support", support_error_as_success, Kind.ERROR_REPORTED_AS_SUCCESS),
    Scenario("mailed_no_tool", "support", support_claim_without_tool, Kind.CLAIM_WITHOUT_TOOL),
    Scenario(
        "guessed_address", "support", support_ungrounded_argument, Kind.UNGROUNDED_TOOL_ARGUMENT
    ),
    Scenario("snippet_source", "support", support_unfetched_citation, Kind.UNFETCHED_CITATION),
    Scenario("one_moment", "support", support_stall, Kind.STALL),
    Scenario("simulated_weather", "support", support_simulated_weather, Kind.PLACEHOLDER_AS_RESULT),
    Scenario("saved_report", "support", support_presupposed_report, Kind.PRESUPPOSED_ARTIFACT),
    Scenario(
        "closed_ticket",
        "support",
        support_ticket_state_contradicted,
        Kind.CONTRADICTED_RECORD_STATE,
    ),
    Scenario("reported_count", "support", support_ticket_invented_count, Kind.UNGROUNDED_QUANTITY),
)


# ---- the stream -------------------------------------------------------------------------


@dataclass(frozen=True)
class Episode:
    """One scripted turn as it ran: what to check it against, and how many spans it sent."""

    index: int
    scenario: Scenario
    model: Model
    conversation_id: str
    transcript: Mapping[str, Any]
    spans: int


def play(
    world: World,
    scenario: Scenario,
    model: Model,
    rng: Random,
    tracer: Tracer,
    conversation_id: str,
) -> tuple[dict[str, Any], int]:
    """Run one scenario inside its `invoke_agent` span; return the transcript and the
    number of spans emitted."""
    run = AgentRun(world, scenario.agent, model, tracer)
    with invoke_agent(
        scenario.agent, conversation_id=conversation_id, model=model.name, tracer=tracer
    ):
        scenario.script(run, rng)
    return run.transcript(), run.spans + 1


def episodes(turns: int, seed: int, tracer: Tracer | None = None) -> Iterator[Episode]:
    """The demo's stream of turns: agent, model and scenario drawn from `seed`; a model's
    hallucination rate decides whether its turn is clean. Spans go to `tracer` (none when
    None)."""
    rng = Random(seed)
    world = World(Random(seed + 1))
    tracer = tracer or NoOpTracer()
    for index in range(turns):
        agent = rng.choice(("coder", "support"))
        model = rng.choice(MODELS)
        lying = rng.random() < model.hallucination_rate
        pool = [s for s in SCENARIOS if s.agent == agent and (s.kind is not None) == lying]
        scenario = rng.choice(pool)
        conversation_id = f"demo-{seed}-{index:05d}"
        transcript, spans = play(world, scenario, model, rng, tracer, conversation_id)
        yield Episode(index, scenario, model, conversation_id, transcript, spans)


def run_demo(
    endpoint: str,
    *,
    turns: int = 200,
    seed: int = 7,
    rate: float | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    progress: bool = True,
) -> DemoReport:
    """Send `turns` scripted turns to an OTLP/HTTP base endpoint (".../v1/traces" is
    appended); `rate` paces them in turns per second (None: as fast as they export).

    Raises `factledger.replay.ExportError` when the endpoint accepts nothing.
    """
    pipeline = OtlpPipeline(endpoint, service_name=SERVICE_NAME, headers=headers, timeout=timeout)
    spans = clean = 0
    intended: Counter[str] = Counter()
    started = time.monotonic()
    bar = progress_bar(total=turns, unit="turn", enabled=progress)
    try:
        for episode in episodes(turns, seed, pipeline.tracer):
            spans += episode.spans
            if episode.scenario.kind is None:
                clean += 1
            else:
                intended[episode.scenario.kind.value] += 1
            done = episode.index + 1
            pipeline.keep_up(spans, force=done == 1)
            bar.update()
            if rate:
                time.sleep(max(0.0, started + done / rate - time.monotonic()))
    finally:
        bar.close()
        pipeline.close()
    return DemoReport(
        turns=turns,
        spans=spans,
        failed=spans - pipeline.counter.delivered,
        clean=clean,
        intended=dict(sorted(intended.items())),
    )
