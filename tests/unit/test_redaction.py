"""Redaction rules, offsets, stored copies of spans and judged turns, configuration."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest

from factledger.collector.redaction import OPTIONAL_RULES, SECRET_RULES, Redactor
from factledger.collector.rows import span_row
from factledger.processors.errors import ConfigError
from factledger.processors.kinds import Kind, Outcome
from factledger.processors.model import Finding, TextRange, ToolCall, Turn, Verdict
from factledger.processors.spans import SpanEvent, SpanRecord

DEFAULT = Redactor.default()
PERSONAL = Redactor([*SECRET_RULES, *OPTIONAL_RULES.values()])


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("key sk-proj-abcDEF1234567890abcdef1234 ok", "key [REDACTED:openai_key] ok"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz01", "[REDACTED:anthropic_key]"),
        (
            "Authorization: Bearer abc.def_ghi-jkl~mno123",
            "Authorization: Bearer [REDACTED:bearer_token]",
        ),
        (
            "postgres://admin:hunter2secret@db:5432/app",
            "postgres://admin:[REDACTED:url_password]@db:5432/app",
        ),
        ("redis://:s3cr3tpass@cache:6379", "redis://:[REDACTED:url_password]@cache:6379"),
        ('{"password": "correct horse"}', '{"password": "[REDACTED:assigned_secret]"}'),
        ('{\\"api_key\\": \\"abcd1234\\"}', '{\\"api_key\\": \\"[REDACTED:assigned_secret]\\"}'),
        ("PASSWORD=hunter22x;", "PASSWORD=[REDACTED:assigned_secret];"),
        ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws_access_key]"),
        ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED:github_token]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED:github_token]"),
        ("glpat-abcdefghij0123456789", "[REDACTED:gitlab_token]"),
        ("xoxb-1234567890-abcdefghij", "[REDACTED:slack_token]"),
        ("https://hooks.slack.com/services/T000/B000/XXXX", "[REDACTED:slack_webhook]"),
        ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED:google_api_key]"),
        ("sk_live_1234567890abcdefABCD", "[REDACTED:stripe_key]"),
        ("hf_abcdefghijklmnopqrstuvwxyz0123456", "[REDACTED:huggingface_token]"),
        ("eyJhbGciOiJI.eyJzdWIiOiIx.dozjgNryP4J3", "[REDACTED:jwt]"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- tail",
            "[REDACTED:private_key] tail",
        ),
        ("-----BEGIN PRIVATE KEY-----\nMIIEow cut off", "[REDACTED:private_key]"),
    ],
    ids=[
        "openai-key",
        "anthropic-key",
        "bearer-token",
        "url-password",
        "url-password-without-user",
        "quoted-password-with-spaces",
        "escaped-json-api-key",
        "assignment-any-case",
        "aws-access-key",
        "github-token",
        "github-fine-grained-token",
        "gitlab-token",
        "slack-token",
        "slack-webhook",
        "google-api-key",
        "stripe-key",
        "huggingface-token",
        "jwt",
        "private-key-block",
        "truncated-private-key",
    ],
)
def test_secrets_are_replaced(text: str, stored: str) -> None:
    assert DEFAULT.text(text) == stored


@pytest.mark.parametrize(
    "text",
    [
        "Order #W0001234 has shipped, refund RF-2024-0042 issued.",
        "commit 9d22a7c4e1f0b2a3c4d5e6f708192a3b4c5d6e7f",
        "see https://example.com:8080/a@b and task-sk-abcdefghijklmnopqrstuvwxyz",
        "the token count was 1200; pass the salt; keyboard",
        "ana@example.com, +49 30 1234 5678",
    ],
    ids=["order-ids", "sha", "urls-without-passwords", "secret-words-without-values", "pii-off"],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert DEFAULT.text(text) == text


def test_personal_data_when_switched_on() -> None:
    text = "mail ana@example.co.uk or call +49 30 1234567, (415) 555-0100; order W1234567"
    assert PERSONAL.text(text) == (
        "mail [REDACTED:email] or call [REDACTED:phone], [REDACTED:phone]; order W1234567"
    )


def test_attribute_values_by_key_and_shape() -> None:
    assert DEFAULT.value("Basic abc", "http.request.header.authorization") == (
        "[REDACTED:secret_attribute]"
    )
    nested = {"db": {"password": "x"}, "urls": ["postgres://u:pw12345@h/db"]}
    assert DEFAULT.value(nested) == {
        "db": {"password": "[REDACTED:secret_attribute]"},
        "urls": ["postgres://u:[REDACTED:url_password]@h/db"],
    }
    assert DEFAULT.value(12) == 12 and DEFAULT.value(b"sk-") == b"sk-"


def test_a_stored_span_is_redacted_everywhere_and_keeps_its_identity() -> None:
    key = "sk-proj-abcDEF1234567890abcdef1234"
    span = SpanRecord(
        trace_id="a" * 32,
        span_id="b" * 16,
        name="chat",
        status_message=f"401 for {key}",
        attributes={"gen_ai.input.messages": f'[{{"content": "{key}"}}]', "n": 3},
        events=(SpanEvent("log", 5, {"message": key}),),
        resource_attributes={"deployment.secret": "abc"},
        tenant="acme",
    )
    stored = DEFAULT.span(span)
    assert key not in repr(stored)
    assert (stored.trace_id, stored.span_id, stored.tenant, stored.attributes["n"]) == (
        span.trace_id,
        span.span_id,
        "acme",
        3,
    )


def test_judged_turn_moves_offsets_and_keeps_the_judged_outcome() -> None:
    key = "ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    reply = f"Token {key} stored. Ticket OPS-1 open."
    ticket = reply.index("OPS-1")
    turn = Turn(
        reply=reply,
        user_message="password: hunter22x",
        tool_calls=(
            ToolCall("login", arguments={"password": "hunter22x"}, result="Error: bad login"),
        ),
    )
    verdict = Verdict(
        Outcome.REJECT,
        (
            Finding(
                Kind.FABRICATED_IDENTIFIER,
                f"{key} is in no tool result",
                token=key,
                span=TextRange(6, 6 + len(key)),
            ),
            Finding(
                Kind.FABRICATED_IDENTIFIER,
                "OPS-1",
                token="OPS-1",
                span=TextRange(ticket, ticket + 5),
            ),
        ),
    )
    stored_turn, stored_verdict = DEFAULT.judged(turn, verdict)
    first, second = stored_verdict.findings
    assert first.token == "[REDACTED:github_token]" and key not in first.message
    assert first.span is not None and second.span is not None
    assert stored_turn.reply[first.span.start : first.span.end] == "[REDACTED:github_token]"
    assert stored_turn.reply[second.span.start : second.span.end] == "OPS-1"
    assert stored_turn.user_message == "password: [REDACTED:assigned_secret]"
    (call,) = stored_turn.tool_calls
    assert call.arguments == {"password": "[REDACTED:secret_attribute]"}
    assert call.error  # judged failed on the raw result, stays failed


_CLEAN_CALL = ToolCall(
    "get_order", arguments={"order_id": "W1", "nested": {"k": [1, "x"]}}, result='{"ok": 1}'
)
_CLEAN_FINDING = Finding(Kind.FABRICATED_IDENTIFIER, "W2 is in no result", token="W2")
_KEY = "ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


def test_a_judged_turn_without_secrets_is_stored_as_it_is() -> None:
    turn = Turn(reply="Order W1 shipped.", user_message="where is W1?", tool_calls=(_CLEAN_CALL,))
    verdict = Verdict(Outcome.REJECT, (_CLEAN_FINDING,))
    stored_turn, stored_verdict = DEFAULT.judged(turn, verdict)
    assert stored_turn is turn and stored_verdict is verdict


@pytest.mark.parametrize(
    ("turn", "verdict"),
    [
        (Turn(reply=f"k {_KEY}"), Verdict(Outcome.PASS)),
        (Turn(reply="ok", user_message=f"use {_KEY}"), Verdict(Outcome.PASS)),
        (Turn(reply="ok", tool_calls=(ToolCall("t", arguments_text=_KEY),)), Verdict(Outcome.PASS)),
        (Turn(reply="ok", tool_calls=(ToolCall("t", result=_KEY),)), Verdict(Outcome.PASS)),
        (
            Turn(reply="ok", tool_calls=(ToolCall("t", arguments={"a": [{"b": _KEY}]}),)),
            Verdict(Outcome.PASS),
        ),
        (
            Turn(reply="ok", tool_calls=(ToolCall("t", arguments={"x": {"api_key": "short"}}),)),
            Verdict(Outcome.PASS),
        ),
        (
            Turn(reply="ok"),
            Verdict(Outcome.FLAG, (Finding(Kind.FABRICATED_IDENTIFIER, "m", token=_KEY),)),
        ),
        (
            Turn(reply="ok"),
            Verdict(
                Outcome.FLAG,
                (Finding(Kind.FABRICATED_IDENTIFIER, "m", checked_against=("a", _KEY)),),
            ),
        ),
    ],
    ids=[
        "reply",
        "user-message",
        "arguments-text",
        "result",
        "nested-argument",
        "secret-argument-key",
        "finding-token",
        "finding-evidence",
    ],
)
def test_a_secret_in_any_stored_field_of_a_judged_turn_is_redacted(
    turn: Turn, verdict: Verdict
) -> None:
    stored_turn, stored_verdict = DEFAULT.judged(turn, verdict)
    stored = repr((stored_turn, stored_verdict))
    assert _KEY not in stored and "short" not in stored
    assert "[REDACTED:" in stored


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[redaction]\nemails = 1\n", "emails must be true or false"),
        ('[redaction]\ndisable = ["nope"]\n', "unknown rules"),
        ("[redaction]\ncolour = true\n", "unknown"),
        ('[[redaction.patterns]]\nname = "x"\npattern = "("\n', "pattern x"),
        ('[[redaction.patterns]]\nname = "x"\npattern = "a*"\n', "matches empty"),
        ('[[redaction.patterns]]\nname = "Bad Name"\npattern = "a"\n', "pattern name"),
        ('[[redaction.patterns]]\npattern = "(a)"\ngroup = 2\n', "group must be"),
        ("[redaction\n", "is not valid TOML"),
    ],
    ids=[
        "flag-not-boolean",
        "unknown-built-in",
        "unknown-key",
        "bad-regex",
        "empty-match",
        "bad-name",
        "bad-group",
        "broken-toml",
    ],
)
def test_bad_settings_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "redaction.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        Redactor.load(path)


def test_settings_switch_rules_off_and_add_patterns(tmp_path: Path) -> None:
    path = tmp_path / "redaction.toml"
    path.write_text(
        '[redaction]\ndisable = ["jwt"]\nkeys = ["x-internal-auth"]\n'
        '[[redaction.patterns]]\nname = "employee_id"\npattern = "EMP-(\\\\d{6})"\ngroup = 1\n',
        encoding="utf-8",
    )
    redactor = Redactor.load(path)
    assert redactor is not None
    assert redactor.text("EMP-123456 eyJhbGciOiJI.eyJzdWIiOiIx.dozjgNryP4J3") == (
        "EMP-[REDACTED:employee_id] eyJhbGciOiJI.eyJzdWIiOiIx.dozjgNryP4J3"
    )
    assert redactor.value("x", "net.x-internal-auth") == "[REDACTED:secret_attribute]"
    path.write_text("[redaction]\nenabled = false\n", encoding="utf-8")
    assert Redactor.load(path) is None


@pytest.mark.parametrize(
    "unit",
    [
        "sk-",
        "-----BEGIN PRIVATE KEY-----",
        "bearer ",
        "password=",
        "a://b:",
        "eyJa.",
        "x@y.",
        "\\nsk-",
        "Cookie: a=",
        "DB_PASSWORD=",
        "secret_access_key=",
        "AccountKey=",
        "A_TOKEN=",
    ],
    ids=[
        "key-prefixes",
        "key-headers",
        "bearer",
        "assignments",
        "urls",
        "jwt-heads",
        "at-signs",
        "escaped-key-prefixes",
        "cookies",
        "env-assignments",
        "aws-secret-assignments",
        "azure-keys",
        "env-tokens",
    ],
)
def test_a_megabyte_of_near_misses_stays_fast(unit: str) -> None:
    text = unit * (1_000_000 // len(unit))
    started = time.perf_counter()
    PERSONAL.text(text)
    assert time.perf_counter() - started < 5.0


KEY = "sk-proj-abcDEF1234567890abcdef1234"


def _span(**fields: object) -> SpanRecord:
    base: dict[str, object] = {"trace_id": "a" * 32, "span_id": "b" * 16, "name": "chat"}
    return SpanRecord(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "span",
    [
        _span(attributes={"gen_ai.output.messages": f"key {KEY}"}),
        _span(attributes={"list": ["fine text here", f"and {KEY}"]}),
        _span(attributes={"map": {"inner": {"deeper": KEY}}}),
        _span(attributes={"map": {"password": "short"}}),
        _span(attributes={"http.request.header.cookie": "session=1"}),
        _span(events=(SpanEvent("log", 1, {"message": KEY}),)),
        _span(resource_attributes={"url": "postgres://u:pw123456@h/db"}),
        _span(status_message=f"denied for {KEY}"),
    ],
    ids=[
        "attribute",
        "inside-a-list",
        "inside-nested-maps",
        "nested-key-names-a-secret",
        "top-level-key-names-a-secret",
        "event",
        "resource",
        "status-message",
    ],
)
def test_the_one_pass_check_of_a_span_misses_no_secret(span: SpanRecord) -> None:
    stored = DEFAULT.span(span)
    assert stored is not span
    assert KEY not in repr(stored) and "pw123456" not in repr(stored)
    assert "short" not in repr(stored) and "session=1" not in repr(stored)


def test_a_clean_span_is_stored_as_it_is() -> None:
    span = _span(attributes={"gen_ai.input.messages": "Where is order #W0001234?", "n": 3})
    assert DEFAULT.span(span) is span


def test_custom_patterns_are_applied_string_by_string(tmp_path: Path) -> None:
    path = tmp_path / "redaction.toml"
    path.write_text('[[redaction.patterns]]\nname = "whole"\npattern = "^EMP-\\\\d+$"\n')
    redactor = Redactor.load(path)
    assert redactor is not None
    span = _span(attributes={"a": "first value", "employee": "EMP-123456"})
    assert redactor.span(span).attributes["employee"] == "[REDACTED:whole]"


_INSTRUCTIONS = "You are the order desk of Northwind. " * 20  # long: remembered when clean


def test_a_long_text_seen_clean_does_not_hide_a_secret_beside_it() -> None:
    redactor = Redactor.default()
    clean = _span(attributes={"gen_ai.system_instructions": _INSTRUCTIONS})
    assert redactor.span(clean) is clean
    dirty = _span(attributes={"gen_ai.system_instructions": _INSTRUCTIONS, "note": _KEY})
    stored = redactor.span(dirty)
    assert stored.attributes == {
        "gen_ai.system_instructions": _INSTRUCTIONS,
        "note": "[REDACTED:github_token]",
    }
    # A long text holding a secret is never remembered as clean.
    secret_text = _INSTRUCTIONS + _KEY
    for _ in range(2):
        assert _KEY not in repr(redactor.span(_span(attributes={"s": secret_text})))


def test_a_redactor_travels_by_pickle_and_still_redacts() -> None:
    redactor = Redactor.default()
    redactor.span(_span(attributes={"gen_ai.system_instructions": _INSTRUCTIONS}))
    copy = pickle.loads(pickle.dumps(redactor))
    assert copy.text(f"token {_KEY}") == "token [REDACTED:github_token]"
    clean = _span(attributes={"gen_ai.system_instructions": _INSTRUCTIONS})
    assert copy.span(clean) is clean


# Inside JSON-encoded strings a line break is the two characters `\n`: the secret's word
# follows a letter. Environment dumps put a prefix before the word (`DB_PASSWORD=`).
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        (r"user=ana\npassword=hunter22x\n", r"user=ana\npassword=[REDACTED:assigned_secret]\n"),
        (
            r"GET / HTTP/1.1\r\nAuthorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l\r\n",
            r"GET / HTTP/1.1\r\nAuthorization: Basic [REDACTED:basic_auth]\r\n",
        ),
        (
            r"\r\nAuthorization: Bearer abc.def_ghi-jkl~mno123",
            r"\r\nAuthorization: Bearer [REDACTED:bearer_token]",
        ),
        (r"\tsk-proj-abcDEF1234567890abcdef1234", r"\t[REDACTED:openai_key]"),
        (r"keys:\nAKIAIOSFODNN7EXAMPLE", r"keys:\n[REDACTED:aws_access_key]"),
        ("DB_PASSWORD=hunter22x", "DB_PASSWORD=[REDACTED:assigned_secret]"),
        ("PGPASSWORD=hunter22x", "PGPASSWORD=[REDACTED:assigned_secret]"),
        (
            f"AWS_SECRET_ACCESS_KEY={_AWS_SECRET}",
            "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]",
        ),
        (
            f'{{"SecretAccessKey": "{_AWS_SECRET}"}}',
            '{"SecretAccessKey": "[REDACTED:aws_secret_key]"}',
        ),
        (
            r"\r\nCookie: session=9f8e7d6c5b4a; theme=dark\r\n",
            r"\r\nCookie: [REDACTED:cookie]\r\n",
        ),
        (
            "Set-Cookie: sid=s%3Aabc123def456; Path=/; HttpOnly",
            "Set-Cookie: [REDACTED:cookie]",
        ),
        ('{"PRIVATE-TOKEN": "zx81Kq9TfPm2"}', '{"PRIVATE-TOKEN": "[REDACTED:private_token]"}'),
        (
            "Authorization: Token 9944b09199c62bcf9418ad846dd0e4bb",
            "Authorization: Token [REDACTED:authorization]",
        ),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:npm_token]"),
        (
            "AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6==;Endpoint",
            "AccountName=acme;AccountKey=[REDACTED:azure_storage_key];Endpoint",
        ),
    ],
    ids=[
        "password-after-json-newline",
        "basic-auth-after-json-crlf",
        "bearer-after-json-crlf",
        "key-after-json-tab",
        "aws-access-key-after-json-newline",
        "env-prefixed-password",
        "env-glued-password",
        "aws-secret-access-key-env",
        "aws-secret-access-key-json",
        "cookie-header",
        "set-cookie-header",
        "private-token-header",
        "authorization-token-scheme",
        "npm-token",
        "azure-account-key",
    ],
)
def test_secrets_after_escapes_and_prefixes_are_replaced(text: str, stored: str) -> None:
    assert DEFAULT.text(text) == stored


_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzaWQiOiI0MiJ9.c2lnbmF0dXJlLXBhcnQ"


@pytest.mark.parametrize(
    "span",
    [
        _span(name=f"GET /v1/me?access_token={KEY}"),
        _span(events=(SpanEvent(f"retry with {KEY}", 1, {}),)),
        _span(attributes={"raw.body": f"key {KEY}".encode()}),
        _span(attributes={"chunks": ["ok", f"key {KEY}".encode()]}),
    ],
    ids=["span-name", "event-name", "bytes-attribute", "bytes-inside-a-list"],
)
def test_names_and_bytes_of_a_stored_span_are_redacted(span: SpanRecord) -> None:
    stored = DEFAULT.span(span)
    row = repr(span_row(stored, 0))
    assert KEY not in row and KEY.encode().hex() not in row
    assert "[REDACTED:openai_key]" in row


def test_bytes_without_a_secret_keep_their_type() -> None:
    span = _span(attributes={"raw.body": b"\x00\x01 plain bytes here"})
    assert DEFAULT.span(span).attributes["raw.body"] == b"\x00\x01 plain bytes here"


def test_a_secret_conversation_id_becomes_one_pseudonym_in_spans_and_turns() -> None:
    other = "eyJhbGciOiJIUzI1NiJ9.eyJzaWQiOiI0MyJ9.c2lnbmF0dXJlLXBhcnQ"
    stored_span = DEFAULT.span(_span(attributes={"gen_ai.conversation.id": _JWT}))
    stored_turn, _ = DEFAULT.judged(Turn(reply="ok", conversation_id=_JWT), Verdict(Outcome.PASS))
    pseudonym = stored_turn.conversation_id
    assert _JWT not in pseudonym and pseudonym.startswith("[REDACTED:jwt:")
    assert stored_span.attributes["gen_ai.conversation.id"] == pseudonym
    assert DEFAULT.identifier(other) != pseudonym
    assert DEFAULT.identifier("conv-42") == "conv-42"
    clean, _ = DEFAULT.judged(Turn(reply="ok", conversation_id="conv-42"), Verdict(Outcome.PASS))
    assert clean.conversation_id == "conv-42"


def test_a_secret_in_the_agent_model_service_or_a_tool_name_is_redacted() -> None:
    turn = Turn(
        reply="ok",
        agent=f"agent {KEY}",
        model=f"gpt-4o {KEY}",
        service=f"shop {KEY}",
        tool_calls=(ToolCall(f"call {KEY}"),),
    )
    stored_turn, _ = DEFAULT.judged(turn, Verdict(Outcome.PASS))
    assert KEY not in repr(stored_turn)
    assert (stored_turn.model, stored_turn.service) == (
        "gpt-4o [REDACTED:openai_key]",
        "shop [REDACTED:openai_key]",
    )


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("GITHUB_TOKEN=ghs_short0123456789", "GITHUB_TOKEN=[REDACTED:assigned_secret]"),
        ("deploy token=Tok3nValue77", "deploy token=[REDACTED:assigned_secret]"),
        ('{"api_token": "short"}', '{"api_token": "[REDACTED:assigned_secret]"}'),
        ("VAULT_PASS=s.Abc123xyz", "VAULT_PASS=[REDACTED:env_secret]"),
        ("AWS_SECRET_ACCESS_KEY=notforty123", "AWS_SECRET_ACCESS_KEY=[REDACTED:assigned_secret]"),
    ],
    ids=[
        "env-token",
        "token-in-prose",
        "api-token-in-json",
        "env-pass",
        "aws-secret-of-any-length",
    ],
)
def test_env_dump_secrets_of_any_shape_are_replaced(text: str, stored: str) -> None:
    assert DEFAULT.text(text) == stored


@pytest.mark.parametrize(
    "key", ["http.request.header.private-token", "http.request.header.x-auth-token"]
)
def test_token_headers_are_secret_attributes(key: str) -> None:
    assert DEFAULT.value("abc123", key) == "[REDACTED:secret_attribute]"


def test_a_secret_argument_quoted_by_a_finding_or_the_reply_is_redacted() -> None:
    phrase = "Arg Pass Phrase 9"
    turn = Turn(
        reply=f"Logged in with {phrase}.",
        tool_calls=(ToolCall("login", arguments={"user": "ana", "password": phrase}),),
    )
    start = turn.reply.index(phrase)
    verdict = Verdict(
        Outcome.FLAG,
        (
            Finding(
                Kind.FABRICATED_IDENTIFIER,
                f"argument {phrase!r} is not grounded",
                token=phrase,
                span=TextRange(start, start + len(phrase)),
            ),
        ),
    )
    stored_turn, stored_verdict = DEFAULT.judged(turn, verdict)
    assert phrase not in repr((stored_turn, stored_verdict))
    (finding,) = stored_verdict.findings
    assert finding.span is not None
    assert stored_turn.reply[finding.span.start : finding.span.end] == (
        "[REDACTED:secret_attribute]"
    )
