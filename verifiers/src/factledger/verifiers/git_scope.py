"""Which repository, at which ref, a turn's names belong to: read from its tool calls.

A call names its repository by argument (`repo`, `repository`, `owner` + `repo`, a clone
or web URL, a working directory inside a configured checkout) and its ref (`branch`,
`ref`, `rev`, `sha`). A turn whose calls name none falls back to the repository
configured for its service or agent, then to the only repository configured. Every
repository the calls name is a scope: a name absent from one of them may be in another,
so only absence from all of them is absence.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from factledger.processors.model import ToolCall, Turn

from .git_names import repo_path, revision
from .git_settings import GitRepository, GitSettings

HEAD = "HEAD"
MAX_PREFIXES = 4

_REPO_KEYS = frozenset(
    {"repo", "repository", "repo_name", "repo_full_name", "full_name", "project"}
)
_URL_KEYS = frozenset(
    {"remote", "url", "remote_url", "clone_url", "git_url", "html_url", "repo_url"}
)
_OWNER_KEYS = frozenset({"owner", "org", "organization", "namespace"})
_NAME_KEYS = frozenset({"repo", "name", "repo_name"})
_REF_KEYS = frozenset({"branch", "ref", "rev", "revision", "sha", "tag"})
_DIR_KEYS = frozenset(
    {"path", "cwd", "workdir", "working_dir", "working_directory", "directory", "dir", "repo_path"}
)
# github.com/acme/site(.git)(/tree/main/...), git@gitlab.com:group/sub/name.git
_HOSTED = re.compile(
    r"^(?:[a-z+]+://)?(?:[^@/\s]+@)?(?:www\.)?(?:github\.com|gitlab\.com)[/:](?P<path>[^?#\s]+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GitScope:
    """A repository to ask, the ref to ask it at, and the sub-directories (relative to
    its root) the calls worked in, for paths a reply gives relative to one of them."""

    repository: GitRepository
    ref: str = HEAD
    prefixes: tuple[str, ...] = ()


def scopes(turn: Turn, settings: GitSettings) -> tuple[GitScope, ...]:
    """The repositories the turn concerns, the ones its calls name first; () for none."""
    named: dict[str, tuple[GitRepository, list[str], list[str]]] = {}
    loose_refs: list[str] = []
    loose_prefixes: list[str] = []
    for call in turn.executed_calls:
        repos, refs, prefixes = _read_call(call, settings)
        for repo, prefix in repos:
            _, repo_refs, repo_prefixes = named.setdefault(repo.name, (repo, [], []))
            repo_refs.extend(refs)
            repo_prefixes.extend([prefix] if prefix else [])
        if not repos:
            loose_refs.extend(refs)
            loose_prefixes.extend(prefixes)
    if not named:
        default = _default(turn, settings)
        if default is None:
            return ()
        named[default.name] = (default, [], [])
    return tuple(
        GitScope(
            repository=repo,
            ref=next(iter(refs + loose_refs), HEAD),
            prefixes=tuple(dict.fromkeys(prefixes + loose_prefixes))[:MAX_PREFIXES],
        )
        for repo, refs, prefixes in named.values()
    )


def _default(turn: Turn, settings: GitSettings) -> GitRepository | None:
    for who in (turn.service, turn.agent):
        if who and who in settings.defaults:
            return settings.repository(settings.defaults[who])
    return settings.repositories[0] if len(settings.repositories) == 1 else None


def _read_call(
    call: ToolCall, settings: GitSettings
) -> tuple[list[tuple[GitRepository, str]], list[str], list[str]]:
    """(repository, sub-directory) pairs, refs and relative sub-directories one call names."""
    repos: list[tuple[GitRepository, str]] = []
    refs: list[str] = []
    prefixes: list[str] = []
    for arguments in _argument_tables(call.arguments):
        values = {str(k).lower(): v for k, v in arguments.items() if isinstance(v, str)}
        owner = next((values[k] for k in _OWNER_KEYS if k in values), None)
        for key, value in values.items():
            repo: GitRepository | None = None
            if key in _REPO_KEYS or key in _URL_KEYS:
                repo = _by_name_or_url(value, settings)
            if repo is None and owner is not None and key in _NAME_KEYS:
                repo = settings.repository(f"{owner.strip()}/{value.strip()}")
            if repo is not None:
                repos.append((repo, ""))
            if key in _REF_KEYS and (ref := revision(value)) is not None:
                refs.append(ref)
            if key in _DIR_KEYS:
                inside = _inside_checkout(value, settings)
                if inside is not None:
                    repos.append(inside)
                elif (prefix := _relative_dir(value)) is not None:
                    prefixes.append(prefix)
    return repos, refs, prefixes


def _argument_tables(arguments: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The arguments, and the tables one level down (`{"input": {"repo": ...}}`)."""
    yield arguments
    for value in arguments.values():
        if isinstance(value, Mapping):
            yield value


def _strip_git(location: str) -> str:
    location = location.strip().rstrip("/")
    return location[:-4] if location.endswith(".git") else location


def _by_name_or_url(value: str, settings: GitSettings) -> GitRepository | None:
    if (repo := settings.repository(_strip_git(value))) is not None:
        return repo
    wanted = _strip_git(value).casefold()
    for repo in settings.repositories:
        if _strip_git(repo.location).casefold() == wanted:
            return repo
    hosted = _HOSTED.match(value.strip())
    if hosted is not None:
        parts = _strip_git(hosted.group("path")).split("/")
        # The whole path (a GitLab group/sub/name), then owner/name of a deeper web page.
        for length in (len(parts), 2):
            repo = settings.repository("/".join(parts[:length]))
            if repo is not None:
                return repo
    return None


def _inside_checkout(value: str, settings: GitSettings) -> tuple[GitRepository, str] | None:
    """A configured checkout an absolute path lies in, with the path relative to it."""
    if not value.startswith("/"):
        return None
    path = posixpath.normpath(value)
    for repo in settings.repositories:
        if repo.mirror:
            continue
        root = posixpath.normpath(repo.location)
        if path == root:
            return repo, ""
        if path.startswith(root.rstrip("/") + "/"):
            return repo, posixpath.relpath(path, root)
    return None


def _relative_dir(value: str) -> str | None:
    try:
        return repo_path(value).path
    except ValueError:
        return None
