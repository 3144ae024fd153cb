"""Which hosts, ports and addresses a verifier may connect to: the SSRF guard.

A reply's URL is data an agent (or whoever steered it) chose, and the service runs inside
someone's network: a check of `http://169.254.169.254/...` must not read cloud
credentials, one of `http://10.0.0.5:6379/` must not poke a database. So, before any
connection and again for every redirect hop:

1. the scheme is http or https; the host is not in `deny_hosts` and, when `allow_hosts`
   is given, is in it (entries are exact hosts or `*.suffix`, which matches names below
   the suffix, not the suffix itself); cloud metadata names are refused by name;
2. the port is in `allowed_ports` (80 and 443 by default), any port for a host named in
   `allow_hosts`;
3. the name is resolved and EVERY address it resolves to is checked: loopback, private,
   link-local, multicast, reserved, unspecified, shared (CGNAT 100.64/10), IPv4-mapped
   IPv6, 6to4/NAT64 forms of such IPv4 addresses, and the cloud metadata addresses are
   refused, unless `allow_private` is set or the address lies in `allowed_networks`. The
   metadata addresses pass only through `allowed_networks`: `allow_private` alone does
   not open them.

The caller then connects to one of the checked addresses itself (`guarded_http`), never
to the name again, so a DNS answer that changes between check and connect (rebinding)
cannot move the connection.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .fetch_errors import FetchError, NameNotFound, Refused
from .settings_values import read_bool, read_int, read_str_list

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})
METADATA_NETWORKS: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("169.254.169.254/32"),  # AWS, GCP, Azure, OpenStack
    ipaddress.ip_network("169.254.170.2/32"),  # AWS ECS task credentials
    ipaddress.ip_network("fd00:ec2::254/128"),  # AWS over IPv6
    ipaddress.ip_network("100.100.100.200/32"),  # Alibaba Cloud
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

POLICY_KEYS = ("allow_hosts", "deny_hosts", "allow_private", "allowed_networks", "allowed_ports")

# getaddrinfo has no timeout of its own: it runs in a thread the caller stops waiting for.
# At most this many run at once, so a resolver that hangs cannot pile up threads.
_RESOLVER_SLOTS = threading.BoundedSemaphore(8)


def _normal_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def host_matches(host: str, patterns: tuple[str, ...]) -> bool:
    """Whether `host` is one of `patterns`: exact names, or `*.suffix` for names below it."""
    host = _normal_host(host)
    for pattern in patterns:
        pattern = _normal_host(pattern)
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def address_category(address: IPAddress) -> str | None:
    """What makes `address` not a public internet address, or None for a public one."""
    if any(address in network for network in METADATA_NETWORKS):
        return "cloud metadata"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "ipv4-mapped"
        embedded = address.sixtofour or (
            ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in _NAT64 else None
        )
        if embedded is not None and address_category(embedded) is not None:
            return "embedded private ipv4"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified:
        return "unspecified"
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return "shared (cgnat)"
    if address.is_reserved:
        return "reserved"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "not global"
    return None


@dataclass(frozen=True)
class AddressPolicy:
    """The guard's rules; the default refuses every non-public address."""

    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    allow_private: bool = False
    allowed_networks: tuple[IPNetwork, ...] = ()
    allowed_ports: tuple[int, ...] = (80, 443)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> AddressPolicy:
        """The policy from the `POLICY_KEYS` of a settings mapping (other keys are left to
        the caller); ValueError names a bad key."""
        networks: list[IPNetwork] = []
        for text in read_str_list(data, "allowed_networks"):
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                raise ValueError(f"allowed_networks: not a network: {text!r}") from None
        ports = data.get("allowed_ports", [80, 443])
        if not isinstance(ports, list | tuple) or not ports:
            raise ValueError(f"allowed_ports: expected a list of ports, got {ports!r}")
        checked_ports = tuple(
            read_int({"allowed_ports": port}, "allowed_ports", 0, minimum=1) for port in ports
        )
        if any(port > 65535 for port in checked_ports):
            raise ValueError(f"allowed_ports: a port is above 65535: {ports!r}")
        return cls(
            allow_hosts=read_str_list(data, "allow_hosts"),
            deny_hosts=read_str_list(data, "deny_hosts"),
            allow_private=read_bool(data, "allow_private", False),
            allowed_networks=tuple(networks),
            allowed_ports=checked_ports,
        )

    def check_target(self, scheme: str, host: str, port: int) -> None:
        """Raise `Refused` unless scheme, host name and port may be asked at all."""
        if scheme not in ("http", "https"):
            raise Refused("unsupported scheme", scheme)
        if host_matches(host, self.deny_hosts):
            raise Refused("denied host", host)
        explicitly_allowed = host_matches(host, self.allow_hosts)
        if self.allow_hosts and not explicitly_allowed:
            raise Refused("host not allowed", host)
        if _normal_host(host) in METADATA_HOSTS and not explicitly_allowed:
            raise Refused("private address", f"{host}: cloud metadata")
        if port not in self.allowed_ports and not explicitly_allowed:
            raise Refused("port not allowed", str(port))

    def check_address(self, address: IPAddress) -> None:
        """Raise `Refused` unless a connection to `address` is allowed."""
        if any(address in network for network in self.allowed_networks):
            return
        category = address_category(address)
        if category is None:
            return
        if self.allow_private and category != "cloud metadata":
            return
        raise Refused("private address", f"{address}: {category}")


def resolve_checked(host: str, port: int, policy: AddressPolicy, timeout: float) -> list[str]:
    """The addresses `host` resolves to, every one allowed by `policy`, in resolver order.

    Raises `NameNotFound` when the name does not exist, `Refused` when any address is
    refused (one bad address refuses the name: a resolver may hand out either), and a
    retryable `FetchError` when the resolver fails or takes longer than `timeout`.
    """
    literal = _literal_address(host)
    if literal is not None:
        policy.check_address(literal)
        return [str(literal)]
    infos = _getaddrinfo_within(host, port, timeout)
    addresses: list[str] = []
    for info in infos:
        text = str(info[4][0])
        address = ipaddress.ip_address(text.split("%", 1)[0])
        policy.check_address(address)
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise FetchError("unreachable: no address", retryable=True, detail=host)
    return addresses


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


_AddrInfo = list[tuple[Any, Any, int, str, tuple[Any, ...]]]


def _getaddrinfo_within(host: str, port: int, timeout: float) -> _AddrInfo:
    if not _RESOLVER_SLOTS.acquire(timeout=max(timeout, 0.0)):
        raise FetchError("timeout", retryable=True, detail="name resolution")
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except BaseException as error:
            outcome["error"] = error
        finally:
            _RESOLVER_SLOTS.release()

    worker = threading.Thread(target=run, name="factledger-resolve", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise FetchError("timeout", retryable=True, detail="name resolution")
    error = outcome.get("error")
    if isinstance(error, socket.gaierror):
        if error.errno == socket.EAI_NONAME:
            raise NameNotFound(host)
        temporary = error.errno == socket.EAI_AGAIN
        raise FetchError("unreachable: name resolution", retryable=temporary, detail=host)
    if isinstance(error, UnicodeError):
        raise FetchError("unsafe name", retryable=False, detail="host")
    if error is not None:
        raise FetchError("unreachable: name resolution", retryable=True, detail=host)
    infos: _AddrInfo = outcome["infos"]
    return infos
