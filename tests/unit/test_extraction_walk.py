"""The page walk's two implementations (crawler/extraction/visible/walk.py): the
compiled one over libxml2's nodes gives what the Python one gives, element for
element, on every saved page and on each case of the walk's contract."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lxml.etree import _Element
from parsel import Selector

from crawler.extraction.visible import walk
from crawler.extraction.visible.index import walk_arguments

from .test_compiled_extraction import FOLDERS, NOT_BUILT

Walk = Callable[..., Any]


def _walks() -> tuple[Walk, Walk]:
    assert walk.walk_elements is not walk.walk_elements_python, NOT_BUILT
    return walk.walk_elements, walk.walk_elements_python


def _root(html: str) -> _Element:
    return Selector(text=html).root


def _both(root: _Element) -> tuple[Any, Any]:
    """Both walks of a page, asked as the page index asks (its stylesheet's rules)."""
    args = walk_arguments(root)
    native, python = _walks()
    return native(*args), python(*args)


def _pages() -> list[Path]:
    found: list[Path] = []
    for folder in FOLDERS:
        found += sorted(folder.glob("*.html")) + sorted(folder.glob("*.html.gz"))
        found += sorted(folder.glob("pages/*.gz"))
    return found


def test_the_saved_pages_are_found() -> None:
    assert len(_pages()) >= 60


@pytest.mark.parametrize("page", _pages(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_both_walks_agree_on_a_saved_page(page: Path) -> None:
    raw = gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
    native, python = _both(_root(raw.decode("utf-8", "replace")))
    assert len(native[0]) == len(python[0]) > 0
    for part, (got, want) in enumerate(zip(native, python, strict=True)):
        assert got == want, f"part {part} of the walk differs"


CASES = {
    "attributes noted": (
        '<html><body><div class="a" id="x" itemprop="price" role="button" aria-label="Buy">'
        '<span role="link" itemprop="name">t</span><i aria-label="">i</i></div></body></html>'
    ),
    "hidden subtrees": (
        '<html><body><div hidden><p>no</p></div><div style="display: none"><p>no</p></div>'
        '<div style="color:red"><p>yes</p></div><div class="hidden x"><b>no</b></div>'
        '<p class="d-none">no</p><p class="hidden-xs">yes</p></body></html>'
    ),
    "skipped tags": (
        "<html><head><style>.x{}</style><script>1</script></head><body><select><option>a"
        "</option></select><svg><g><path/></g></svg><template><p>t</p></template>"
        "<noscript><p>n</p></noscript><textarea>x</textarea><p>kept</p></body></html>"
    ),
    "stylesheet rules": (
        "<html><head><style>.gone, #away {display:none} .shown {color:red}</style></head>"
        '<body><div class="gone"><p>no</p></div><div id="away"><p>no</p></div>'
        '<div class="shown" id="here"><p>yes</p></div><div class="gone-not">y</div></body></html>'
    ),
    "comments and text": (
        "<html><body><!-- c --><div>a<!-- d --><p>b</p>tail<?pi x?></div>"
        "<p class=''>empty class</p><p id=''>empty id</p></body></html>"
    ),
    "attributes without a value": (
        "<html><body><div class><p id>a</p><span itemprop>b</span><i style>c</i>"
        "<b role aria-label>d</b><u hidden>e</u></div></body></html>"
    ),
    "deep and wide": "<html><body>" + "<div><p class='c'>x</p>" * 60 + "</div>" * 60
    + "".join(f"<p id='i{n}' class='c{n % 3}'>{n}</p>" for n in range(200)) + "</body></html>",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_walks_agree_on_each_case_of_the_contract(name: str) -> None:
    native, python = _both(_root(CASES[name]))
    assert native == python


def test_the_walk_keeps_what_the_contract_says() -> None:
    elements, classes, order, by_class, by_tag, by_itemprop, buttons, labelled = _both(
        _root(CASES["hidden subtrees"])
    )[0]
    texts = [el.text for el in elements if el.tag == "p"]
    assert texts == ["yes", "yes"]
    assert [el.tag for el in elements] == ["html", "body", "div", "p", "p"]
    assert classes == [" ", " ", " ", " ", "hidden-xs "]
    assert order == {el: pos for pos, el in enumerate(elements)}
    assert by_tag == {"html": [0], "body": [1], "div": [2], "p": [3, 4]}
    noted = _both(_root(CASES["attributes noted"]))[0]
    assert noted[1][2] == "a x"
    assert noted[5] == {"price": [2], "name": [3]} and noted[6] == [2] and noted[7] == [2, 4]
    styled = _both(_root(CASES["stylesheet rules"]))[0]
    assert [el.get("class") for el in styled[0] if el.tag == "div"] == ["shown", "gone-not"]
    assert [el.tag for el in _both(_root(CASES["skipped tags"]))[0][0]] == [
        "html", "head", "body", "p",
    ]
