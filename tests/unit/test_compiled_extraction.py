"""The extractor's compiled modules (crawler/compiled.py): the same results as the
Python they are compiled from, on every saved page; used only while current.

Each check runs in a new interpreter: which file a module is loaded from is decided
once per process, at its first import."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crawler import compiled

ROOT = Path(__file__).resolve().parents[2]
# the saved pages: the project's fixtures, and the development sets beside the project
# when they are there (../shared/, see DEVELOPERS.md)
FOLDERS = [
    ROOT / "tests" / "fixtures" / "pages",
    ROOT / "tests" / "fixtures" / "holdout",
    *(
        folder
        for folder in (
            ROOT.parent / "shared" / "product-pages-dev",
            ROOT.parent / "shared" / "product-pages-intl",
        )
        if folder.is_dir()
    ),
]
NOT_BUILT = (
    "the extractor's compiled modules are not built or not current: "
    "python -m crawler.compiled build (scripts/bootstrap runs it)"
)

# Prints {"in_use": [...], "pages": {folder/page: extraction}} of the folders in argv
_EXTRACT_ALL = """
import json, sys
from pathlib import Path
from benchmarks.extraction_accuracy import load_folder
from crawler import compiled
from crawler.extraction import extract
pages = {}
for folder in sys.argv[1:]:
    for name, response, _ in load_folder(Path(folder)):
        found = extract(response)
        pages[f"{Path(folder).name}/{name}"] = [found.product, found.rejected, found.errors]
print(json.dumps({"in_use": compiled.in_use(), "pages": pages}, default=str, sort_keys=True))
"""

# Prints the modules loaded compiled after use_compiled(argv[1]) and the extractor's import
_IN_USE = """
import json, sys
from pathlib import Path
from crawler import compiled
compiled.use_compiled(Path(sys.argv[1]))
import crawler.extraction  # noqa: F401
from crawler.extraction.visible import walk
print(json.dumps([compiled.in_use(), walk.walk_elements is walk.walk_elements_python]))
"""


def _python(code: str, *args: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_compiled_and_python_extract_the_same_on_every_saved_page() -> None:
    assert compiled.status().current.keys() == set(compiled.MODULES), NOT_BUILT
    folders = [str(folder) for folder in FOLDERS]
    as_built = json.loads(_python(_EXTRACT_ALL, *folders))
    as_python = json.loads(_python(_EXTRACT_ALL, *folders, **{compiled.ENV: "0"}))
    assert as_built["in_use"] == list(compiled.MODULES)
    assert as_python["in_use"] == []
    assert len(as_built["pages"]) >= 90  # the fixtures alone hold more than 90
    products = sum(1 for product, _, _ in as_built["pages"].values() if product)
    assert products >= len(as_built["pages"]) // 2
    assert as_built["pages"].keys() == as_python["pages"].keys()
    differ = [
        page for page, found in as_built["pages"].items() if as_python["pages"][page] != found
    ]
    assert differ == []


def _copy_of_the_build(tmp_path: Path) -> Path:
    assert compiled.status().current.keys() == set(compiled.MODULES), NOT_BUILT
    copy = tmp_path / "build"
    shutil.copytree(compiled.BUILD_DIR, copy)
    return copy


def test_a_module_changed_since_its_build_runs_as_python(tmp_path: Path) -> None:
    build = _copy_of_the_build(tmp_path)
    manifest = json.loads((build / compiled.MANIFEST).read_text())
    changed = ["crawler.extraction.visible.records", "crawler.extraction.visible._walk"]
    for module in changed:  # as if their sources had been edited since this build
        manifest["modules"][module] = "0" * 64
    (build / compiled.MANIFEST).write_text(json.dumps(manifest))
    found = compiled.status(build)
    assert sorted(found.stale) == sorted(changed)
    assert found.missing == []
    assert "2 changed since the build run as Python" in found.line()
    in_use, python_walk = json.loads(_python(_IN_USE, str(build)))
    assert in_use == [module for module in compiled.MODULES if module not in changed]
    assert python_walk  # the walk's compiled twin is stale: its Python one runs


def test_a_current_build_is_used_whole_and_can_be_turned_off(tmp_path: Path) -> None:
    build = _copy_of_the_build(tmp_path)
    in_use, python_walk = json.loads(_python(_IN_USE, str(build)))
    assert in_use == list(compiled.MODULES) and not python_walk
    in_use, python_walk = json.loads(_python(_IN_USE, str(build), **{compiled.ENV: "0"}))
    assert in_use == [] and python_walk
    line = _python(
        "from crawler import compiled; print(compiled.use_compiled().line())", **{compiled.ENV: "0"}
    )
    assert line.strip() == "extraction: pure Python (CRAWLER_COMPILED=0)"


def test_a_build_for_another_python_or_none_at_all_is_not_used(tmp_path: Path) -> None:
    build = _copy_of_the_build(tmp_path)
    manifest = json.loads((build / compiled.MANIFEST).read_text())
    manifest["suffix"] = ".cpython-399-x86_64-linux-gnu.so"
    (build / compiled.MANIFEST).write_text(json.dumps(manifest))
    assert compiled.status(build).missing == list(compiled.MODULES)
    assert json.loads(_python(_IN_USE, str(build)))[0] == []
    empty = compiled.status(tmp_path / "nothing")
    assert empty.current == {} and empty.missing == list(compiled.MODULES)
    assert "pure Python" in empty.line()


@pytest.mark.parametrize("module", compiled.MODULES)
def test_each_compiled_module_has_its_source(module: str) -> None:
    assert compiled.source_of(module).is_file()


def test_a_build_compiles_and_a_failed_one_leaves_the_last_as_it_was(tmp_path: Path) -> None:
    module = "crawler.extraction.first_tags"  # a short module: a build of a few seconds
    build = tmp_path / "build"
    found = compiled.build(build, jobs=1, modules=[module])
    assert list(found.current) == [module]
    manifest = json.loads((build / compiled.MANIFEST).read_text())
    assert manifest["modules"] == {module: compiled._digest(compiled.source_of(module))}
    before = sorted(str(path.relative_to(build)) for path in build.rglob("*"))
    # a compiler that fails: the build raises, with the compiler's output, and the
    # last build stays whole (nothing half-written beside it either)
    failing = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; from crawler import "
         "compiled; compiled.build(Path(sys.argv[1]), jobs=1, modules=[sys.argv[2]])",
         str(build), module],
        cwd=ROOT, env={**os.environ, "CC": "false"}, capture_output=True, text=True, timeout=240,
    )
    assert failing.returncode != 0
    assert "CompileError" in failing.stderr
    assert sorted(str(path.relative_to(build)) for path in build.rglob("*")) == before
    assert [path.name for path in tmp_path.iterdir()] == ["build"]
