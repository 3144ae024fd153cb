"""LinkVerifier against a real HTTP server on loopback: outcomes, redirects, the address
guard, time and size bounds, the cache and the per-host rate limit."""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
)
from factledger.service_process import free_port
from factledger.verifiers.address_guard import AddressPolicy, address_category, host_matches
from factledger.verifiers.answer_cache import AnswerCache
from factledger.verifiers.fetch_errors import Refused
from factledger.verifiers.guarded_http import request
from factledger.verifiers.links import LinkSettings, LinkVerifier
from factledger.verifiers.rate_limit import HostRateLimiter

from .loopback_site import Site, head_refused, redirect, slow, status
from .outcomes import CONFIRMED, REFUTED, UNVERIFIABLE

TURN = Turn(reply="see the link")
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    served = Site()
    served.routes.update(
        {
            "/ok": status(200),
            "/gone": status(410),
            "/denied": status(403),
            "/login": status(401),
            "/head-refused": head_refused(status(200)),
            "/r1": redirect("/r2", 301),
            "/r2": redirect("/ok", 307),
            "/r-missing": redirect("/missing"),
            "/loop-a": redirect("/loop-b"),
            "/loop-b": redirect("/loop-a"),
            "/to-metadata": redirect("http://169.254.169.254/latest/meta-data/"),
            "/to-private": redirect("http://10.0.0.1/admin"),
            "/to-ftp": redirect("ftp://127.0.0.1/file"),
            "/to-broken": redirect("http://[::1/x"),
            "/error": status(500),
            "/busy": status(429, {"Retry-After": "5"}),
            "/teapot": status(418),
            "/slow": slow(3.0, status(200)),
            "/huge": served.endless(),
        }
    )
    for n in range(1, 12):
        served.routes[f"/chain/{n}"] = redirect(f"/chain/{n - 1}")
    served.routes["/chain/0"] = status(200)
    yield served
    served.close()


def loopback_settings(**overrides: object) -> LinkSettings:
    """127.0.0.1 explicitly allowed (any port), the rate limit out of the way."""
    values: dict[str, object] = {
        "policy": AddressPolicy(allow_hosts=("127.0.0.1",), allowed_networks=LOOPBACK),
        "per_host_per_second": 1000.0,
    }
    values.update(overrides)
    return LinkSettings(**values)  # type: ignore[arg-type]


def check(
    url: str,
    settings: LinkSettings | None = None,
    timeout: float = 5.0,
    claimed_absent: bool = False,
) -> Verification:
    verifier = LinkVerifier(settings or loopback_settings())
    verification = verifier.verify(
        Subject(SubjectKind.URL, url, claimed_absent=claimed_absent), TURN, timeout
    )
    assert verification is not None
    return verification


@pytest.mark.parametrize(
    ("path", "outcome", "reason", "retryable"),
    [
        ("/ok", REFUTED, "", False),
        ("/missing", CONFIRMED, "", False),
        ("/gone", CONFIRMED, "", False),
        ("/denied", REFUTED, "", False),
        ("/login", REFUTED, "", False),
        ("/head-refused", REFUTED, "", False),
        ("/r1", REFUTED, "", False),
        ("/r-missing", CONFIRMED, "", False),
        ("/loop-a", UNVERIFIABLE, "redirect loop", False),
        ("/chain/11", UNVERIFIABLE, "too many redirects", False),
        ("/chain/5", REFUTED, "", False),
        ("/error", UNVERIFIABLE, "http 500", True),
        ("/busy", UNVERIFIABLE, "http 429", True),
        ("/teapot", UNVERIFIABLE, "http 418", False),
        ("/to-ftp", UNVERIFIABLE, "refused: unsupported scheme", False),
        ("/to-broken", UNVERIFIABLE, "unsafe name", False),
    ],
    ids=lambda value: str(value),
)
def test_status_outcomes(site: Site, path: str, outcome, reason: str, retryable: bool) -> None:
    verification = check(site.url(path))
    assert (verification.outcome, verification.reason, verification.retryable) == (
        outcome,
        reason,
        retryable,
    )
    assert verification.source == "link"
    assert verification.checked_at > 0 and verification.duration_ms > 0


def test_evidence_names_every_hop_and_the_final_status(site: Site) -> None:
    verification = check(site.url("/r1"))
    assert verification.query == " -> ".join(
        f"HEAD {site.url(path)}" for path in ("/r1", "/r2", "/ok")
    )
    assert verification.answer == f"200 OK {site.url('/ok')}"


def test_head_refused_is_asked_again_with_get(site: Site) -> None:
    verification = check(site.url("/head-refused"))
    assert (
        verification.query == f"HEAD {site.url('/head-refused')} -> GET {site.url('/head-refused')}"
    )
    assert [s.method for s in site.seen if s.path == "/head-refused"][-2:] == ["HEAD", "GET"]


def test_a_link_claimed_absent_that_exists_is_confirmed(site: Site) -> None:
    assert check(site.url("/ok"), claimed_absent=True).outcome is CONFIRMED
    assert check(site.url("/missing"), claimed_absent=True).outcome is REFUTED


def test_the_server_sees_the_product_user_agent(site: Site) -> None:
    check(site.url("/ok?ua"))
    agents = [s.headers.get("User-Agent", "") for s in site.seen if s.path == "/ok?ua"]
    assert agents and agents[0].startswith("FactLedger-LinkCheck/")
    assert "github.com/factledger/factledger" in agents[0]


def test_a_slow_server_is_unverifiable_retryable_within_the_timeout(site: Site) -> None:
    started = time.monotonic()
    verification = check(site.url("/slow"), timeout=1.0)
    elapsed = time.monotonic() - started
    assert (verification.outcome, verification.reason, verification.retryable) == (
        UNVERIFIABLE,
        "timeout",
        True,
    )
    assert elapsed < 1.5


def test_a_huge_body_is_cut_at_the_cap(site: Site) -> None:
    started = time.monotonic()
    response = request(
        "GET",
        urlsplit(site.url("/huge")),
        loopback_settings().policy,
        deadline=time.monotonic() + 5.0,
        headers={},
        max_body=64 * 1024,
    )
    assert (response.status, len(response.body), response.truncated) == (200, 64 * 1024, True)
    assert time.monotonic() - started < 3.0
    verification = check(site.url("/huge"))
    assert verification.outcome is REFUTED
    time.sleep(0.2)
    # The reader hung up: the server could write its socket buffers' worth, not a GiB.
    assert site.bytes_sent < 64 * 1024 * 1024


def test_a_refused_connection_is_retryable() -> None:
    port = free_port()  # nothing listens on it
    verification = check(f"http://127.0.0.1:{port}/")
    assert (verification.outcome, verification.retryable) == (UNVERIFIABLE, True)
    assert verification.reason == "unreachable: connection refused"


@pytest.mark.parametrize(
    ("path", "detail"),
    [("/to-metadata", "169.254.169.254: cloud metadata"), ("/to-private", "10.0.0.1: private")],
)
def test_a_redirect_to_a_private_address_is_refused(site: Site, path: str, detail: str) -> None:
    # Even with the target hosts named in the allow list: the address check refuses them.
    hosts = ("127.0.0.1", "169.254.169.254", "10.0.0.1")
    policy = AddressPolicy(allow_hosts=hosts, allowed_networks=LOOPBACK)
    verification = check(site.url(path), loopback_settings(policy=policy))
    assert (verification.outcome, verification.reason) == (UNVERIFIABLE, "refused: private address")
    assert verification.answer == detail
    assert not verification.retryable


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_loopback_is_refused_by_default_and_nothing_is_sent(site: Site, host: str) -> None:
    # The default rules, with the test server's port allowed: the address is what refuses.
    settings = LinkSettings(policy=AddressPolicy(allowed_ports=(site.port,)))
    before = len(site.seen)
    verification = check(site.url("/ok?default", host=host), settings)
    assert (verification.outcome, verification.reason) == (UNVERIFIABLE, "refused: private address")
    assert "loopback" in verification.answer
    assert len(site.seen) == before


def test_default_ports_only_unless_the_host_is_allowed(site: Site) -> None:
    settings = LinkSettings(policy=AddressPolicy(allowed_networks=LOOPBACK))
    assert check(site.url("/ok"), settings).reason == "refused: port not allowed"
    assert check(site.url("/ok"), loopback_settings()).outcome is REFUTED


def test_deny_and_allow_lists(site: Site) -> None:
    denied = AddressPolicy(
        allow_hosts=("127.0.0.1",), deny_hosts=("127.0.0.1",), allowed_networks=LOOPBACK
    )
    assert check(site.url("/ok"), loopback_settings(policy=denied)).reason == "refused: denied host"
    elsewhere = AddressPolicy(allow_hosts=("*.example.org",), allowed_networks=LOOPBACK)
    verification = check(site.url("/ok"), loopback_settings(policy=elsewhere))
    assert verification.reason == "refused: host not allowed"


@pytest.mark.parametrize(
    ("host", "patterns", "matches"),
    [
        ("docs.example.org", ("*.example.org",), True),
        ("a.b.example.org.", ("*.example.org",), True),
        ("example.org", ("*.example.org",), False),
        ("badexample.org", ("*.example.org",), False),
        ("Example.ORG", ("example.org",), True),
        ("example.org.evil.test", ("example.org",), False),
    ],
)
def test_host_patterns(host: str, patterns: tuple[str, ...], matches: bool) -> None:
    assert host_matches(host, patterns) is matches


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.1.1", "private"),
        ("172.16.0.1", "private"),
        ("fd12::1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "shared (cgnat)"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("::ffff:127.0.0.1", "ipv4-mapped"),
        ("::ffff:8.8.8.8", "ipv4-mapped"),
        ("2002:a00:1::", "embedded private ipv4"),
        ("64:ff9b::a00:1", "embedded private ipv4"),
    ],
)
def test_address_categories(address: str, category: str | None) -> None:
    assert address_category(ipaddress.ip_address(address)) == category


def test_allow_private_opens_private_networks_but_not_metadata() -> None:
    policy = AddressPolicy(allow_private=True)
    policy.check_address(ipaddress.ip_address("10.0.0.1"))
    with pytest.raises(Refused):
        policy.check_address(ipaddress.ip_address("169.254.169.254"))
    with pytest.raises(Refused):
        policy.check_target("http", "metadata.google.internal", 80)
    explicit = AddressPolicy(allowed_networks=(ipaddress.ip_network("169.254.169.254/32"),))
    explicit.check_address(ipaddress.ip_address("169.254.169.254"))


def test_a_name_that_does_not_resolve_is_confirmed() -> None:
    # RFC 2606: .invalid never resolves, and a resolver that answers for it is broken.
    with pytest.raises(socket.gaierror) as error:
        socket.getaddrinfo("no-such-host.invalid", 80)
    assert error.value.errno == socket.EAI_NONAME
    # `localhost` resolves without a network: the canary that the resolver answers.
    verification = check(
        "http://no-such-host.invalid/page", LinkSettings(resolver_canary="localhost")
    )
    assert (verification.outcome, verification.answer) == (
        CONFIRMED,
        "name not found: no-such-host.invalid",
    )
    assert verification.query == "HEAD http://no-such-host.invalid/page"


def test_without_a_working_resolver_a_name_that_does_not_resolve_is_unverifiable() -> None:
    settings = LinkSettings(resolver_canary="canary.invalid")
    verification = check("http://no-such-host.invalid/page", settings)
    assert (verification.outcome, verification.reason) == (UNVERIFIABLE, "resolver offline")
    assert verification.retryable
    assert "canary.invalid" in verification.answer


def test_the_same_url_is_asked_once_while_cached(site: Site) -> None:
    verifier = LinkVerifier(loopback_settings())
    url = site.url("/ok?cached")
    first = verifier.verify(Subject(SubjectKind.URL, url), TURN, 5.0)
    second = verifier.verify(Subject(SubjectKind.URL, url + "#fragment"), TURN, 5.0)
    assert first is not None and second is not None
    assert first.outcome is second.outcome is REFUTED
    assert site.paths().count("/ok?cached") == 1


def test_the_per_host_rate_limit_answers_rate_limited_past_the_timeout(site: Site) -> None:
    verifier = LinkVerifier(loopback_settings(per_host_per_second=1.0))
    first = verifier.verify(Subject(SubjectKind.URL, site.url("/ok?rate=1")), TURN, 0.3)
    second = verifier.verify(Subject(SubjectKind.URL, site.url("/ok?rate=2")), TURN, 0.3)
    assert first is not None and first.outcome is REFUTED
    assert second is not None
    assert (second.outcome, second.reason, second.retryable) == (UNVERIFIABLE, "rate limited", True)
    assert "/ok?rate=2" not in site.paths()


def test_the_rate_limiter_waits_for_a_slot_within_the_deadline() -> None:
    now = [100.0]
    waited: list[float] = []
    limiter = HostRateLimiter(2.0, clock=lambda: now[0], sleep=waited.append)
    assert limiter.acquire("a", deadline=101.0)
    assert limiter.acquire("a", deadline=101.0)
    assert limiter.acquire("b", deadline=101.0)
    assert waited == [0.5]
    assert not limiter.acquire("a", deadline=100.9)


def test_cache_entries_expire_at_their_own_ttl() -> None:
    now = [0.0]
    cache: AnswerCache[str] = AnswerCache(max_entries=2, clock=lambda: now[0])
    cache.put("settled", "a", 600.0)
    cache.put("unverifiable", "b", 30.0)
    now[0] = 31.0
    assert (cache.get("settled"), cache.get("unverifiable")) == ("a", None)
    cache.put("x", "c", 600.0)
    cache.put("y", "d", 600.0)
    assert cache.get("settled") is None  # the oldest went when a third came


def test_subjects_without_an_http_source_are_left_to_others() -> None:
    verifier = LinkVerifier()
    assert verifier.verify(Subject(SubjectKind.PATH, "http://x/y"), TURN, 1.0) is None
    assert verifier.verify(Subject(SubjectKind.URL, "ftp://example.org/f"), TURN, 1.0) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://user:secret@example.org/",
        "http://example.org:99999/",
        "http://exa mple.org/",
        "http://[::1/broken",
    ],
)
def test_unsafe_urls_are_not_asked(url: str) -> None:
    verification = check(url, LinkSettings())
    assert (verification.outcome, verification.reason) == (UNVERIFIABLE, "unsafe name")
    assert "secret" not in verification.query


def test_settings_from_a_mapping() -> None:
    settings = LinkSettings.from_mapping(
        {
            "allow_hosts": ["docs.example.org", "*.internal.test"],
            "deny_hosts": ["evil.test"],
            "allow_private": False,
            "allowed_networks": ["10.20.0.0/16"],
            "allowed_ports": [443, 8443],
            "timeout_seconds": 3,
            "max_redirects": 2,
            "max_body_bytes": 1024,
            "cache_ttl_seconds": 60,
            "per_host_per_second": 1.5,
            "user_agent": "Custom/1",
        }
    )
    assert settings.policy.allowed_networks == (ipaddress.ip_network("10.20.0.0/16"),)
    assert (settings.timeout_seconds, settings.max_redirects, settings.user_agent) == (
        3.0,
        2,
        "Custom/1",
    )
    assert LinkSettings.from_mapping({}) == LinkSettings()


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"timeout": 3}, "timeout"),
        ({"timeout_seconds": "3"}, "timeout_seconds"),
        ({"max_redirects": -1}, "max_redirects"),
        ({"allow_private": "yes"}, "allow_private"),
        ({"allowed_networks": ["not a net"]}, "allowed_networks"),
        ({"allow_hosts": "a.example"}, "allow_hosts"),
        ({"allowed_ports": [0]}, "allowed_ports"),
        ({"per_host_per_second": 0}, "per_host_per_second"),
    ],
)
def test_a_bad_setting_is_named(data: dict[str, object], key: str) -> None:
    with pytest.raises(ValueError, match=key):
        LinkSettings.from_mapping(data)


def fake_resolver(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[list[str]]]) -> None:
    """Names resolve to `answers[name]`, one list per lookup in turn (a lookup past the
    last fails); IP literals resolve as usual (socket.create_connection looks them up)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list:  # type: ignore[type-arg]
        if host not in answers:
            return real(host, port, *args, **kwargs)  # type: ignore[arg-type]
        if not answers[host]:
            raise socket.gaierror(socket.EAI_AGAIN, "looked up a second time")
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
            for address in answers[host].pop(0)
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_every_resolved_address_is_checked(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_resolver(monkeypatch, {"mixed.test": [["127.0.0.1", "10.0.0.1"]]})
    policy = AddressPolicy(allow_hosts=("mixed.test",), allowed_networks=LOOPBACK)
    before = len(site.seen)
    verification = check(site.url("/ok", host="mixed.test"), loopback_settings(policy=policy))
    assert (verification.reason, verification.answer) == (
        "refused: private address",
        "10.0.0.1: private",
    )
    assert len(site.seen) == before


def test_the_connection_goes_to_the_checked_address(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One lookup only: a second one (at connect time, where a rebinding answer would
    # come from) fails the check.
    fake_resolver(monkeypatch, {"pinned.test": [["127.0.0.1"]]})
    policy = AddressPolicy(allow_hosts=("pinned.test",), allowed_networks=LOOPBACK)
    verification = check(
        site.url("/ok?pinned", host="pinned.test"), loopback_settings(policy=policy)
    )
    assert verification.outcome is REFUTED
    hosts = [s.headers.get("Host") for s in site.seen if s.path == "/ok?pinned"]
    assert hosts == [f"pinned.test:{site.port}"]
