"""The layout rules of docs/architecture.md, checked on the source tree.

- no module of ``crawler/`` or ``master/`` over 400 lines;
- components find each other through Scrapy (``crawler.get_extension`` ...) or
  objects handed over, never through private attributes pinned on the Crawler;
- ``crawler/extensions/`` does not import ``crawler/scheduling/``;
- every default comes from ``crawler/core/defaults.py``: no literal fallback in a
  ``settings.getX("NAME", default)`` call.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("crawler", "master")
MAX_LINES = 400


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_tree_has_modules() -> None:
    assert len(_modules()) > 40


@pytest.mark.parametrize("path", _modules(), ids=_relative)
def test_no_module_over_400_lines(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{_relative(path)} has {lines} lines"


def test_no_private_attributes_pinned_on_the_crawler() -> None:
    found = [
        f"{_relative(path)}:{number}"
        for path in _modules()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "_ecommerce_" in line
    ]
    assert found == []


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_extensions_do_not_import_scheduling() -> None:
    extensions = sorted((ROOT / "crawler" / "extensions").glob("*.py"))
    assert extensions
    found = {
        _relative(path): sorted(name for name in _imports(path) if "crawler.scheduling" in name)
        for path in extensions
    }
    assert {path: names for path, names in found.items() if names} == {}


_FALLBACK = re.compile(
    r"settings\.get(?:int|float|bool|list|dict)?\(\s*\"([A-Z][A-Z0-9_]+)\",\s*([^)\s][^)]*)\)"
)


def test_setting_fallbacks_come_from_defaults() -> None:
    from crawler.core import defaults

    literal = []
    for path in _modules():
        for match in _FALLBACK.finditer(path.read_text(encoding="utf-8")):
            name, fallback = match.group(1), match.group(2).strip()
            if hasattr(defaults, name) and fallback != f"defaults.{name}":
                literal.append(f"{_relative(path)}: {name} falls back to {fallback}")
    assert literal == []
