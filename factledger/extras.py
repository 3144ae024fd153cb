"""The optional parts of the install, and the commands that need them.

`pip install factledger` is the agent side: `check()` and the guard, the instrumentation
helpers (factledger.instrument), the OTel span processor, and the commands that need no
service of their own (`check`, `eval`, `replay`, `demo`: the last two only send OTLP). The
service and the dashboard bring heavy dependencies (chDB alone is hundreds of MB), so each
is an extra of its own (pyproject.toml):

| extra | brings | commands |
|---|---|---|
| service | FastAPI, uvicorn, grpcio, chDB, clickhouse-connect, RE2, httpx | serve, up, alerts |
| dashboard | Streamlit, pandas, Altair, httpx | dashboard (and the dashboard of up) |
| all | both | |

(`reviews` needs the service extra too.)

A command that needs an extra calls `require` before it starts anything: a missing module
of the extra is one line naming the pip command (exit status 2), not an ImportError from
deep inside the service.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

from factledger.processors.errors import FactLedgerError

EXTRA_MODULES: Mapping[str, Mapping[str, str]] = {
    "service": {
        "fastapi": "fastapi",
        "fastapi-offline": "fastapi_offline",
        "uvicorn": "uvicorn",
        "clickhouse-connect": "clickhouse_connect",
        "chdb": "chdb",
        "google-re2": "re2",
        "httpx": "httpx",
        "grpcio": "grpc",
    },
    "dashboard": {
        "streamlit": "streamlit",
        "pandas": "pandas",
        "altair": "altair",
        "httpx": "httpx",
    },
}
"""Each extra's distributions, as pyproject.toml names them, and the module each installs."""


class MissingExtra(FactLedgerError):
    """A command needs an extra that is not installed; the message says how to install it."""


def missing_modules(extra: str) -> list[str]:
    """The modules of `extra` that this interpreter cannot import (found without importing)."""
    return [
        module
        for module in EXTRA_MODULES[extra].values()
        if importlib.util.find_spec(module) is None
    ]


def require(command: str, *extras: str) -> None:
    """Raise MissingExtra when a module of one of `extras` is missing, naming `command`
    (e.g. "serve") and the pip command that installs what it needs."""
    missing = [extra for extra in extras if missing_modules(extra)]
    if not missing:
        return
    noun = "extra" if len(missing) == 1 else "extras"
    raise MissingExtra(
        f"factledger {command} needs the {' and '.join(missing)} {noun}:"
        f" pip install 'factledger[{','.join(missing)}]'"
    )
