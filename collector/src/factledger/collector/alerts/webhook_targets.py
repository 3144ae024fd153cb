"""Where alert notices may go.

A webhook URL is the operator's own choice (the rules file), so public, private and
loopback targets are all allowed: a relay inside the network, Alertmanager, a receiver on
this machine. What is refused, always, is a cloud metadata service (169.254.169.254,
169.254.170.2, fd00:ec2::254, 100.100.100.200, metadata.google.internal and its
aliases, and the IPv4-mapped, 6to4 and NAT64 forms of those addresses): a POST there
from inside a cloud instance can reach credentials, and no notice belongs there. The
check runs when the rules file is loaded (the name or literal address) and before every
delivery (every address the name resolves to then), since a name may point anywhere
later.
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from collections.abc import Callable

from factledger.verifiers.address_guard import METADATA_HOSTS, METADATA_NETWORKS, IPAddress

Resolve = Callable[[str, int], list[str]]
"""(host, port) -> the addresses the name resolves to."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def system_resolve(host: str, port: int) -> list[str]:
    """The system resolver's addresses for `host`; none when it cannot resolve it (the
    delivery then fails as any unreachable webhook does)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]).split("%", 1)[0] for info in infos]


def is_metadata_address(address: IPAddress) -> bool:
    """Whether `address` is a cloud metadata service, in any IPv6 form of its IPv4."""
    if any(address in network for network in METADATA_NETWORKS):
        return True
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        return embedded is not None and is_metadata_address(embedded)
    return False


def named_refusal(url: str) -> str | None:
    """Why `url` names a metadata service by its host name or literal address, or None."""
    host = (urllib.parse.urlsplit(url).hostname or "").rstrip(".").lower()
    if host in METADATA_HOSTS:
        return f"{host}: cloud metadata"
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        return None
    return f"{literal}: cloud metadata" if is_metadata_address(literal) else None


def refusal(url: str, resolve: Resolve = system_resolve) -> str | None:
    """Why a notice must not be sent to `url` now, or None: its name, or any address
    it resolves to, is a metadata service."""
    named = named_refusal(url)
    if named is not None:
        return named
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    try:
        ipaddress.ip_address(host)
        return None  # a literal address was checked by name
    except ValueError:
        pass
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None  # httpx refuses such a URL itself
    for text in resolve(host, port):
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if is_metadata_address(address):
            return f"{host} resolves to {address}: cloud metadata"
    return None
