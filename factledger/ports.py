"""Listening ports checked before anything starts: a port already taken is one line that
names the option choosing another, instead of a bind error after the store has opened (the
service binds only once its start-up is done) or a dashboard that never answers."""

from __future__ import annotations

import errno
import socket

from factledger.collector.address import DEFAULT_GRPC_PORT as DEFAULT_GRPC_PORT
from factledger.collector.address import DEFAULT_HOST as DEFAULT_HOST
from factledger.collector.address import DEFAULT_PORT as DEFAULT_PORT
from factledger.processors.errors import FactLedgerError


class PortUnavailable(FactLedgerError):
    """The address cannot be listened on; the message names the option that changes it."""


def check_port_free(host: str, port: int, option: str) -> None:
    """Bind (host, port) and let go again; raise PortUnavailable naming `option` (e.g.
    "--port") when the port is taken or not ours to use. Port 0 (any) is always free.

    A server started right after this can still lose the port to another process; this
    check is for the common case, a second copy or another program already listening."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise PortUnavailable(f"cannot listen on {host}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        # As the servers themselves do: a socket of a stopped server lingering in
        # TIME_WAIT does not count as in use.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                reason = "is already in use (is FactLedger already running?)"
            elif exc.errno == errno.EACCES:
                reason = "needs privileges this user does not have"
            else:
                reason = f"cannot be listened on ({exc.strerror})"
            raise PortUnavailable(
                f"port {port} on {host} {reason}; choose another with {option} PORT"
            ) from exc
