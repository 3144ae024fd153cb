"""The one step the declarative build (pyproject.toml) cannot say: a wheel carries the hot
modules of factledger.processors compiled with mypyc, in factledger/_mypyc/ beside the
manifest of source hashes that factledger/compiled.py checks at import
(tools/mypyc_build.py builds them).

Without a C compiler, or when mypyc fails, the wheel is still built, pure Python, with a
warning: the compiled modules only make assembling turns faster, never change an answer.
Editable installs compile nothing (`make compiled` builds into the checkout). The wheel is
tagged for this interpreter and platform either way, as its compiled modules are.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import Distribution, setup  # type: ignore[import-untyped]  # no stubs here
from setuptools.command.build_py import build_py  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import mypyc_build  # tools/ is no package: found through the path just set


class CompiledDistribution(Distribution):  # type: ignore[misc]  # untyped base
    """Has extension modules, so the wheel is tagged for this interpreter and platform."""

    def has_ext_modules(self) -> bool:
        return True


class BuildWithCompiledModules(build_py):  # type: ignore[misc]  # untyped base
    """build_py, then the compiled modules into the build directory (not for editables)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        package_root = Path(self.build_lib).resolve()
        work_dir = Path(self.get_finalized_command("build").build_temp).resolve() / "mypyc"
        log = work_dir / mypyc_build.LOG_NAME
        try:
            with mypyc_build.output_to(log):
                manifest = mypyc_build.build_into(package_root, work_dir)
        except (Exception, SystemExit) as exc:
            shutil.rmtree(package_root / "factledger" / "_mypyc", ignore_errors=True)
            if log.is_file():
                tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
                print("\n".join(tail), file=sys.stderr)
            print(
                f"WARNING: the mypyc build failed ({type(exc).__name__}: {exc}); this wheel"
                " runs every module from its Python source, with the same answers"
                f" (the whole log: {log})",
                file=sys.stderr,
            )
            return
        print(f"compiled {len(manifest.compiled)} modules with mypyc into factledger/_mypyc")


setup(distclass=CompiledDistribution, cmdclass={"build_py": BuildWithCompiledModules})
