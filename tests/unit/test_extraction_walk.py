"""The page walk (crawler/extraction/visible/walk.py): what it keeps and how it indexes
it, on the cases of its contract."""

from __future__ import annotations

from typing import Any

from lxml.etree import _Element
from parsel import Selector

from crawler.extraction.visible.index import walk_arguments
from crawler.extraction.visible.walk import walk_elements


def _root(html: str) -> _Element:
    return Selector(text=html).root


def _walk(root: _Element) -> Any:
    """The walk of a page, asked as the page index asks (its stylesheet's rules)."""
    return walk_elements(*walk_arguments(root))


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


def test_the_walk_keeps_what_the_contract_says() -> None:
    elements, classes, order, by_class, by_tag, by_itemprop, buttons, labelled = _walk(
        _root(CASES["hidden subtrees"])
    )
    texts = [el.text for el in elements if el.tag == "p"]
    assert texts == ["yes", "yes"]
    assert [el.tag for el in elements] == ["html", "body", "div", "p", "p"]
    assert classes == [" ", " ", " ", " ", "hidden-xs "]
    assert order == {el: pos for pos, el in enumerate(elements)}
    assert by_tag == {"html": [0], "body": [1], "div": [2], "p": [3, 4]}
    noted = _walk(_root(CASES["attributes noted"]))
    assert noted[1][2] == "a x"
    assert noted[5] == {"price": [2], "name": [3]} and noted[6] == [2] and noted[7] == [2, 4]
    styled = _walk(_root(CASES["stylesheet rules"]))
    assert [el.get("class") for el in styled[0] if el.tag == "div"] == ["shown", "gone-not"]
    assert [el.tag for el in _walk(_root(CASES["skipped tags"]))[0]] == [
        "html", "head", "body", "p",
    ]


def test_comments_attributes_without_a_value_and_depth() -> None:
    walked = _walk(_root(CASES["comments and text"]))
    assert [el.tag for el in walked[0]] == ["html", "body", "div", "p", "p", "p"]  # no comment
    assert walked[1][4:] == [" ", " "]  # an empty class or id is none
    bare = _walk(_root(CASES["attributes without a value"]))
    assert [el.tag for el in bare[0]] == ["html", "body", "div", "p", "span", "i", "b"]  # no <u>
    assert bare[5] == {"": [4]} and bare[7] == [6]
    deep = _walk(_root(CASES["deep and wide"]))
    assert len(deep[0]) == 2 + 60 * 2 + 200 and deep[4]["p"][-1] == 321
