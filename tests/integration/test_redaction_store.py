"""Redaction before storage, end to end on the embedded store: a turn full of secrets is
judged on its raw values (the key the tool returned grounds the reply; the invented one
is found) and afterwards no table holds any of the secrets."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from factledger.collector.app import create_app
from factledger.collector.redaction import Redactor
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import turn_request
from tests.integration.stored_text import judged_turns, stored_tables

JSON = {"Content-Type": "application/json"}

RETURNED_KEY = "sk-proj-Qm8vX2LpT4rZ9wK1nB7yC3dF"
INVENTED_TOKEN = "ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
SECRETS = {
    "url password": "Sup3rS3cretPw",
    "returned key": RETURNED_KEY,
    "invented token": INVENTED_TOKEN,
    "bearer token": "tok_live_8f3a9c2e71b64d05aa",
    "aws key": "AKIAIOSFODNN7EXAMPLE",
    "private key body": "MIIEowIBAAKCAQEAwJ9xExample",
    "password in json": "correct horse battery",
    "e-mail": "ana.lopez@example.com",
    "phone": "+49 30 1234 5678",
}


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    rules = tmp_path / "redaction.toml"
    rules.write_text("[redaction]\nemails = true\nphones = true\n", encoding="utf-8")
    settings = ServiceSettings(
        data_dir=tmp_path / "data",
        grace_seconds=0.2,
        max_wait_seconds=5,
        redactor=Redactor.load(rules),
    )
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _secret_turn() -> bytes:
    result = json.dumps(
        {
            "order_id": "#W0000042",
            "status": "shipped",
            "api_key": RETURNED_KEY,
            "note": f"contact {SECRETS['e-mail']} or {SECRETS['phone']}",
            "config": {"password": SECRETS["password in json"]},
        }
    )
    body, _ = turn_request(
        42,
        hallucinate=False,
        user_text=(
            "Order #W0000042 fails to sync with "
            f"postgres://admin:{SECRETS['url password']}@db.internal:5432/shop, "
            f"the deploy key is -----BEGIN RSA PRIVATE KEY-----\\n{SECRETS['private key body']}"
            "\\n-----END RSA PRIVATE KEY-----"
        ),
        result=result,
        reply=(
            f"Order #W0000042 has shipped. Your API key is {RETURNED_KEY}. "
            f"I also stored the deploy token {INVENTED_TOKEN} for you."
        ),
        agent_attributes={
            "http.request.header.authorization": f"Bearer {SECRETS['bearer token']}",
            "cloud.credentials": f"aws {SECRETS['aws key']}",
        },
    )
    return body


def _judged(client: TestClient) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page = client.get("/api/v1/turns", params={"verdict": ["reject", "flag", "pass"]}).json()
        if page["total"]:
            turn: dict[str, Any] = client.get(f"/api/v1/turns/{page['turns'][0]['turn_id']}").json()
            return turn
        time.sleep(0.1)
    raise AssertionError("the turn was not judged in time")


def test_no_table_holds_a_secret_and_validation_saw_the_raw_turn(
    client: TestClient, store: Store
) -> None:
    answer = client.post("/v1/traces", headers=JSON, content=_secret_turn())
    assert answer.status_code == 200
    turn = _judged(client)
    note = f"the ticket quotes the header: Authorization: Bearer {SECRETS['bearer token']}"
    review = {"label": "hallucination", "note": note}
    assert client.post(f"/api/v1/turns/{turn['turn_id']}/reviews", json=review).status_code == 201

    # Judged on the raw values: the key the tool returned is grounded, the invented one is
    # not; what is stored of the finding is redacted, its offsets moved with the reply.
    invented = [f for f in turn["findings"] if f["kind"] == "fabricated_identifier"]
    assert [f["token"] for f in invented] == ["[REDACTED:github_token]"]
    start, end = invented[0]["span"]
    assert turn["reply"][start:end] == "[REDACTED:github_token]"
    assert "Your API key is [REDACTED:openai_key]." in turn["reply"]
    assert turn["tool_calls"][0]["ok"] is True

    database = store.config.database
    tables = [
        row["name"]
        for row in store._query(
            "SELECT name FROM system.tables"
            " WHERE database = {db:String} AND engine NOT LIKE '%View'",
            {"db": database},
        )
    ]
    assert {"spans", "turns", "findings", "reviews", "turn_versions"} <= set(tables)
    client_of_store = store._live()
    stored = {
        table: client_of_store.raw_query(
            f"SELECT * FROM {database}.{table}", fmt="TabSeparated"
        ).decode("utf-8", "replace")
        for table in tables
    }
    assert stored["spans"].count("[REDACTED:") >= len(SECRETS)
    for what, secret in SECRETS.items():
        holding = [table for table, text in stored.items() if secret in text]
        assert not holding, f"the {what} is stored in {holding}"


NAME_TOKEN = "ghp_Na8me7Sp6an5To4ke3nX2y1Z0aBcDeFgHiJkL"
EVENT_TOKEN = "xoxb-2048-EventNameSlackToken77"
BYTES_KEY = "sk-proj-Bytes5ecretK3yInAnAttr1bute"
SESSION_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzaWQiOiJzZXNzLTQyIn0.U2Vzc2lvblNpZ25hdHVyZQ"
REVIEWER_PASSWORD = "Rev1ewerPa55word"


def _named_secrets_turn(index: int) -> bytes:
    """A turn whose conversation id is a session token, with one more span whose name,
    event name and bytes attribute hold secrets."""
    body, ids = turn_request(index, hallucinate=False)
    request = json.loads(body)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for attribute in spans[0]["attributes"]:
        if attribute["key"] == "gen_ai.conversation.id":
            attribute["value"] = {"stringValue": SESSION_JWT}
    spans.append(
        {
            "traceId": spans[0]["traceId"],
            "spanId": f"{index:012x}ffff",
            "parentSpanId": ids[0],
            "name": f"GET /user?access_token={NAME_TOKEN}",
            "kind": 3,
            "startTimeUnixNano": spans[0]["startTimeUnixNano"],
            "endTimeUnixNano": spans[0]["startTimeUnixNano"],
            "attributes": [
                {
                    "key": "http.response.body",
                    "value": {"bytesValue": base64.b64encode(f"k={BYTES_KEY}".encode()).decode()},
                }
            ],
            "events": [
                {"timeUnixNano": spans[0]["startTimeUnixNano"], "name": f"retry {EVENT_TOKEN}"}
            ],
        }
    )
    return json.dumps(request).encode()


def test_names_bytes_conversation_ids_and_reviewers_are_stored_redacted(tmp_path: Path) -> None:
    data = tmp_path / "service"
    with ServiceProcess(data) as service:
        for index in (51, 52):
            answer = httpx.post(
                f"{service.url}/v1/traces", headers=JSON, content=_named_secrets_turn(index)
            )
            assert answer.status_code == 200
        turns = judged_turns(service.url, 2)
        # One conversation, both turns, under the same pseudonym; the token is not in it.
        pseudonyms = {turn["conversation_id"] for turn in turns}
        assert len(pseudonyms) == 1 and SESSION_JWT not in repr(pseudonyms)
        (pseudonym,) = pseudonyms
        assert pseudonym == Redactor.default().identifier(SESSION_JWT)
        listed = httpx.get(
            f"{service.url}/api/v1/turns",
            params={"conversation_id": pseudonym, "verdict": ["reject", "flag", "pass"]},
        ).json()
        assert listed["total"] == 2
        review = {
            "label": "not_hallucination",
            "reviewer": f"ops password={REVIEWER_PASSWORD}",
        }
        answer = httpx.post(
            f"{service.url}/api/v1/turns/{turns[0]['turn_id']}/reviews", json=review
        )
        assert answer.status_code == 201
    stored = stored_tables(data)
    spans = stored["spans"]
    assert pseudonym in spans  # the spans' conversation id is the turns' one
    for secret in (NAME_TOKEN, EVENT_TOKEN, BYTES_KEY, SESSION_JWT, REVIEWER_PASSWORD):
        holding = [table for table, text in stored.items() if secret in text]
        hex_holding = [t for t, text in stored.items() if secret.encode().hex() in text]
        assert not holding and not hex_holding, f"{secret} is stored in {holding or hex_holding}"
