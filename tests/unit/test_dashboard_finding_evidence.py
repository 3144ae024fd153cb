"""Each finding kind's evidence on the turn page: the sentence that says what the finding
rests on, and the marks it puts on the tool trace. Findings and calls are as the query API
returns them for the demo's turns. Green (`backed`) only where the trace backs the reply.
"""

from __future__ import annotations

from typing import Any

import pytest

from factledger.dashboard.finding_evidence import (
    _BUILDERS,
    MAX_LISTED,
    CallBadge,
    CallMark,
    FindingEvidence,
    badges_on,
    finding_evidence,
    marks_on,
    severity_on,
)
from factledger.processors.kinds import KIND_INFO, Kind


def call(
    name: str,
    arguments: Any,
    result: str | None,
    *,
    ok: bool = True,
    call_id: str = "",
    origin: str = "structured",
    span_id: str = "",
) -> dict[str, Any]:
    return {
        "name": name,
        "call_id": call_id,
        "arguments": arguments,
        "result": result,
        "ok": ok,
        "span_id": span_id,
        "origin": origin,
    }


def finding(kind: str, token: str, *checked: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "class": KIND_INFO[Kind(kind)].hallucination_class,
        "severity": KIND_INFO[Kind(kind)].default_severity.value,
        "message": extra.pop("message", ""),
        "token": token,
        "checked_against": list(checked),
        "span": None,
        "validator": "test@1",
        "score": None,
        "call_id": extra.pop("call_id", None),
        **extra,
    }


def one(findings: list[dict[str, Any]], calls: list[dict[str, Any]], user: str = "") -> Any:
    (got,) = finding_evidence(findings, calls, user)
    return got


def tones(found: FindingEvidence) -> set[str | None]:
    return {p.tone for p in found.parts} | {m.tone for m in found.marks}


REJECTED = call(
    "send_email",
    {"to": "alice@partner.example", "subject": "Outage resolved", "body": "The EU outage is over."},
    "Error: recipient rejected: alice@partner.example is outside acme.example",
    ok=False,
    call_id="call_1",
)


# ---- class 3: the failed call and its error ----------------------------------------------


def test_a_failed_call_reported_as_success_shows_the_call_and_its_error():
    found = one(
        [
            finding(
                "error_reported_as_success",
                "sent",
                "send_email",
                call_id="call_1",
                message="the reply claims 'sent' (send) but send_email failed in this turn",
            )
        ],
        [REJECTED],
        'E-mail alice@partner.example with the subject "Outage resolved"',
    )
    assert found.sentence == (
        "the reply says sent, but send_email (call_1) failed: Error: recipient rejected: "
        "alice@partner.example is outside acme.example"
    )
    assert "tool result" not in found.sentence
    assert found.marks == (
        CallMark(
            0,
            "result",
            "Error: recipient rejected: alice@partner.example is outside acme.example",
            "against",
        ),
    )
    assert "backed" not in tones(found)


def test_the_error_line_of_a_json_error_payload_is_the_one_shown():
    failed = call(
        "deploy",
        {"env": "prod"},
        '{"ok": false, "error_code": "QUOTA", "message": "quota exceeded"}',
        ok=False,
        call_id="c9",
    )
    found = one(
        [finding("error_reported_as_success", "Deployed!", "deploy", call_id="c9")], [failed]
    )
    assert found.sentence.endswith(
        'deploy (c9) failed: {"ok": false, "error_code": "QUOTA", "message": "quota exceeded"}'
    )
    assert [m.text for m in found.marks] == [
        '"ok": false,',
        '"error_code": "QUOTA",',
        '"message": "quota exceeded"',
    ]
    assert {m.tone for m in found.marks} == {"against"}


def test_a_failed_call_without_a_result_shows_its_span_status():
    failed = call("deploy", {}, None, ok=False, call_id="c2", span_id="ab12")
    (found,) = finding_evidence(
        [finding("error_reported_as_success", "deployed", "deploy", call_id="c2")],
        [failed],
        "",
        [{"span_id": "ab12", "status_message": "HTTP 503 from the deploy API"}],
    )
    assert found.sentence.endswith("deploy (c2) failed: HTTP 503 from the deploy API")
    assert found.marks == ()  # the payload shows "(no result recorded)": nothing to mark


def test_a_failed_call_found_by_name_when_the_finding_names_no_call_id():
    ok = call("send_email", {"to": "a@acme.example"}, '{"status": "sent"}', call_id="c1")
    failed = dict(REJECTED, call_id="c2")
    found = one([finding("error_reported_as_success", "Done!", "send_email")], [ok, failed])
    assert "send_email (c2) failed" in found.sentence
    assert "send_email (c1)" not in found.sentence
    assert [m.call for m in found.marks] == [1]


# ---- tools nobody offered ----------------------------------------------------------------

OFFERED = ("gh_list_commits", "gh_put_file", "list_files", "read_file")


def test_a_call_to_a_tool_never_offered_lists_the_offered_tools_and_is_not_green():
    shell = call(
        "shell_exec",
        {"command": "grep -rn load_config src"},
        "Error: unknown tool 'shell_exec'",
        ok=False,
        call_id="call_1",
    )
    read = call("read_file", {"path": "src/app/config.py"}, "def load_config(path): ...")
    found = one(
        [finding("unregistered_tool_call", "shell_exec", *OFFERED, call_id="call_1")],
        [shell, read],
    )
    assert found.sentence == (
        "shell_exec was called, but it is not among the offered tools; the tools offered: "
        "gh_list_commits, gh_put_file, list_files, read_file"
    )
    assert found.badges == (CallBadge(0, "not offered", "against"),)
    assert found.marks == ()  # its own "unknown tool 'shell_exec'" result is no backing
    assert "backed" not in tones(found)


@pytest.mark.parametrize(
    ("checked", "tail"),
    [
        pytest.param(
            ("no tools offered",), "no tools were offered to the model", id="none-offered"
        ),
        pytest.param(
            tuple(f"tool_{i:02d}" for i in range(MAX_LISTED + 3)),
            "tool_10, tool_11 and 3 more",
            id="long-lists-are-counted",
        ),
    ],
)
def test_the_offered_tools(checked: tuple[str, ...], tail: str):
    prose = call("publish", {}, None, origin="prose")
    found = one([finding("unregistered_tool_call", "publish", *checked)], [prose])
    assert found.sentence.startswith("publish was written out in the reply as a call")
    assert found.sentence.endswith(tail)
    assert found.badges == (CallBadge(0, "not offered", "against"),)


def test_a_cited_tool_never_offered_lists_the_offered_tools():
    found = one([finding("citation_unregistered_tool", "local_exec", *OFFERED)], [])
    assert found.sentence == (
        "the reply cites local_exec, which is not among the offered tools; the tools offered: "
        "gh_list_commits, gh_put_file, list_files, read_file"
    )


@pytest.mark.parametrize(
    ("checked", "tail"),
    [
        (("list_files",), "the calls that ran: list_files"),
        (("no tool calls in this turn",), "no tool was called"),
    ],
    ids=["calls-ran", "no-call"],
)
def test_a_cited_tool_that_was_offered_but_not_called(checked: tuple[str, ...], tail: str):
    found = one([finding("citation_uncalled_tool", "gh_list_commits", *checked)], [])
    assert found.sentence == (
        f"the reply cites gh_list_commits, an offered tool that no call of this turn ran; {tail}"
    )


# ---- class 4b: arguments -----------------------------------------------------------------

GUESSED = call(
    "send_email",
    {"to": "farah.ops@acme.example", "subject": "Outage resolved", "body": "It is over."},
    '{"status": "sent", "to": "farah.ops@acme.example", "message_id": "<3123e1fc@mail>"}',
    call_id="call_1",
)


def test_an_invented_argument_came_from_nowhere_and_is_red_not_green():
    found = one(
        [
            finding(
                "ungrounded_tool_argument",
                "to=farah.ops@acme.example",
                "conversation",
                "tool results",
                call_id="call_1",
            )
        ],
        [GUESSED],
        'E-mail Farah with the subject "Outage resolved" that the EU outage is over.',
    )
    assert found.sentence == (
        "send_email (call_1) sent to = farah.ops@acme.example: in neither the user request nor "
        "an earlier tool result, it came from nowhere (the call's own result echoes it, which "
        "cannot ground it)"
    )
    assert found.marks == (
        CallMark(0, "arguments", "farah.ops@acme.example", "against"),
        CallMark(0, "result", "farah.ops@acme.example", "seen"),
    )
    assert "backed" not in tones(found)


def test_an_argument_an_earlier_result_holds_names_that_result_in_green():
    lookup = call(
        "find_user", {"name": "Farah"}, '{"email": "farah.ops@acme.example"}', call_id="c0"
    )
    found = one(
        [finding("ungrounded_tool_argument", "to=farah.ops@acme.example", call_id="call_1")],
        [lookup, GUESSED],
        "mail Farah",
    )
    assert "it stands in the result of find_user (c0)" in found.sentence
    assert CallMark(0, "result", "farah.ops@acme.example", "backed") in found.marks
    assert CallMark(1, "arguments", "farah.ops@acme.example", "against") in found.marks


def test_an_argument_the_user_gave_is_in_the_user_request():
    found = one(
        [finding("ungrounded_tool_argument", "to=farah.ops@acme.example", call_id="call_1")],
        [GUESSED],
        "write to farah.ops@acme.example",
    )
    assert "it stands in the user request" in found.sentence


def test_an_argument_with_quotes_is_marked_as_the_payload_shows_it():
    quoted = call("search", {"title": 'The "Ops" book'}, "[]", call_id="c1")
    found = one(
        [finding("ungrounded_tool_argument", 'title=The "Ops" book', call_id="c1")], [quoted]
    )
    assert found.marks == (CallMark(0, "arguments", 'The \\"Ops\\" book', "against"),)


def test_a_missing_required_argument_names_it_what_was_sent_and_the_tools_answer():
    put = call(
        "gh_put_file",
        {"path": "docs/caching.md", "message": "docs: docs/caching.md"},
        "Error: bad arguments: Repo.put_file() missing 1 required positional argument: 'content'",
        ok=False,
        call_id="call_1",
    )
    found = one(
        [
            finding(
                "missing_tool_arguments",
                "gh_put_file(content)",
                "gh_put_file schema",
                call_id="call_1",
                message="`gh_put_file` was called without required argument(s) content",
            )
        ],
        [put],
    )
    assert found.sentence == (
        "gh_put_file (call_1) was called without content, which its schema requires; it sent "
        "path, message; the tool answered Error: bad arguments: Repo.put_file() missing 1 "
        "required positional argument: 'content'"
    )
    assert "tool result" not in found.sentence
    assert found.badges == (CallBadge(0, "missing content", "against"),)
    assert [(m.where, m.tone) for m in found.marks] == [("result", "against")]


@pytest.mark.parametrize(
    ("message", "arguments", "expected"),
    [
        pytest.param(
            "the plan gave a value for branch but the `push` call dropped it",
            {"branch": ""},
            "the plan before push (c1) named a value for branch, but the call sent none",
            id="plan-drift",
        ),
        pytest.param(
            "`push` was called without required argument(s) branch (the arguments are not "
            "valid JSON)",
            {},
            "push (c1) was called without branch, which its schema requires; its arguments "
            "are not valid JSON",
            id="arguments-not-json",
        ),
        pytest.param(
            "`push` was called without required argument(s) branch",
            {},
            "push (c1) was called without branch, which its schema requires; it sent nothing",
            id="no-arguments",
        ),
    ],
)
def test_missing_arguments(message: str, arguments: dict[str, Any], expected: str):
    push = call("push", arguments, '{"ok": true}', call_id="c1")
    found = one(
        [finding("missing_tool_arguments", "push(branch)", call_id="c1", message=message)], [push]
    )
    assert found.sentence == expected
    assert found.badges == (CallBadge(0, "missing branch", "against"),)


# ---- citations: the fetches --------------------------------------------------------------

URL = "https://status.acme.example/incidents/2031"
SEARCH = call(
    "web_search",
    {"query": "incident 2031"},
    f'[{{"title": "Incident 2031", "url": "{URL}", "snippet": "elevated 503 errors…"}}]',
    call_id="call_1",
)


def test_a_source_seen_only_in_a_search_result_was_never_opened():
    found = one([finding("unfetched_citation", URL, "no fetch-type tool call")], [SEARCH])
    assert found.sentence == (
        f"the reply cites {URL}; no call of this session fetched a page — listed in the "
        "result of web_search (call_1): seen, never opened"
    )
    assert found.marks == (CallMark(0, "result", URL, "seen"),)
    assert "backed" not in tones(found)


def test_the_fetches_and_their_urls_are_listed():
    fetch = call(
        "fetch_url",
        {"url": "https://docs.acme.example/api/rate-limits"},
        "API rate limits\n\nEach API key may send 600 requests per minute",
        call_id="call_2",
    )
    found = one([finding("unfetched_citation", URL, "fetch_url")], [SEARCH, fetch])
    assert found.sentence == (
        f"the reply cites {URL}; the fetches: fetch_url (call_2) → "
        "https://docs.acme.example/api/rate-limits; none retrieved it — listed in the result "
        "of web_search (call_1): seen, never opened"
    )


def test_fetches_of_earlier_turns_are_named():
    found = one([finding("unfetched_citation", URL, "fetch_url")], [])
    assert found.sentence == (
        f"the reply cites {URL}; the fetches of earlier turns: fetch_url; none retrieved it"
    )


# ---- identifiers: the lookup -------------------------------------------------------------

TICKET = call(
    "create_ticket",
    {"title": "VPN drops"},
    '{"key": "OPS-2879", "title": "VPN drops", "status": "open"}',
    call_id="call_1",
)


@pytest.mark.parametrize(
    ("kind", "token", "user", "sentence", "marks"),
    [
        pytest.param(
            "fabricated_identifier",
            "OPS-2977",
            "open a ticket",
            "OPS-2977 ✗ in no tool result",
            (),
            id="fabricated-is-in-no-result",
        ),
        pytest.param(
            "fabricated_identifier",
            "OPS-2879",
            "",
            "OPS-2879 in the result of create_ticket (call_1)",
            (CallMark(0, "result", "OPS-2879", "backed"),),
            id="a-token-a-result-holds-is-green",
        ),
        pytest.param(
            "borrowed_identifier",
            "4c1c099724ca",
            "Is commit 4c1c099724ca on main?",
            "4c1c099724ca ✗ in no tool result (in the user request), yet the reply presents it "
            "as a tool's output",
            (),
            id="borrowed-is-in-the-request",
        ),
        pytest.param(
            "fabricated_identifier",
            "VPN drops",
            "",
            "VPN drops in the result of create_ticket (call_1) (in the arguments of "
            "create_ticket (call_1))",
            (
                CallMark(0, "result", "VPN drops", "backed"),
                CallMark(0, "arguments", "VPN drops", "seen"),
            ),
            id="arguments-are-seen-not-backed",
        ),
    ],
)
def test_identifier_lookup(
    kind: str, token: str, user: str, sentence: str, marks: tuple[CallMark, ...]
):
    found = one([finding(kind, token, "create_ticket")], [TICKET], user)
    assert found.sentence == sentence
    assert found.marks == marks


def test_an_identifier_in_a_turn_without_calls():
    found = one([finding("fabricated_identifier", "OPS-1")], [])
    assert found.sentence == "OPS-1 ✗ in no tool result: no tool was called"


def test_a_negated_identifier_the_result_shows_is_the_evidence_against_the_reply():
    read = call("read_file", {"path": "src/app/retry.py"}, "def retry_with_backoff(fn):\n  ...")
    found = one([finding("negated_existing_identifier", "Retry_With_Backoff", "read_file")], [read])
    assert found.sentence == (
        "Retry_With_Backoff is in the result of read_file, yet the reply says it does not exist"
    )
    assert found.marks == (CallMark(0, "result", "retry_with_backoff", "against"),)


# ---- claims, summaries, stalls -----------------------------------------------------------


@pytest.mark.parametrize(
    ("found", "sentence"),
    [
        pytest.param(
            finding("claim_without_tool", "e-mailed", "no successful tool call"),
            "the reply claims e-mailed; no tool call of this session succeeded",
            id="claim-nothing-succeeded",
        ),
        pytest.param(
            finding("claim_without_tool", "pushed", "read_file", "list_files"),
            "the reply claims pushed; the calls that succeeded (read_file, list_files) do not "
            "back it",
            id="claim-other-calls-succeeded",
        ),
        pytest.param(
            finding(
                "summary_without_action", "## Summary of changes", "no tool calls in this turn"
            ),
            "## Summary of changes — this turn ran no tool",
            id="summary",
        ),
        pytest.param(
            finding("stall", "Let me check, one moment.", "no tool calls in this turn"),
            "Let me check, one moment. — this turn ran no tool",
            id="stall",
        ),
    ],
)
def test_claims_summaries_and_stalls(found: dict[str, Any], sentence: str):
    got = one([found], [])
    assert got.sentence == sentence
    assert got.marks == ()


# ---- across kinds ------------------------------------------------------------------------


def test_every_kind_with_evidence_has_its_own_builder():
    assert set(_BUILDERS) == {k.value for k in Kind} - {Kind.VALIDATOR_ERROR.value}


def test_only_identifier_kinds_say_in_no_tool_result():
    calls = [REJECTED, GUESSED, SEARCH]
    findings = [
        finding("error_reported_as_success", "sent", "send_email", call_id="call_1"),
        finding("unregistered_tool_call", "shell_exec", *OFFERED),
        finding("ungrounded_tool_argument", "to=farah.ops@acme.example", call_id="call_1"),
        finding("missing_tool_arguments", "send_email(cc)", call_id="call_1"),
        finding("unfetched_citation", URL, "no fetch-type tool call"),
        finding("claim_without_tool", "pushed", "no successful tool call"),
    ]
    for found in finding_evidence(findings, calls):
        assert "no tool result" not in found.sentence, found.kind


def test_repeats_and_validator_errors_give_no_line_and_unknown_kinds_their_message():
    findings = [
        finding("fabricated_identifier", "X1"),
        finding("fabricated_identifier", "X1"),
        finding("stall", "X1"),
        {"kind": "validator_error", "message": "identifiers@1.0 raised KeyError", "token": ""},
        {"kind": "brand_new_kind", "message": "something odd", "token": "t"},
    ]
    got = finding_evidence(findings, [])
    assert [(e.kind, e.token) for e in got] == [
        ("fabricated_identifier", "X1"),
        ("stall", "X1"),
        ("brand_new_kind", "t"),
    ]
    assert got[-1].sentence == "something odd"


def test_long_tokens_are_cut_in_the_sentence():
    found = one([finding("stall", "x" * 400)], [])
    assert found.parts[0].text == "x" * 159 + "…"


def test_marks_and_badges_per_call():
    found = finding_evidence(
        [
            finding("ungrounded_tool_argument", "to=farah.ops@acme.example", call_id="call_1"),
            finding("unregistered_tool_call", "send_email", call_id="call_1"),
        ],
        [GUESSED],
    )
    assert marks_on(found, 0, "arguments") == [("farah.ops@acme.example", "against")]
    assert marks_on(found, 0, "result") == [("farah.ops@acme.example", "seen")]
    assert marks_on(found, 1, "result") == []
    assert badges_on(found, 0) == [("not offered", "against")]


def test_a_calls_evidence_takes_the_worst_severity_of_the_findings_marking_it() -> None:
    mark = CallMark(0, "result", "Error: recipient rejected", "against")
    flag = FindingEvidence("ungrounded_tool_argument", "flag", "x", (), (mark,))
    reject = FindingEvidence("error_reported_as_success", "reject", "sent", (), (mark,))
    elsewhere = FindingEvidence("stall", "reject", "", (), (CallMark(1, "result", "y", "seen"),))
    assert severity_on([flag, elsewhere], 0) == "flag"
    assert severity_on([flag, reject], 0) == "reject"
    assert severity_on([flag], 2) == "info"
