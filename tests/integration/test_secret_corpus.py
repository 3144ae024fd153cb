"""A corpus of secret shapes, each where agents put them, sent as OTLP spans (and reviews)
to a real service on loopback: afterwards no table of its store, no answer of its query
API, no line of its metrics, no webhook body its alert rules sent (rules keyed by model,
agent, service and finding kind, so names carrying secrets become alert keys) and no
line of its log holds any secret's distinctive part (nor its hex, the form bytes
attributes are stored in).

The write-ahead log is left out on purpose: it holds requests as received until they are
stored (docs/deploy.md, step 4); everything here is about what is kept after that.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import turn_request
from tests.integration.stored_text import judged_turns, stored_tables
from tests.integration.webhook_receiver import Receiver

JSON = {"Content-Type": "application/json"}
_AWS = "wJalrXUtnFEMI/K7MDENG/"


@dataclass(frozen=True)
class Shape:
    """One secret as an agent's data carries it: `where` it is put, the `text` put there
    and the `secret` parts that must never be stored or shown."""

    name: str
    where: str
    text: str
    secret: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)


def _shape(
    name: str, where: str, text: str, *secret: str, extra: dict[str, Any] | None = None
) -> Shape:
    return Shape(name, where, text, secret or (text,), extra or {})


CORPUS: tuple[Shape, ...] = (
    # Raw text in the user's message.
    _shape("openai key", "text", "sk-proj-Cx7Rq2Lm9Tz4Wv8Kp1Nb6Hd3"),
    _shape("anthropic key", "text", "sk-ant-api03-Ant7hrop1cK3yXyZabcdEFGH"),
    _shape("aws access key id", "text", "AKIAZ7EXAMPLEQ4RT2MN"),
    _shape("github classic token", "text", "ghp_R4wT3xtGithubClassicTokenAbCdEf012345"),
    _shape("github fine-grained token", "text", "github_pat_11RAWTEXT0Fine_Grained9Tok3n"),
    _shape("gitlab token", "text", "glpat-RawGitlabTok3nXyz0123"),
    _shape("slack bot token", "text", "xoxb-1111-RawSlackBotTok3n"),
    _shape(
        "slack webhook",
        "text",
        "https://hooks.slack.com/services/T0AAA0001/B0BBB0002/cWebh00kS3cr3tXyz",
        "cWebh00kS3cr3tXyz",
    ),
    _shape("google api key", "text", "AIzaSyRawG00gleApiKey0123456789abcdefgh"),
    _shape("stripe key", "text", "sk_live_RawStr1peLiveKey0123"),
    _shape("huggingface token", "text", "hf_RawHuggingFaceTok3nAbcdefghij0123"),
    _shape("npm token", "text", "npm_RawNpmTok3nAbcdefghijklmnopqrstu0123"),
    _shape(
        "jwt",
        "text",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyYXctdGV4dCJ9.UmF3VGV4dEp3dFNpZ25hdHVyZQ",
        "UmF3VGV4dEp3dFNpZ25hdHVyZQ",
    ),
    _shape(
        "bearer header in prose",
        "text",
        "the call sent Authorization: Bearer RawProseBearerTok3n99",
        "RawProseBearerTok3n99",
    ),
    # JSON-escaped inside messages: the line breaks become `\n` in the stored JSON.
    _shape(
        "password after a line break",
        "text",
        "host=db\npassword=Esc4pedPassw0rd\n",
        "Esc4pedPassw0rd",
    ),
    _shape(
        "basic auth in a request dump",
        "text",
        "GET /admin HTTP/1.1\r\nAuthorization: Basic dXNlcjpFc2NCYXNpY1B3ZA==\r\n",
        "dXNlcjpFc2NCYXNpY1B3ZA",
    ),
    _shape(
        "cookie in a request dump",
        "text",
        "GET / HTTP/1.1\r\nCookie: sessionid=Ck9sEsc4ped77abc; csrftoken=Csrf88Tok3nEsc\r\n",
        "Ck9sEsc4ped77abc",
        "Csrf88Tok3nEsc",
    ),
    _shape(
        "key after a line break",
        "text",
        "keys:\nsk-proj-Esc4pedOpenAiKeyAbc123\n",
        "Esc4pedOpenAiKeyAbc123",
    ),
    _shape(
        "private-token header in a dump",
        "text",
        "GET /api/v4/projects HTTP/1.1\r\nPRIVATE-TOKEN: EscPrivT0kenVal88\r\n",
        "EscPrivT0kenVal88",
    ),
    _shape(
        "token authorization scheme",
        "text",
        "curl -H 'Authorization: Token 9944b09199c62bcf9418ad846dd0e4bb' https://x",
        "9944b09199c62bcf9418ad846dd0e4bb",
    ),
    # Tool arguments (structured, so in the spans they are JSON inside JSON).
    _shape(
        "password argument",
        "arguments",
        json.dumps({"password": "Arg Pass Phrase 9"}),
        "Arg Pass Phrase 9",
    ),
    _shape(
        "database url argument",
        "arguments",
        json.dumps({"dsn": "postgres://app:ArgUrlPw77x@db:5432/shop"}),
        "ArgUrlPw77x",
    ),
    _shape(
        "bearer header argument",
        "arguments",
        json.dumps({"headers": {"Authorization": "Bearer argBearerTok3n123456"}}),
        "argBearerTok3n123456",
    ),
    _shape(
        "api key argument",
        "arguments",
        json.dumps({"api_key": "argApiKey123456"}),
        "argApiKey123456",
    ),
    _shape(
        "token in a free argument",
        "arguments",
        json.dumps({"note": "use ghp_ArgGithubTok3nAbcdefghijklmnop012345"}),
        "ArgGithubTok3nAbcdefghijklmnop012345",
    ),
    # Tool results.
    _shape(
        "aws secret access key in a result",
        "result",
        json.dumps({"SecretAccessKey": _AWS + "bPxRfiCYRESULTKEY1"}),
        "bPxRfiCYRESULTKEY1",
    ),
    _shape(
        "azure connection string in a result",
        "result",
        json.dumps(
            {
                "connectionString": "DefaultEndpointsProtocol=https;AccountName=acme;"
                "AccountKey=Az9StorageKeyResultAbcdefghij0123456789==;"
                "EndpointSuffix=core.windows.net"
            }
        ),
        "Az9StorageKeyResultAbcdefghij0123456789",
    ),
    _shape(
        "client secret in a result",
        "result",
        json.dumps({"client_secret": "cl1entS3cretValue"}),
        "cl1entS3cretValue",
    ),
    _shape(
        "refresh token in a result",
        "result",
        json.dumps({"refresh_token": "1//0gRefreshTokenVal"}),
        "0gRefreshTokenVal",
    ),
    _shape(
        "set-cookie in a response dump",
        "result",
        "HTTP/1.1 200 OK\r\nSet-Cookie: sid=s%3ARes8ultCookieVal; Path=/; HttpOnly\r\n",
        "Res8ultCookieVal",
    ),
    _shape(
        "npmrc auth token in a result",
        "result",
        "//registry.npmjs.org/:_authToken=NpmAuthTok3nValue12\n",
        "NpmAuthTok3nValue12",
    ),
    _shape(
        "private key in a result",
        "result",
        json.dumps(
            {
                "key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEResultBody\n"
                "-----END OPENSSH PRIVATE KEY-----\n"
            }
        ),
        "b3BlbnNzaC1rZXktdjEResultBody",
    ),
    # Environment dumps a tool printed.
    _shape(
        "env database password",
        "result",
        "HOME=/root\nDB_PASSWORD=EnvDbPassw0rd\n",
        "EnvDbPassw0rd",
    ),
    _shape(
        "env postgres password", "result", "PGHOST=db\nPGPASSWORD=EnvPgPassw0rd\n", "EnvPgPassw0rd"
    ),
    _shape(
        "env aws secret access key",
        "result",
        f"AWS_ACCESS_KEY_ID=AKIAENVEXAMPLE0KEY12\nAWS_SECRET_ACCESS_KEY={_AWS}EnvAwsSecretKey123\n",
        "EnvAwsSecretKey123",
        "AKIAENVEXAMPLE0KEY12",
    ),
    _shape(
        "env openai key",
        "result",
        "OPENAI_API_KEY=sk-proj-EnvOpenAiKeyAbcdef0123\n",
        "EnvOpenAiKeyAbcdef0123",
    ),
    _shape(
        "env mysql password", "result", "MYSQL_USER=app\nMYSQL_PWD=EnvMysqlPwd77\n", "EnvMysqlPwd77"
    ),
    _shape(
        "env github token",
        "result",
        "GITHUB_TOKEN=ghs_EnvGithubTok3nAbcdefghijklmnop01234\n",
        "EnvGithubTok3nAbcdefghijklmnop01234",
    ),
    _shape(
        "env redis url", "result", "REDIS_URL=redis://:EnvRedisPw99@cache:6379\n", "EnvRedisPw99"
    ),
    # HTTP headers recorded as span attributes.
    _shape(
        "authorization header",
        "attribute",
        "Bearer HdrBearerTok3n0123456",
        "HdrBearerTok3n0123456",
        extra={"key": "http.request.header.authorization", "list": True},
    ),
    _shape(
        "cookie header",
        "attribute",
        "session=HdrCookieVal55",
        "HdrCookieVal55",
        extra={"key": "http.request.header.cookie"},
    ),
    _shape(
        "private-token header",
        "attribute",
        "HdrPrivTok55abc",
        "HdrPrivTok55abc",
        extra={"key": "http.request.header.private-token"},
    ),
    _shape(
        "x-api-key header",
        "attribute",
        "HdrXApiKey66abc",
        "HdrXApiKey66abc",
        extra={"key": "http.request.header.x-api-key"},
    ),
    # URLs.
    _shape(
        "api key in a query",
        "attribute",
        "https://api.example.com/v1/items?api_key=UrlApiKey77&x=1",
        "UrlApiKey77",
        extra={"key": "url.full"},
    ),
    _shape(
        "password in a url",
        "attribute",
        "https://deploy:UrlPassw0rd88@git.example.com/repo.git",
        "UrlPassw0rd88",
        extra={"key": "url.full"},
    ),
    _shape(
        "access token in a query",
        "attribute",
        "https://example.com/cb?access_token=UrlAccessTok99",
        "UrlAccessTok99",
        extra={"key": "http.url"},
    ),
    _shape(
        "database url in a resource",
        "resource",
        "mysql://root:ResMysqlPw42@db/app",
        "ResMysqlPw42",
        extra={"key": "deployment.database_url"},
    ),
    # Names and identifiers. The three group names alerts are keyed by come from turns
    # that are rejected, so the alert rules below fire for their groups.
    _shape(
        "token in an agent name",
        "agent",
        "deploy-bot token=AgentNameTok3n77",
        "AgentNameTok3n77",
        extra={"reject": True},
    ),
    _shape(
        "key in a model name",
        "model",
        "gpt-4o sk-proj-ModelNameKey0123456789ab",
        "ModelNameKey0123456789ab",
        extra={"reject": True},
    ),
    _shape(
        "password in a service name",
        "service",
        "shop password=ServiceNamePw55",
        "ServiceNamePw55",
        extra={"reject": True},
    ),
    _shape(
        "password in a span name",
        "span name",
        "POST /login password=NameP4ssword1",
        "NameP4ssword1",
    ),
    _shape(
        "token in an event name",
        "event name",
        "retry with xoxp-2222-EventSlackTok3n",
        "EventSlackTok3n",
    ),
    _shape(
        "session token as the conversation id",
        "conversation",
        "eyJhbGciOiJIUzI1NiJ9.eyJzaWQiOiJjb3JwdXMifQ.Q29ycHVzU2Vzc2lvblNpZw",
        "Q29ycHVzU2Vzc2lvblNpZw",
    ),
    _shape(
        "token in a bytes attribute",
        "bytes",
        "token: ghp_BytesGithubTok3nAbcdefghijklmnop0123",
        "BytesGithubTok3nAbcdefghijklmnop0123",
    ),
    _shape(
        "status message",
        "status",
        "401 for key sk-proj-StatusOpenAiKeyAbcdef012",
        "StatusOpenAiKeyAbcdef012",
    ),
    # The agent's reply (findings quote what they flag).
    _shape(
        "key in the reply",
        "reply",
        "Your new key is sk-proj-ReplyOpenAiKeyAbcdef01.",
        "ReplyOpenAiKeyAbcdef01",
    ),
    # A human's review.
    _shape(
        "key in a review note",
        "note",
        "agent leaked AIzaSyReviewNoteKey0123456789abcdefghij",
        "ReviewNoteKey0123456789abcdefgh",
    ),
    _shape("password in a reviewer", "reviewer", "ops password=RevPassw0rd11", "RevPassw0rd11"),
)


def _attributes(span: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["key"]: a for a in span["attributes"]}


def _set_arguments(spans: list[dict[str, Any]], arguments: dict[str, Any]) -> None:
    """The turn's one tool call takes `arguments`: in the tool span and in the messages."""
    for span in spans:
        attributes = _attributes(span)
        if "gen_ai.tool.call.arguments" in attributes:
            attributes["gen_ai.tool.call.arguments"]["value"] = {
                "stringValue": json.dumps(arguments)
            }
        for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
            if key not in attributes:
                continue
            messages = json.loads(attributes[key]["value"]["stringValue"])
            for message in messages:
                for part in message.get("parts", []):
                    if part.get("type") == "tool_call":
                        part["arguments"] = arguments
            attributes[key]["value"] = {"stringValue": json.dumps(messages)}


def _turn(index: int, shape: Shape) -> dict[str, Any]:
    """The resourceSpans of one turn carrying `shape` where it says."""
    where, text = shape.where, shape.text
    body, ids = turn_request(
        index,
        hallucinate=bool(shape.extra.get("reject")),
        model=text if where == "model" else "gpt-4o",
        user_text=f"Order #W{index:07d}: {text}" if where == "text" else None,
        result=text if where == "result" else None,
        reply=text if where == "reply" else None,
        agent_attributes={"gen_ai.agent.name": text} if where == "agent" else None,
    )
    resource_spans: dict[str, Any] = json.loads(body)["resourceSpans"][0]
    spans: list[dict[str, Any]] = resource_spans["scopeSpans"][0]["spans"]
    agent = spans[0]
    if where == "arguments":
        _set_arguments(spans, json.loads(text))
    elif where == "attribute":
        value: dict[str, Any] = {"stringValue": text}
        if shape.extra.get("list"):
            value = {"arrayValue": {"values": [value]}}
        agent["attributes"].append({"key": shape.extra["key"], "value": value})
    elif where == "resource":
        resource_spans["resource"]["attributes"].append(
            {"key": shape.extra["key"], "value": {"stringValue": text}}
        )
    elif where == "service":
        for attribute in resource_spans["resource"]["attributes"]:
            if attribute["key"] == "service.name":
                attribute["value"] = {"stringValue": text}
    elif where == "conversation":
        _attributes(agent)["gen_ai.conversation.id"]["value"] = {"stringValue": text}
    elif where in ("span name", "event name", "bytes", "status"):
        extra: dict[str, Any] = {
            "traceId": agent["traceId"],
            "spanId": f"{index:012x}ffff",
            "parentSpanId": ids[0],
            "name": text if where == "span name" else "GET /health",
            "kind": 3,
            "startTimeUnixNano": agent["startTimeUnixNano"],
            "endTimeUnixNano": agent["startTimeUnixNano"],
            "attributes": [],
        }
        if where == "event name":
            extra["events"] = [{"timeUnixNano": agent["startTimeUnixNano"], "name": text}]
        if where == "bytes":
            encoded = base64.b64encode(text.encode()).decode()
            extra["attributes"] = [{"key": "http.request.body", "value": {"bytesValue": encoded}}]
        if where == "status":
            extra["status"] = {"code": 2, "message": text}
        spans.append(extra)
    return resource_spans


def _shown(url: str, turns: list[dict[str, Any]]) -> dict[str, str]:
    """Every answer of the query API and the metrics, as text by path."""
    paths = [
        "/api/v1/turns?verdict=reject&verdict=flag&verdict=pass&limit=500",
        "/api/v1/review-queue?limit=500",
        "/api/v1/stats/reject-rate",
        "/api/v1/stats/review-precision",
        "/api/v1/alerts",
        "/api/v1/alerts/rules",
        "/api/v1/tenants",
        "/metrics",
    ]
    paths += [f"/api/v1/turns/{turn['turn_id']}" for turn in turns]
    shown: dict[str, str] = {}
    for path in paths:
        answer = httpx.get(f"{url}{path}", timeout=30)
        assert answer.status_code == 200, (path, answer.text)
        shown[path] = answer.text
    for turn in turns:  # a conversation's turns are found by its stored id
        conversation = turn["conversation_id"]
        answer = httpx.get(
            f"{url}/api/v1/turns",
            params={"conversation_id": conversation, "verdict": ["reject", "flag", "pass"]},
            timeout=30,
        )
        assert answer.json()["total"] >= 1, conversation
        shown[f"conversation {conversation}"] = answer.text
    return shown


def _alert_rules(path: Path, receiver: Receiver) -> Path:
    """Rules that fire for every model, agent, service and finding kind with a rejected
    turn in the last three hours, each notice sent as JSON and as Slack text."""
    hooks = (
        f'webhooks = [{{ url = "{receiver.url("/json")}" }}, '
        f'{{ url = "{receiver.url("/slack")}", format = "slack" }}]\n'
    )
    rules = "".join(
        f'[[rules]]\nname = "by-{group}"\ngroup_by = "{group}"\nwindow = "3h"\n'
        "threshold = 0.001\nbaseline_factor = false\nmin_turns = 1\n"
        for group in ("model", "agent", "service", "kind")
    )
    path.write_text(hooks + rules, encoding="utf-8")
    return path


def test_no_secret_of_the_corpus_is_stored_or_shown(tmp_path: Path) -> None:
    assert len(CORPUS) >= 40
    data = tmp_path / "service"
    receiver = Receiver()
    env = {
        "FACTLEDGER_ALERTS": str(_alert_rules(tmp_path / "alerts.toml", receiver)),
        "FACTLEDGER_ALERT_INTERVAL_SECONDS": "1",
    }
    spans = [_turn(1000 + i, shape) for i, shape in enumerate(CORPUS)]
    try:
        with ServiceProcess(data, env) as service:
            answer = httpx.post(
                f"{service.url}/v1/traces",
                headers=JSON,
                content=json.dumps({"resourceSpans": spans}).encode(),
                timeout=60,
            )
            assert answer.status_code == 200, answer.text
            turns = judged_turns(service.url, len(CORPUS))
            for shape in CORPUS:
                if shape.where in ("note", "reviewer"):
                    review = {"label": "hallucination", shape.where: shape.text}
                    reviewed = httpx.post(
                        f"{service.url}/api/v1/turns/{turns[0]['turn_id']}/reviews", json=review
                    )
                    assert reviewed.status_code == 201
            shown = _shown(service.url, turns)
            notices = _notices(receiver)
        log = service.log()
    finally:
        receiver.close()
    stored = stored_tables(data)
    assert {"spans", "turns", "findings", "reviews", "alerts"} <= set(stored)
    assert "[REDACTED:" in stored["spans"] and "[REDACTED:" in stored["reviews"]
    places = {
        **{f"table {t}": text for t, text in stored.items()},
        **shown,
        "webhook bodies": notices,
        "service log": log,
    }
    leaks = [
        f"{shape.name} ({shape.where}): {part!r} in {where}"
        for shape in CORPUS
        for part in shape.secret
        for where, text in places.items()
        if part in text or part.encode().hex() in text
    ]
    assert not leaks, "\n".join(leaks)


def _notices(receiver: Receiver) -> str:
    """Every webhook body, once a notice went out for each group a secret names (each
    rejected turn's model, agent and service) in both formats."""
    rejected = [shape for shape in CORPUS if shape.extra.get("reject")]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        keyed = {(b["group_by"], b["tenant"]) for b in receiver.bodies("/json")}
        groups = {group for group, _ in keyed}
        if {"model", "agent", "service", "kind"} <= groups and len(receiver.bodies("/json")) >= len(
            rejected
        ) + 3:
            break
        time.sleep(0.2)
    bodies = receiver.bodies()
    assert len(receiver.bodies("/slack")) >= 4, "the alert rules fired"
    return json.dumps(bodies, ensure_ascii=False)
