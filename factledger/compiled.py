"""Compiled builds of the hot pure-Python modules, used only while they match their sources.

`tools/mypyc_build.py` (run by `make test`, and by a wheel's build through setup.py)
compiles a fixed set of factledger.processors modules with mypyc into extension modules
under `factledger/_mypyc/` (git-ignored in a checkout, shipped in the wheel), with a
manifest: the extension suffix of the interpreter they were built for and the SHA-256 of
every source file of factledger.processors, the compiled ones and those they were
type-checked against. `install()` (run by factledger/__init__.py before anything else) puts a
finder at the front of `sys.meta_path` that loads those modules from their extension
modules, but only when

- `FACTLEDGER_PURE_PYTHON` is unset, empty or `0`,
- the manifest was written for this interpreter, and
- every listed source file still has its hash.

Otherwise nothing is installed and every module is imported from its `.py` file as usual.
The set is used whole or not at all: compiled modules call each other's functions
directly, so one of them imported from its source beside the others would run against
state that was never initialised. An edited source (or an edited module the compiled code
was type-checked against) thus turns the whole set back into pure Python until the next
build, never into a stale answer.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.machinery import ExtensionFileLoader, ModuleSpec
from pathlib import Path
from types import ModuleType

PURE_PYTHON_ENV = "FACTLEDGER_PURE_PYTHON"
"""Set to 1 to import every module from its source even when compiled builds are fresh."""

PACKAGE_DIR = Path(__file__).resolve().parent
BUILD_DIR = PACKAGE_DIR / "_mypyc"


def _sources_root() -> Path:
    """The directory holding the processors package: factledger/ itself once installed (one
    directory for every part), processors/src/factledger/ in a checkout."""
    checkout = PACKAGE_DIR.parent / "processors" / "src" / "factledger"
    return PACKAGE_DIR if (PACKAGE_DIR / "processors").is_dir() else checkout


SOURCES_ROOT = _sources_root()
"""What the manifest's source paths (`processors/assembly/joins.py`) are relative to."""
MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1


@dataclass(frozen=True)
class Manifest:
    """What one build produced.

    `extension_suffix` is the interpreter's (e.g. `.cpython-311-x86_64-linux-gnu.so`);
    `modules` maps each compiled module (and mypyc's shared runtime library) to its
    extension module, relative to the build directory; `sources` maps every source file
    the build depends on, relative to `SOURCES_ROOT`, to its SHA-256.
    """

    extension_suffix: str
    modules: Mapping[str, str]
    sources: Mapping[str, str]
    compiled: Sequence[str]
    """The modules compiled from source (`modules` less the runtime library)."""
    built_with: str = ""
    """The mypy version that compiled them (a new one rebuilds; not checked at import)."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": MANIFEST_FORMAT,
                "extension_suffix": self.extension_suffix,
                "modules": dict(self.modules),
                "sources": dict(self.sources),
                "compiled": list(self.compiled),
                "built_with": self.built_with,
            },
            indent=1,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest | None:
        """The manifest, or None when it is of another format or malformed."""
        try:
            data = json.loads(text)
            if data.get("format") != MANIFEST_FORMAT:
                return None
            return cls(
                extension_suffix=str(data["extension_suffix"]),
                modules={str(k): str(v) for k, v in data["modules"].items()},
                sources={str(k): str(v) for k, v in data["sources"].items()},
                compiled=[str(name) for name in data["compiled"]],
                built_with=str(data.get("built_with", "")),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def source_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extension_suffix() -> str:
    """The suffix this interpreter's own extension modules carry (ABI tag and platform)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


@dataclass(frozen=True)
class Status:
    """Whether a build may be used (`active`), and if not, why; `manifest` is the build's
    when it may."""

    active: bool
    reason: str
    manifest: Manifest | None = None

    @property
    def modules(self) -> Sequence[str]:
        """The compiled modules in use."""
        return self.manifest.compiled if self.manifest else ()


class _CompiledFinder:
    """Finds the modules of one fresh build in their extension modules (a meta path finder)."""

    def __init__(self, binaries: Mapping[str, Path]) -> None:
        self._binaries = dict(binaries)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        binary = self._binaries.get(fullname)
        if binary is None:
            return None
        loader = ExtensionFileLoader(fullname, str(binary))
        return ModuleSpec(fullname, loader, origin=str(binary))

    def invalidate_caches(self) -> None:
        """Nothing cached (part of the finder protocol)."""


_status = Status(active=False, reason="not installed")


def check(build_dir: Path = BUILD_DIR, environ: Mapping[str, str] = os.environ) -> Status:
    """Whether the build in `build_dir` may be used by this process, without installing it."""
    if environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return Status(False, f"{PURE_PYTHON_ENV} is set")
    try:
        text = (build_dir / MANIFEST_NAME).read_text(encoding="utf-8")
    except OSError:
        return Status(False, "not built")
    manifest = Manifest.from_json(text)
    if manifest is None:
        return Status(False, "manifest of another format")
    if manifest.extension_suffix != extension_suffix():
        return Status(False, f"built for {manifest.extension_suffix}, not {extension_suffix()}")
    for relative, digest in manifest.sources.items():
        try:
            fresh = source_hash(SOURCES_ROOT / relative) == digest
        except OSError:
            fresh = False
        if not fresh:
            return Status(False, f"stale: {relative} changed since the build")
    missing = [name for name, path in manifest.modules.items() if not (build_dir / path).is_file()]
    if missing:
        return Status(False, f"incomplete build: {', '.join(sorted(missing))}")
    return Status(True, "fresh", manifest)


def install(build_dir: Path = BUILD_DIR, environ: Mapping[str, str] = os.environ) -> Status:
    """Use the compiled modules in this process when `check` allows it; idempotent.

    Must run before factledger.processors is imported (a module imported from its source
    before the finder is in place stays so): factledger/__init__.py imports
    factledger._use_compiled first, which calls it."""
    global _status
    if _status.active:
        return _status
    status = check(build_dir, environ)
    if status.manifest is not None:
        binaries = {name: build_dir / path for name, path in status.manifest.modules.items()}
        sys.meta_path.insert(0, _CompiledFinder(binaries))
    _status = status
    return status


def compiled_status() -> Status:
    """What `install()` decided in this process."""
    return _status
