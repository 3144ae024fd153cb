"""Plugins: loading by import path, the adapter's bounds, and the JSON lookup plugin
against a real JSON service on loopback."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator
from typing import Any

import pytest

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
)
from factledger.verifiers.json_lookup import JsonLookupVerifier
from factledger.verifiers.plugins import PluginError, PluginVerifier, load_plugin

from .loopback_site import Site, json_body, redirect, slow, status
from .outcomes import CONFIRMED, REFUTED, UNVERIFIABLE

TURN = Turn(reply="OPS-12 is fixed")
TOKEN = "Bearer s3cret-token-Zq9"
JSON_LOOKUP = "factledger.verifiers.json_lookup:JsonLookupVerifier"


def ask(verifier: PluginVerifier, name: str) -> Verification | None:
    return verifier.verify(Subject(SubjectKind.RECORD, name), TURN, 2.0)


def test_a_function_plugin_by_import_path() -> None:
    verifier = load_plugin("tests.unit.plugin_examples:order_exists", name="orders")
    assert verifier.name == "plugin:orders"
    found = ask(verifier, "ORD-1")
    absent = ask(verifier, "ORD-9")
    assert found is not None and absent is not None
    assert (found.outcome, found.query, found.source) == (REFUTED, "orders ORD-1", "plugin:orders")
    assert absent.outcome is CONFIRMED
    assert found.checked_at > 0 and found.duration_ms >= 0
    assert ask(verifier, "OPS-1") is None
    claimed_absent = verifier.verify(
        Subject(SubjectKind.RECORD, "ORD-2", claimed_absent=True), TURN, 2.0
    )
    assert claimed_absent is not None and claimed_absent.outcome is CONFIRMED


def test_a_class_plugin_is_built_with_its_options() -> None:
    verifier = load_plugin("tests.unit.plugin_examples:Ledger", {"entries": ["L-1"]})
    assert verifier.name == "plugin:ledger"
    answer = ask(verifier, "L-2")
    assert answer is not None and answer.outcome is CONFIRMED


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("tests.unit.no_such_module:check", None, "cannot import 'tests.unit.no_such_module'"),
        ("tests.unit.plugin_examples:missing", None, "has no 'missing'"),
        ("tests.unit.plugin_examples:NOT_CALLABLE", None, "'NOT_CALLABLE' is not callable"),
        ("tests.unit.plugin_examples", None, "expected 'package.module:attribute'"),
        ("tests.unit.plugin_examples:order_exists", {"x": 1}, "takes no options"),
        ("tests.unit.plugin_examples:Ledger", {}, "bad options"),
    ],
)
def test_a_plugin_that_cannot_load_is_named(spec: str, options: Any, message: str) -> None:
    with pytest.raises(PluginError) as raised:
        load_plugin(spec, options)
    assert spec in str(raised.value)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("attribute", "answer"),
    [("breaks", "RuntimeError"), ("returns_text", "returned str")],
    ids=["raises", "returns-text"],
)
def test_a_plugin_that_fails_is_unverifiable_and_its_message_stays_out(
    attribute: str, answer: str
) -> None:
    verification = ask(load_plugin(f"tests.unit.plugin_examples:{attribute}"), "OPS-1")
    assert verification is not None
    assert (verification.outcome, verification.reason, verification.answer) == (
        UNVERIFIABLE,
        "plugin error",
        answer,
    )
    assert "abc123" not in repr(verification)


def test_a_plugin_past_its_timeout_is_unverifiable_retryable_in_time() -> None:
    verifier = load_plugin("tests.unit.plugin_examples:sleeps")
    started = time.monotonic()
    answer = verifier.verify(Subject(SubjectKind.RECORD, "OPS-1"), TURN, 0.5)
    assert time.monotonic() - started < 1.0
    assert answer is not None
    assert (answer.outcome, answer.reason, answer.retryable) == (UNVERIFIABLE, "timeout", True)


def test_calls_that_overran_hold_their_places() -> None:
    verifier = PluginVerifier("slow", lambda s, t, timeout: time.sleep(1.0), max_in_flight=1)
    first = verifier.verify(Subject(SubjectKind.RECORD, "A"), TURN, 0.05)
    second = verifier.verify(Subject(SubjectKind.RECORD, "B"), TURN, 0.05)
    assert first is not None and first.reason == "timeout"
    assert second is not None and (second.reason, second.retryable) == ("busy", True)


# The JSON lookup plugin ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tickets() -> Iterator[Site]:
    service = Site(
        {
            "/api/tickets/OPS-1": json_body(200, {"id": "OPS-1", "found": True}),
            "/api/tickets/OPS-2": json_body(200, {"id": "OPS-2", "found": False}),
            "/api/tickets/OPS-3": json_body(200, {"id": "OPS-3"}),
            "/api/tickets/OPS-4": status(200, body=b"<html>not json</html>"),
            "/api/tickets/OPS-5": status(500),
            "/api/tickets/OPS-6": redirect("/api/tickets/OPS-1"),
            "/api/tickets/OPS-7": slow(2.0, status(200)),
            "/api/tickets/OPS-8": status(401),
        }
    )
    yield service
    service.close()


def lookup(site: Site, **options: Any) -> PluginVerifier:
    values: dict[str, Any] = {
        "url": site.url("/api/tickets/{name}"),
        "pattern": r"^OPS-\d+$",
        "headers": {"Authorization": TOKEN},
        "allow_hosts": ["127.0.0.1"],
        "allowed_networks": ["127.0.0.0/8"],
    }
    values.update(options)
    return load_plugin(JSON_LOOKUP, values, name="tickets")


def verified(verifier: PluginVerifier, name: str, timeout: float = 2.0) -> Verification:
    answer = verifier.verify(Subject(SubjectKind.RECORD, name), TURN, timeout)
    assert answer is not None
    assert TOKEN not in repr(answer) and "s3cret" not in repr(answer)
    return answer


@pytest.mark.parametrize(
    ("name", "exists_field", "outcome", "reason", "retryable"),
    [
        ("OPS-1", "", REFUTED, "", False),
        ("OPS-404", "", CONFIRMED, "", False),
        ("OPS-1", "found", REFUTED, "", False),
        ("OPS-2", "found", CONFIRMED, "", False),
        ("OPS-2", "", REFUTED, "", False),
        ("OPS-3", "found", UNVERIFIABLE, "ambiguous", False),
        ("OPS-4", "found", UNVERIFIABLE, "ambiguous", False),
        ("OPS-5", "", UNVERIFIABLE, "http 500", True),
        ("OPS-6", "", UNVERIFIABLE, "http 302", False),
        ("OPS-8", "", UNVERIFIABLE, "http 401", False),
    ],
)
def test_json_lookup_outcomes(
    tickets: Site, name: str, exists_field: str, outcome, reason: str, retryable: bool
) -> None:
    answer = verified(lookup(tickets, exists_field=exists_field), name)
    assert (answer.outcome, answer.reason, answer.retryable) == (outcome, reason, retryable)
    assert answer.source == "plugin:tickets"
    assert answer.query == f"GET {tickets.url('/api/tickets/' + name)}"


def test_json_lookup_sends_the_header_and_never_shows_it(tickets: Site) -> None:
    verifier = lookup(tickets, exists_field="found")
    answer = verified(verifier, "OPS-1")
    assert answer.answer == "200 OK; found=true"
    sent = [s.headers for s in tickets.seen if s.path == "/api/tickets/OPS-1"]
    assert sent[-1]["Authorization"] == TOKEN
    assert TOKEN not in repr(verifier) and TOKEN not in repr(verifier._check)


def test_json_lookup_answers_only_its_kinds_and_names(tickets: Site) -> None:
    verifier = lookup(tickets)
    assert verifier.verify(Subject(SubjectKind.RECORD, "ORD-1"), TURN, 1.0) is None
    assert verifier.verify(Subject(SubjectKind.URL, "OPS-1"), TURN, 1.0) is None


def test_json_lookup_encodes_the_name_into_one_path_segment(tickets: Site) -> None:
    verifier = lookup(tickets, pattern="")
    answer = verified(verifier, "../../admin?x=1")
    assert answer.query.endswith("/api/tickets/..%2F..%2Fadmin%3Fx%3D1")
    assert tickets.paths()[-1] == "/api/tickets/..%2F..%2Fadmin%3Fx%3D1"


def test_json_lookup_on_loopback_needs_to_be_allowed(tickets: Site) -> None:
    before = len(tickets.seen)
    verifier = lookup(tickets, allowed_networks=[])
    answer = verified(verifier, "OPS-1")
    assert (answer.outcome, answer.reason) == (UNVERIFIABLE, "refused: private address")
    assert len(tickets.seen) == before


def test_json_lookup_times_out_retryable(tickets: Site) -> None:
    started = time.monotonic()
    answer = verified(lookup(tickets), "OPS-7", timeout=0.5)
    assert time.monotonic() - started < 1.0
    assert (answer.outcome, answer.reason, answer.retryable) == (UNVERIFIABLE, "timeout", True)


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"url": "http://tickets.test/api/tickets"}, "url"),
        ({"url": "file:///etc/{name}"}, "url"),
        ({"kinds": ["ticket"]}, "kinds"),
        ({"pattern": "("}, "pattern"),
        ({"headers": {"Authorization": 1}}, "headers"),
        ({"allowed_networks": ["nope"]}, "allowed_networks"),
        ({"retries": 3}, "retries"),
    ],
)
def test_json_lookup_names_a_bad_option(options: dict[str, Any], key: str) -> None:
    values = {"url": "http://tickets.test/api/tickets/{name}", **options}
    with pytest.raises(PluginError, match=key):
        load_plugin(JSON_LOOKUP, values)


def test_json_lookup_address_networks_are_parsed() -> None:
    verifier = load_plugin(
        JSON_LOOKUP,
        {"url": "http://tickets.test/t/{name}", "allowed_networks": ["10.1.0.0/16"]},
    )
    check = verifier._check
    assert isinstance(check, JsonLookupVerifier)
    assert check.policy.allowed_networks == (ipaddress.ip_network("10.1.0.0/16"),)
