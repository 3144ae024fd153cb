"""When a build of compiled modules may be used: fresh for these sources and this interpreter,
complete, and not turned off; otherwise every module comes from its source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from factledger.compiled import (
    MANIFEST_NAME,
    PURE_PYTHON_ENV,
    SOURCES_ROOT,
    Manifest,
    _CompiledFinder,
    check,
    extension_suffix,
    source_hash,
)

SOURCE = "processors/assembly/joins.py"
MODULE = "factledger.processors.assembly.joins"
BINARY = f"factledger/processors/joins{extension_suffix()}"
RUNTIME = "factledger.processors.compiled__mypyc"
RUNTIME_BINARY = f"factledger/processors/compiled__mypyc{extension_suffix()}"


def _manifest(**changes: object) -> Manifest:
    fields: dict[str, object] = {
        "extension_suffix": extension_suffix(),
        "modules": {MODULE: BINARY, RUNTIME: RUNTIME_BINARY},
        "sources": {SOURCE: source_hash(SOURCES_ROOT / SOURCE)},
        "compiled": [MODULE],
    }
    fields.update(changes)
    return Manifest(**fields)  # type: ignore[arg-type]


def _build(tmp_path: Path, manifest: Manifest | str | None, binaries: tuple[str, ...]) -> Path:
    for binary in binaries:
        (tmp_path / binary).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / binary).write_bytes(b"")  # never loaded by check()
    if manifest is not None:
        text = manifest if isinstance(manifest, str) else manifest.to_json()
        (tmp_path / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return tmp_path


BOTH = (BINARY, RUNTIME_BINARY)

CASES: list[tuple[str, Callable[[], Manifest | str | None], tuple[str, ...], str]] = [
    ("fresh", _manifest, BOTH, "fresh"),
    ("not-built", lambda: None, (), "not built"),
    ("malformed-manifest", lambda: "{not json", BOTH, "manifest of another format"),
    ("other-format", lambda: '{"format": 99}', BOTH, "manifest of another format"),
    (
        "other-interpreter",
        lambda: _manifest(extension_suffix=".cpython-313-x86_64-linux-gnu.so"),
        BOTH,
        "built for .cpython-313-x86_64-linux-gnu.so",
    ),
    (
        "source-edited-since",
        lambda: _manifest(sources={SOURCE: "0" * 64}),
        BOTH,
        f"stale: {SOURCE} changed since the build",
    ),
    (
        "source-gone",
        lambda: _manifest(sources={"processors/gone.py": "0" * 64}),
        BOTH,
        "stale: processors/gone.py changed since the build",
    ),
    ("runtime-library-missing", _manifest, (BINARY,), f"incomplete build: {RUNTIME}"),
]


@pytest.mark.parametrize(
    ("manifest", "binaries", "reason"),
    [pytest.param(make, binaries, reason, id=name) for name, make, binaries, reason in CASES],
)
def test_a_build_is_used_only_when_fresh_and_complete(
    tmp_path: Path,
    manifest: Callable[[], Manifest | str | None],
    binaries: tuple[str, ...],
    reason: str,
) -> None:
    status = check(_build(tmp_path, manifest(), binaries), environ={})
    assert status.reason.startswith(reason)
    assert status.active is (reason == "fresh")
    assert list(status.modules) == ([MODULE] if status.active else [])


@pytest.mark.parametrize(
    ("value", "active"), [("1", False), ("yes", False), ("0", True), ("", True)]
)
def test_the_environment_turns_a_fresh_build_off(tmp_path: Path, value: str, active: bool) -> None:
    build = _build(tmp_path, _manifest(), BOTH)
    status = check(build, environ={PURE_PYTHON_ENV: value})
    assert status.active is active
    if not active:
        assert status.reason == f"{PURE_PYTHON_ENV} is set"


def test_the_manifest_reads_back_as_written() -> None:
    manifest = _manifest(built_with="mypy 2.4.1")
    assert Manifest.from_json(manifest.to_json()) == manifest


def test_the_finder_answers_only_for_the_build_s_modules(tmp_path: Path) -> None:
    finder = _CompiledFinder({MODULE: tmp_path / BINARY})
    spec = finder.find_spec(MODULE)
    assert spec is not None
    assert spec.origin == str(tmp_path / BINARY)
    assert spec.submodule_search_locations is None
    assert finder.find_spec("factledger.processors.model") is None
