"""The extractor's hottest modules compiled by Cython, from their own source.

A page's extraction is thousands of small steps in Python (a walk of every element,
the text of the rows that may hold a code, the repeated records of a listing...);
compiled by Cython, the same source runs them without the interpreter's dispatch, and
a first sight of a page costs about a tenth less (docs/extraction.md, "Compiled").
The source stays the one implementation, and a machine without a C compiler runs the
same modules as Python; the one part written twice is the page walk
(``visible/_walk.pyx``, over libxml2's nodes), held to its Python twin by tests.

* ``python -m crawler.compiled build`` (``scripts/bootstrap`` runs it)
  compiles :data:`MODULES` into :data:`BUILD_DIR` (ignored by git and by the images'
  build context) and writes its manifest: the SHA-256 of each module's source;
* :func:`use_compiled` (called by ``crawler.extraction`` before it imports anything
  else) makes each compiled module load in place of its source, **only while the
  source is the one it was compiled from**: a module edited since its build runs as
  Python until the next build, never as stale code;
* ``CRAWLER_COMPILED=0`` runs everything as Python (the equivalence test compares
  both on every saved page).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

#: The directory that holds the ``crawler`` package
ROOT = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(__file__).resolve().parent / "_compiled"
MANIFEST = "manifest.json"
#: ``0`` (or ``false``, ``no``): every module runs as Python
ENV = "CRAWLER_COMPILED"
#: The modules where a profile of the development sets' pages spends its time (each
#: above about 0.3% of it), compiled; the others gain too little to be worth a build.
#: Not here: modules that find files beside their own (``__file__``), and packages'
#: ``__init__``.
MODULES = (
    "crawler.extraction.ascii_case",
    "crawler.extraction.first_tags",
    "crawler.extraction.jsonld",
    "crawler.extraction.merge",
    "crawler.extraction.microdata",
    "crawler.extraction.nodes",
    "crawler.extraction.pageurl",
    "crawler.extraction.product",
    "crawler.extraction.structured",
    "crawler.extraction.tree",
    "crawler.extraction.weigh",
    "crawler.extraction.embedded.blocks",
    "crawler.extraction.normalize.availability",
    "crawler.extraction.normalize.text",
    "crawler.extraction.visible.availability",
    "crawler.extraction.visible.buy",
    "crawler.extraction.visible.classtests",
    "crawler.extraction.visible.code_labels",
    "crawler.extraction.visible.codes",
    "crawler.extraction.visible.details",
    "crawler.extraction.visible.dom",
    "crawler.extraction.visible.index",
    "crawler.extraction.visible.name",
    "crawler.extraction.visible.page",
    "crawler.extraction.visible.price",
    "crawler.extraction.visible.price_blocks",
    "crawler.extraction.visible.price_marks",
    "crawler.extraction.visible.price_text",
    "crawler.extraction.visible.records",
    "crawler.extraction.visible.stylesheet",
    "crawler.extraction.visible.url_code",
    # no Python source: the page walk over libxml2's nodes (visible/walk.py has its twin)
    "crawler.extraction.visible._walk",
)
#: Cython's reading of the source: Python 3, and the annotations left as Python's (a
#: ``count: int`` must stay a Python int, not become a C long)
DIRECTIVES = {"language_level": 3, "annotation_typing": False}


def source_of(module: str) -> Path:
    """A module's source: its ``.py``, or a ``.pyx`` where it is written for Cython."""
    path = ROOT.joinpath(*module.split("."))
    python = path.with_suffix(".py")
    return python if python.exists() else path.with_suffix(".pyx")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


@dataclass
class Status:
    """What a build in ``build_dir`` gives this interpreter."""

    #: module -> its compiled file, built from the source as it is now
    current: dict[str, Path] = field(default_factory=dict)
    #: modules compiled from a source that has changed since (they run as Python)
    stale: list[str] = field(default_factory=list)
    #: modules of :data:`MODULES` without a build (none at all, another Python's...)
    missing: list[str] = field(default_factory=list)
    #: ``CRAWLER_COMPILED=0``: nothing compiled is used
    disabled: bool = False

    def line(self) -> str:
        """One line for a log or a benchmark's report."""
        if self.disabled:
            return f"extraction: pure Python ({ENV}=0)"
        if not self.current:
            return "extraction: pure Python (no compiled module: python -m crawler.compiled build)"
        line = f"extraction: {len(self.current)} of {len(MODULES)} hot modules compiled"
        if self.stale:
            line += f"; {len(self.stale)} changed since the build run as Python"
        return line


def status(build_dir: Path = BUILD_DIR) -> Status:
    """Which of :data:`MODULES` have a compiled file made from their current source."""
    found = Status()
    try:
        manifest = json.loads((build_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    built = manifest.get("modules", {}) if manifest.get("suffix") == _suffix() else {}
    for module in MODULES:
        compiled = build_dir.joinpath(*module.split(".")).with_name(
            module.rsplit(".", 1)[-1] + _suffix()
        )
        if module not in built or not compiled.is_file():
            found.missing.append(module)
        elif built[module] != _digest(source_of(module)):
            found.stale.append(module)
        else:
            found.current[module] = compiled
    return found


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled file of a module that has a current one; lets the others be
    found as usual."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        compiled = self.files.get(fullname)
        if compiled is None or not compiled.is_file():  # (gone since: a build replaced it)
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(compiled))
        return importlib.util.spec_from_file_location(fullname, compiled, loader=loader)


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


_CHOSEN: list[Status] = []  # what the first call of use_compiled chose for the process


def use_compiled(build_dir: Path = BUILD_DIR) -> Status:
    """Load each module of :data:`MODULES` from its current compiled file in
    ``build_dir``, if it has one (and unless ``CRAWLER_COMPILED=0``). Decided once per
    process, by the first call (later ones return its choice); modules imported
    already are not replaced: call it before them."""
    if _CHOSEN:
        return _CHOSEN[0]
    found = status(build_dir) if enabled() else Status(missing=list(MODULES), disabled=True)
    if found.current:
        sys.meta_path.insert(0, _CompiledFinder(found.current))
    _CHOSEN.append(found)
    return found


def in_use() -> list[str]:
    """The modules of :data:`MODULES` imported from a compiled file in this process."""
    return [
        name for name in MODULES
        if (module := sys.modules.get(name)) is not None
        and isinstance(getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader)
    ]


@contextmanager
def _compiler_output_kept(log: Path) -> Iterator[None]:
    """The C compiler's output (pages of warnings about Cython's generated code) sent
    to ``log`` instead of the terminal, and shown only when the build fails."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved, failed = [os.dup(1), os.dup(2)], False
    with log.open("wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            if failed:
                sys.stderr.write(log.read_text(encoding="utf-8", errors="replace")[-4000:])


def build(
    build_dir: Path = BUILD_DIR, jobs: int | None = None, modules: Sequence[str] = MODULES
) -> Status:
    """Compile ``modules`` into ``build_dir`` (replaced whole once every module is
    built: a failed build leaves the last one as it was) and write its manifest."""
    import lxml  # the walk uses lxml's C API (its headers are in the wheel)
    from Cython.Build import cythonize  # build-time only (requirements-dev.txt)
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    digests = {module: _digest(source_of(module)) for module in modules}
    jobs = jobs or os.cpu_count() or 1
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cython-") as work:
        staging = Path(tempfile.mkdtemp(prefix=".compiled-", dir=build_dir.parent))
        try:
            sources = [
                Extension(module, [str(source_of(module))], include_dirs=lxml.get_include())
                for module in modules
            ]
            extensions = cythonize(
                sources, build_dir=work, compiler_directives=DIRECTIVES,
                nthreads=jobs, quiet=True,
            )
            command = build_ext(Distribution({"ext_modules": extensions}))
            command.build_lib, command.build_temp = str(staging), str(Path(work) / "objects")
            command.parallel = jobs
            command.ensure_finalized()
            with _compiler_output_kept(Path(work) / "compiler.log"):
                command.run()
            manifest = {"suffix": _suffix(), "modules": digests}
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            shutil.rmtree(build_dir, ignore_errors=True)
            staging.rename(build_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return status(build_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m crawler.compiled",
        description="Compile the extractor's hottest modules with Cython (same source; "
        "optional: without a build they run as Python), or show what a build gives.",
    )
    parser.add_argument(
        "action", choices=("build", "status"),
        help="build: compile them (needs Cython and a C compiler), unless every one is "
        "current already (--force: always); status: which are compiled and current",
    )
    parser.add_argument("--force", action="store_true", help="build even when current")
    parser.add_argument(
        "--jobs", type=int, default=None, help="compiler processes (default: the cores)"
    )
    args = parser.parse_args(argv)
    found = status()
    if args.action == "build" and (args.force or len(found.current) < len(MODULES)):
        print(f"compiling {len(MODULES)} modules of the extractor with Cython "
              "(a minute or two on two cores)...", file=sys.stderr)
        try:
            found = build(jobs=args.jobs)
        except ImportError as exc:  # Cython or setuptools not installed
            print(f"cannot build: {exc} (pip install -r requirements-build.txt); "
                  "the extractor runs as Python", file=sys.stderr)
            return 1
        except Exception as exc:  # noqa: BLE001 -- the compiler's own output is above
            print(f"the build failed: {type(exc).__name__}: {exc}; the extractor runs as "
                  "Python (a C compiler is needed: gcc or cc)", file=sys.stderr)
            return 1
    print(found.line())
    for module in found.stale:
        print(f"  changed since the build (runs as Python): {module}")
    return 0 if args.action == "status" or len(found.current) == len(MODULES) else 1


if __name__ == "__main__":
    sys.exit(main())
