"""Compile the hot pure-Python modules of factledger.processors with mypyc.

    python tools/mypyc_build.py             # build into factledger/_mypyc/
    python tools/mypyc_build.py --if-stale  # only when missing or stale (`make compiled`)
    python tools/mypyc_build.py --status    # whether a fresh build is there, and why not

The modules in `COMPILED` become extension modules under `factledger/_mypyc/`, beside a
manifest of the hashes of every source of factledger.processors taken before compiling.
`factledger.compiled` uses them only while those hashes hold, so an edit after the build
means pure Python, not a stale module. The build goes to a fresh directory that replaces
the old one once it is complete and a child process has imported every module from it. A
failed build removes the old one too (it no longer matches what was asked for) and exits
non-zero with the reason; every import then falls back to the sources. mypyc and a C
compiler are needed to build, neither to run the result.

A wheel's build (setup.py) calls `build_into` for the package as the wheel lays it out,
every part in one factledger/ directory, so the manifest is checked where it is installed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parent.parent


def _load_compiled() -> ModuleType:
    """factledger/compiled.py on its own: importing the factledger package would import
    factledger.processors, perhaps from a broken build that this one is to replace."""
    spec = importlib.util.spec_from_file_location(
        "factledger_compiled", REPO / "factledger" / "compiled.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from factledger import compiled
else:
    compiled = _load_compiled()

COMPILED = (
    # Normalizing each span's convention (~45 µs per span in pure Python): leaf modules of
    # small functions over dicts, lists and strings.
    "processors/normalize/base.py",
    "processors/normalize/values.py",
    "processors/normalize/messages.py",
    "processors/normalize/genai.py",
    "processors/normalize/openinference.py",
    "processors/normalize/traceloop.py",
    "processors/normalize/langfuse.py",
    "processors/normalize/vercel.py",
    "processors/normalize/dispatch.py",
    # Grouping spans into turns and building them (~45 µs per span).
    "processors/assembly/joins.py",
    "processors/assembly/turn_builder.py",
    "processors/assembly/assembler.py",
    "processors/assembly/transcript.py",
    # Judging a turn: the validators and the text, identifier and call-outcome readers
    # they share, the verification subjects and the evidence rows' readers. Regular
    # expressions do the scanning either way; compiled, the control flow around them
    # (loops over matches, calls, attribute reads) costs about 30% less: the judge worker
    # ran 13% fewer instructions per turn of the ingest benchmark (benchmarks.judge_cost).
    # A class here keeps no lazy_property (a native class has no instance dict); one that
    # crosses to the judge worker pickled with an argument to its __init__ has a
    # __reduce__ (`ClaimValidator`), and a frozen dataclass that crosses stays Python
    # (`guard_activity`). `runner` stays Python: a runner of one's own may subclass
    # `ValidationRunner`, which an interpreted class cannot do to a compiled one.
    "processors/limits.py",
    "processors/text.py",
    "processors/identifiers.py",
    "processors/code_regions.py",
    "processors/codeish.py",
    "processors/nudges.py",
    "processors/claims.py",
    "processors/evidence/outcomes.py",
    "processors/evidence/call_reach.py",
    "processors/evidence/failure_text.py",
    "processors/evidence/record_states.py",
    "processors/evidence/result_tokens.py",
    "processors/evidence/snapshots.py",
    "processors/evidence/fetches.py",
    "processors/evidence/answer_tools.py",
    "processors/evidence/prose_calls.py",
    "processors/verification/subjects.py",
    "processors/validators/identifiers.py",
    "processors/validators/claims.py",
    "processors/validators/citations.py",
    "processors/validators/tool_calls.py",
    "processors/validators/arguments.py",
    "processors/validators/confabulation.py",
    "processors/validators/mirror.py",
    "processors/validators/placeholders.py",
    "processors/validators/artifacts.py",
    "processors/validators/record_state.py",
    "processors/validators/quantities.py",
)
"""Relative to `compiled.SOURCES_ROOT` (processors/src/factledger/), as mypy names them."""

WORK_DIR = REPO / "build" / "mypyc"
"""Generated C, object files and the last build's log (git-ignored)."""
LOG_NAME = "build.log"

_IMPORT_CHECK = """
import importlib, sys
from factledger.compiled import BUILD_DIR, compiled_status
status = compiled_status()
if not status.active:
    sys.exit(f"the build is not used: {status.reason}")
for name in status.modules:
    module = importlib.import_module(name)
    if not (module.__file__ or "").startswith(str(BUILD_DIR)):
        sys.exit(f"{name} was imported from {module.__file__}, not from the build")
"""
"""Run in a child process against a finished build: every compiled module imports."""


def _child_env(import_root: Path) -> dict[str, str]:
    """For the import check: the build in use, and factledger from `import_root` (this
    checkout, or a wheel's build directory) even when the interpreter's editable install
    points at another one."""
    env = {key: value for key, value in os.environ.items() if key != compiled.PURE_PYTHON_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(import_root), env.get("PYTHONPATH", "")]))
    return env


def check_imports(import_root: Path = REPO) -> None:
    """Import every compiled module from the build of the factledger under `import_root`, in
    a child process; raises RuntimeError saying why when the build is not used."""
    checked = subprocess.run(
        [sys.executable, "-c", _IMPORT_CHECK],
        capture_output=True,
        text=True,
        check=False,
        env=_child_env(import_root),
        cwd=import_root,  # `-c` puts the working directory first on sys.path
    )
    if checked.returncode != 0:
        raise RuntimeError(f"the compiled modules do not import: {checked.stderr.strip()}")


def source_hashes() -> dict[str, str]:
    """Every source of factledger.processors: the compiled modules were type-checked
    against all of them, so an edit to any may change what they should do."""
    root = compiled.SOURCES_ROOT
    return {
        path.relative_to(root).as_posix(): compiled.source_hash(path)
        for path in sorted((root / "processors").rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _mypy_version() -> str:
    from importlib.metadata import version

    return f"mypy {version('mypy')}"


def up_to_date(modules: Sequence[str]) -> compiled.Status:
    """Whether the build there is fresh, of `modules` and by this mypy (then it stays)."""
    status = compiled.check(environ={})
    if not status.active or status.manifest is None:
        return status
    if list(status.manifest.compiled) != [_module_name(relative) for relative in modules]:
        return compiled.Status(False, "another set of modules")
    if status.manifest.built_with != _mypy_version():
        return compiled.Status(False, f"built with {status.manifest.built_with or 'another mypy'}")
    return status


def _module_name(relative: str) -> str:
    return "factledger." + relative.removesuffix(".py").replace("/", ".")


@contextmanager
def output_to(log: Path) -> Iterator[None]:
    """This process's and its children's (the C compiler's) output into `log`: a few
    hundred lines of compiler commands and mypyc's notes, read only when the build fails."""
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with log.open("wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def build(
    modules: Sequence[str] = COMPILED,
    work_dir: Path = WORK_DIR,
    out_dir: Path = compiled.BUILD_DIR,
    import_root: Path = REPO,
) -> compiled.Manifest:
    """Compile `modules` (paths as in `COMPILED`), install the result as `out_dir` and
    return its manifest, once every module imports from there as the factledger under
    `import_root` sees it. Raises (SystemExit from mypyc included) when the build fails."""
    from mypyc.build import mypycify  # imported here: only building needs mypy

    if any(relative.endswith("__init__.py") for relative in modules):
        raise ValueError("packages' __init__ modules are not compiled")
    work_dir, out_dir = work_dir.resolve(), out_dir.resolve()  # the build runs elsewhere
    sources = source_hashes()
    with contextlib.chdir(compiled.SOURCES_ROOT.parent):  # mypy names modules from there
        extensions = mypycify(
            [f"factledger/{relative}" for relative in modules],
            opt_level="3",
            group_name="factledger.processors.compiled",
            target_dir=str(work_dir / "c"),
        )
        manifest = _compile(extensions, modules, sources, work_dir, out_dir)
    check_imports(import_root)
    return manifest


def _compile(
    extensions: Sequence[Any],
    modules: Sequence[str],
    sources: dict[str, str],
    work_dir: Path,
    out_dir: Path,
) -> compiled.Manifest:
    """Build `extensions` (mypycify's) into a fresh directory with their manifest, which
    then replaces `out_dir` whole."""
    from setuptools import Distribution  # type: ignore[import-untyped]  # no stubs here

    fresh = Path(tempfile.mkdtemp(prefix="_mypyc.", dir=out_dir.parent))
    try:
        command = Distribution({"name": "factledger-compiled", "ext_modules": extensions})
        build_ext = command.get_command_obj("build_ext")
        build_ext.build_lib = str(fresh)
        build_ext.build_temp = str(work_dir / "objects")
        build_ext.parallel = os.cpu_count() or 1
        build_ext.ensure_finalized()
        build_ext.run()
        suffix = compiled.extension_suffix()
        binaries = {
            extension.name: extension.name.replace(".", "/") + suffix for extension in extensions
        }
        missing = [name for name, binary in binaries.items() if not (fresh / binary).is_file()]
        if missing:
            raise RuntimeError(f"the build made no extension module for {', '.join(missing)}")
        manifest = compiled.Manifest(
            extension_suffix=suffix,
            modules=binaries,
            sources=sources,
            compiled=[_module_name(relative) for relative in modules],
            built_with=_mypy_version(),
        )
        (fresh / compiled.MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
        shutil.rmtree(out_dir, ignore_errors=True)
        fresh.rename(out_dir)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return manifest


def _manifest_of(build_dir: Path) -> compiled.Manifest:
    manifest = compiled.Manifest.from_json(
        (build_dir / compiled.MANIFEST_NAME).read_text(encoding="utf-8")
    )
    if manifest is None:
        raise RuntimeError(f"no readable manifest in {build_dir}")
    return manifest


def build_into(package_root: Path, work_dir: Path) -> compiled.Manifest:
    """The compiled modules for a wheel: into `package_root`/factledger/_mypyc/, where
    `package_root` holds every part of factledger in one directory, as installed (the
    wheel's build directory), and checked by importing them from there.

    A fresh build of the checkout by this same mypy (`make compiled`) is what compiling
    again would make from the same sources, so it is copied instead of compiled twice."""
    out_dir = package_root / "factledger" / compiled.BUILD_DIR.name
    if not up_to_date(COMPILED).active:
        return build(COMPILED, work_dir, out_dir, import_root=package_root)
    shutil.rmtree(out_dir, ignore_errors=True)
    shutil.copytree(compiled.BUILD_DIR, out_dir)
    check_imports(package_root)
    return _manifest_of(out_dir)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--status", action="store_true", help="report, do not build")
    parser.add_argument("--if-stale", action="store_true", help="build only when needed")
    parser.add_argument(
        "--modules",
        nargs="+",
        default=COMPILED,
        metavar="PATH",
        help="compile these (e.g. processors/assembly/joins.py) instead of the usual set",
    )
    options = parser.parse_args(argv)
    if options.status:
        status = compiled.check()
        print(f"compiled modules: {'in use' if status.active else 'not in use'} ({status.reason})")
        return 0 if status.active else 1
    if options.if_stale:
        status = up_to_date(options.modules)
        if status.active:
            print(f"compiled modules: up to date ({len(status.modules)} modules)")
            return 0
        print(f"compiled modules: building ({status.reason})")
    started = time.monotonic()
    log = WORK_DIR / LOG_NAME
    try:
        with output_to(log):
            manifest = build(options.modules)
    except (Exception, SystemExit) as exc:
        shutil.rmtree(compiled.BUILD_DIR, ignore_errors=True)
        if log.is_file():
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
            print("\n".join(tail), file=sys.stderr)
        print(f"mypyc build failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(f"(the whole log: {log.relative_to(REPO)})", file=sys.stderr)
        return 1
    print(
        f"compiled {len(manifest.compiled)} modules with mypyc into"
        f" {compiled.BUILD_DIR.relative_to(REPO)} in {time.monotonic() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
