"""The export targets by name, each built by its own module on demand.

A module is imported only when its target is configured and enabled: a target's client
library (mlflow, langfuse, ...) is an optional dependency, and an installation without it
runs every other target. Each module exposes `build(options) -> ExportTarget`, raising
ValueError that names the bad option's key only. A configured target whose module or
library cannot be imported is a start-up error in one line naming both.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from factledger.collector.export.base import ExportTarget
from factledger.processors.errors import ConfigError

if TYPE_CHECKING:
    from factledger.collector.export.settings import TargetSettings

TARGET_MODULES: Mapping[str, str] = {
    "otel": "factledger.collector.export.otel",
    "phoenix": "factledger.collector.export.phoenix",
    "mlflow": "factledger.collector.export.mlflow",
    "langfuse": "factledger.collector.export.langfuse",
    "datadog": "factledger.collector.export.datadog",
}

Build = Callable[[Mapping[str, object]], ExportTarget]


def builder(name: str, modules: Mapping[str, str] = TARGET_MODULES) -> Build:
    """The `build` of target `name` in `modules`; ConfigError when its module or a
    package it needs is not installed."""
    module_name = modules.get(name)
    if module_name is None:
        raise ConfigError(f"export.{name}: unknown target (one of {', '.join(modules)})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or module_name
        if missing == module_name:
            raise ConfigError(
                f"export.{name}: this installation has no {name} target ({module_name})"
            ) from None
        raise ConfigError(
            f"export.{name}: the target needs the Python package {missing!r}, which is not"
            " installed"
        ) from None
    return cast(Build, module.build)


def build_targets(configured: Sequence[TargetSettings]) -> list[ExportTarget]:
    """The enabled targets, built in settings order. ConfigError naming the target (and
    the key its `build` refused) for any that cannot be built."""
    targets = []
    for target in configured:
        if not target.enabled:
            continue
        build = builder(target.name)
        try:
            targets.append(build(target.options))
        except ValueError as exc:
            raise ConfigError(f"export.{target.name}: {exc}") from None
    return targets
