"""Which git repositories verification may ask, and how: the `[verification.git]` section.

    [verification.git]
    repositories = { "acme/site" = "/srv/site", "acme/api" = "https://github.com/acme/api" }
    defaults = { checkout = "acme/site" }     # a service or agent name -> a repository
    mirror_dir = "/var/cache/factledger/git"
    min_fetch_interval_seconds = 30

A location that is a URL (`https://`, `ssh://`, `file://`, `git@host:path`) is mirrored
bare into `mirror_dir` and fetched on demand; a local path (a working tree or a bare
repository) is asked in place. A repository given as a table, `{ location = "...", mirror
= true }`, mirrors a local path too (a bare remote on this machine that others push to).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

DEFAULT_MIN_FETCH_INTERVAL_SECONDS = 30.0

# scheme://... or scp-like user@host:path; a Windows drive letter (C:\) is a path.
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/:@\s]+@[^/:\s]+:)")


def is_url(location: str) -> bool:
    return bool(_URL.match(location))


def default_mirror_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "factledger" / "git-mirrors"


@dataclass(frozen=True)
class GitRepository:
    """One repository by the name replies and tool calls use (`acme/site`)."""

    name: str
    location: str
    mirror: bool
    """True: fetched into a bare mirror; False: the location is asked in place."""


@dataclass(frozen=True)
class GitSettings:
    repositories: tuple[GitRepository, ...] = ()
    defaults: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """A service or agent name -> the repository its turns concern by default."""
    mirror_dir: Path = field(default_factory=default_mirror_dir)
    min_fetch_interval_seconds: float = DEFAULT_MIN_FETCH_INTERVAL_SECONDS

    def repository(self, name: str) -> GitRepository | None:
        """The repository of that name, compared without case (GitHub's names are not)."""
        folded = name.casefold()
        return next((r for r in self.repositories if r.name.casefold() == folded), None)


_KEYS = frozenset({"repositories", "defaults", "mirror_dir", "min_fetch_interval_seconds"})


def from_mapping(data: Mapping[str, Any]) -> GitSettings:
    """Settings from plain data (a parsed TOML section); ValueError names the bad key."""
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ValueError(f"verification.git: unknown key {unknown[0]!r}")
    repositories = _repositories(data.get("repositories", {}))
    names = {r.name.casefold() for r in repositories}
    defaults = _string_table(data.get("defaults", {}), "defaults")
    for who, repo in defaults.items():
        if repo.casefold() not in names:
            raise ValueError(f"verification.git.defaults.{who}: no repository named {repo!r}")
    mirror_dir = data.get("mirror_dir")
    if mirror_dir is not None and (not isinstance(mirror_dir, str) or not mirror_dir):
        raise ValueError("verification.git.mirror_dir: expected a directory path")
    interval = data.get("min_fetch_interval_seconds", DEFAULT_MIN_FETCH_INTERVAL_SECONDS)
    if isinstance(interval, bool) or not isinstance(interval, int | float) or interval < 0:
        raise ValueError("verification.git.min_fetch_interval_seconds: expected seconds >= 0")
    return GitSettings(
        repositories=repositories,
        defaults=MappingProxyType(defaults),
        mirror_dir=Path(mirror_dir).expanduser() if mirror_dir else default_mirror_dir(),
        min_fetch_interval_seconds=float(interval),
    )


def _repositories(data: object) -> tuple[GitRepository, ...]:
    if not isinstance(data, Mapping):
        raise ValueError("verification.git.repositories: expected a table of name = location")
    repositories = []
    for name, value in data.items():
        key = f"verification.git.repositories.{name}"
        if not isinstance(name, str) or not name.strip() or name.startswith("-"):
            raise ValueError(f"{key}: not a repository name")
        location: object
        if isinstance(value, str):
            location, mirror = value, is_url(value)
        elif isinstance(value, Mapping) and set(value) <= {"location", "mirror"}:
            location = value.get("location")
            mirror = value.get("mirror", is_url(location) if isinstance(location, str) else False)
            if not isinstance(mirror, bool):
                raise ValueError(f"{key}.mirror: expected true or false")
        else:
            raise ValueError(f"{key}: expected a location or {{ location, mirror }}")
        if not isinstance(location, str) or not location or location.startswith("-"):
            raise ValueError(f"{key}: expected a path or URL")
        if "\n" in location or "\0" in location:
            raise ValueError(f"{key}: expected a path or URL")
        if not is_url(location):
            location = str(Path(location).expanduser())
        if not mirror and is_url(location):
            raise ValueError(f"{key}.mirror: a URL is always mirrored")
        repositories.append(GitRepository(name=name, location=location, mirror=mirror))
    return tuple(repositories)


def _string_table(data: object, name: str) -> dict[str, str]:
    if not isinstance(data, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ValueError(f"verification.git.{name}: expected a table of name = repository")
    return dict(data)
