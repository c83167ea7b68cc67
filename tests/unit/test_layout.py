"""The layout rules of docs/architecture.md, checked on the source tree.

- no module of ``crawler/`` or ``master/`` over 400 lines;
- components find each other through Scrapy (``crawler.get_extension`` ...) or
  objects handed over, never through private attributes pinned on the Crawler;
- ``crawler/extensions/`` does not import ``crawler/scheduling/``;
- every default comes from ``crawler/core/defaults.py``: no literal fallback in a
  ``settings.getX("NAME", default)`` call;
- ``crawler/`` holds no loose module but ``__init__.py`` and ``settings.py`` (which
  ``scrapy.cfg`` names): every other module stands in a package that says what it holds;
- no circle of imports between the modules of ``crawler/`` (lazy and type-checking
  imports included): a name two modules share goes where both can import it.
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

    # a default that crawler/core/defaults.py takes from crawler/core/keys.py (NAME =
    # _keys.CONSTANT): keys.py, which defaults imports, falls back to the constant itself
    source = (ROOT / "crawler" / "core" / "defaults.py").read_text(encoding="utf-8")
    from_keys = dict(re.findall(r"^([A-Z][A-Z0-9_]+) = _keys\.([A-Z][A-Z0-9_]+)$", source, re.M))
    assert from_keys
    literal = []
    for path in _modules():
        for match in _FALLBACK.finditer(path.read_text(encoding="utf-8")):
            name, fallback = match.group(1), match.group(2).strip()
            allowed = (f"defaults.{name}", from_keys.get(name))
            if hasattr(defaults, name) and fallback not in allowed:
                literal.append(f"{_relative(path)}: {name} falls back to {fallback}")
    assert literal == []


def test_crawler_has_no_loose_module() -> None:
    loose = sorted(path.name for path in (ROOT / "crawler").glob("*.py"))
    assert loose == ["__init__.py", "settings.py"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _imported(name: str, path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it, relative imports resolved."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_no_circle_of_imports_in_crawler() -> None:
    paths = {_module_name(path): path for path in (ROOT / "crawler").rglob("*.py")}
    graph = {
        name: {other for other in _imported(name, path) if other in paths and other != name}
        for name, path in paths.items()
    }
    assert any(graph.values())
    assert _cycles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
