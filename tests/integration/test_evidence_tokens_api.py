"""The query API shows what a verdict rests on, token by token: each finding's `real`
(the real identifiers the tools returned that it was compared with) and the turn's
`backings` (the reply's identifiers a tool result backs, and the call), as stored in the
findings and turn_evidence tables of the shared chDB engine; a version stored without
them reads as empty lists."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from factledger.collector import evidence_rows, rows
from factledger.collector.app import create_app
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.processors.evidence.result_tokens import identifier_backings
from factledger.processors.model import ToolCall, Turn
from factledger.processors.runner import default_runner
from factledger.processors.validators.identifiers import checked_identifiers

T0 = (datetime.now(UTC) - timedelta(hours=2)).replace(microsecond=0)
"""Within the retention window: older rows would be past their TTL."""
SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"


@pytest.fixture
def client(store: Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with TestClient(create_app(settings, store=store)) as test_client:
        yield test_client


def _store(store: Store, turn: Turn, *, evidence: bool = True) -> None:
    """One turn judged by the default validators and written as the pipeline writes it."""
    verdict = default_runner().validate(turn)
    started = T0 + timedelta(seconds=len(turn.turn_id))
    store.insert_turns(
        [
            rows.turn_row(
                turn,
                verdict,
                version=1,
                started_at=started,
                ended_at=started + timedelta(seconds=1),
                validated_at=started + timedelta(seconds=2),
                span_ids=(),
            )
        ]
    )
    store.insert_findings(rows.finding_rows(turn, verdict, version=1, started_at=started))
    if evidence:
        backings = identifier_backings(turn, checked_identifiers(turn))
        row = evidence_rows.turn_evidence_row(
            turn.tenant,
            turn.turn_id,
            version=1,
            started_at=started,
            snapshots=(),
            citations=(),
            backings=backings,
        )
        store.insert_turn_evidence([row])


def _turn(turn_id: str, reply: str, *calls: ToolCall) -> Turn:
    return Turn(
        reply=reply,
        user_message="please",
        tool_calls=calls,
        model="gpt-4o",
        trace_id=turn_id.encode().hex()[:32].rjust(32, "0"),
        turn_id=turn_id,
    )


def test_a_fabricated_key_is_served_with_the_real_key_beside_it(
    client: TestClient, store: Store
) -> None:
    search = ToolCall("jira_search", "call_2", result='[{"key": "OPS-5680"}, {"key": "OPS-12"}]')
    _store(store, _turn("reject", "I filed OPS-5707 for you.", search))
    detail = client.get("/api/v1/turns/reject").json()
    assert detail["verdict"] == "reject"
    (finding,) = [f for f in detail["findings"] if f["kind"] == "fabricated_identifier"]
    assert (finding["token"], finding["real"]) == (
        "OPS-5707",
        [{"token": "OPS-5680", "tool": "jira_search", "call_id": "call_2"}],
    )
    assert detail["backings"] == []


def test_a_passing_turn_is_served_with_the_call_behind_each_identifier(
    client: TestClient, store: Store
) -> None:
    reply = f"Pushed {SHA} to main."
    _store(store, _turn("pass", reply, ToolCall("git_push", "call_7", result=f"ok {SHA}")))
    detail = client.get("/api/v1/turns/pass").json()
    assert (detail["verdict"], detail["findings"]) == ("pass", [])
    start = reply.index(SHA)
    assert detail["backings"] == [
        {
            "token": SHA,
            "start": start,
            "end": start + len(SHA),
            "tool": "git_push",
            "call_id": "call_7",
        }
    ]


def test_a_turn_stored_without_them_reads_empty_lists(client: TestClient, store: Store) -> None:
    _store(store, _turn("bare", "I filed OPS-5707 for you."), evidence=False)
    detail = client.get("/api/v1/turns/bare").json()
    assert {str(f["kind"]): f["real"] for f in detail["findings"]}["fabricated_identifier"] == []
    assert detail["backings"] == []
