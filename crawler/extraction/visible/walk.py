"""The walk of :class:`.index.PageIndex`: the page's elements in document order, those
of skipped and hidden subtrees left out, each with its class-and-id string, indexed.

The contract (``tests/unit/test_extraction_walk.py``): from ``root`` (included), in
document order, every element but those of a subtree that is skipped, with its root:

* an element whose tag is in ``skipped`` (:data:`.dom.SKIPPED_TAGS`);
* an element with an attribute ``hidden``, or a ``style`` that hides it
  (:func:`.dom._hiding_style`);
* an element whose ``class`` attribute is judged ``1`` (hides it) by ``judge_class``
  (asked once per distinct attribute), or judged ``2`` (hides it if the stylesheet's
  rules do), or whose ``id`` is in ``hidden_ids``, when ``hides(el, cls, id)`` says so.

Each kept element's class-and-id string is its ``class`` attribute, a space, its
``id`` (``" "`` for neither). Returned: (elements, strings, {element: position},
{string: positions}, {tag: positions}, {itemprop: positions}, positions of the
``role="button"`` elements, positions of the elements with an ``aria-label``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from lxml import etree
from lxml.etree import _Element

from .dom import _hiding_style, skip_subtree

# The attributes the walk reads besides the class and the id (few elements have one)
NOTED_ATTRIBUTES = frozenset({"hidden", "style", "itemprop", "role", "aria-label"})

Walked = tuple[
    list[_Element],
    list[str],
    dict[_Element, int],
    dict[str, list[int]],
    dict[str, list[int]],
    dict[str, list[int]],
    list[int],
    list[int],
]


def walk_elements(
    root: _Element,
    skipped: Collection[str],
    judge_class: Callable[[str], int],
    hidden_ids: Collection[str | None],
    hides: Callable[[_Element, str | None, str | None], bool],
) -> Walked:
    """The walk of the module's doc."""
    elements: list[_Element] = []
    classes: list[str] = []
    by_class: dict[str, list[int]] = {}
    by_tag: dict[str, list[int]] = {}
    by_itemprop: dict[str, list[int]] = {}
    role_buttons: list[int] = []
    aria_labelled: list[int] = []
    # per class attribute (repeated across a page): its verdict, and the class-and-id
    # string of an element without id (one object for all of them: its hash kept)
    class_hides: dict[str, tuple[int, str]] = {}
    # document order, elements only (a C-level walk); a hidden or non-content
    # element's subtree is skipped whole (its elements are only stepped over). An
    # element's attribute names are listed once: most have none, or a class alone.
    walk = root.iter(etree.Element)
    pos = 0
    append_element, append_class, class_at, tag_at = (
        elements.append, classes.append, by_class.get, by_tag.get
    )
    hides_of, none_noted = class_hides.get, NOTED_ATTRIBUTES.isdisjoint
    for el in walk:
        tag = el.tag
        if tag in skipped:
            if len(el):
                skip_subtree(walk, el)
            continue
        names = el.keys()
        if names:
            if "class" in names:
                attr_class = el.get("class")
                known = hides_of(attr_class)
                if known is None:
                    known = class_hides[attr_class] = (judge_class(attr_class), attr_class + " ")
                verdict, key = known
            else:
                attr_class, verdict, key = None, 0, " "
            if "id" in names:
                ident = el.get("id")
                key += ident
            else:
                ident = None
            noted = not none_noted(names)
            if (
                noted
                and ("hidden" in names or "style" in names and _hiding_style(el.get("style")))
                or verdict == 1
                or (verdict == 2 or ident in hidden_ids)
                and hides(el, attr_class, ident)
            ):
                if len(el):
                    skip_subtree(walk, el)
                continue
            if noted:
                if "itemprop" in names:
                    by_itemprop.setdefault(el.get("itemprop"), []).append(pos)
                if "role" in names and el.get("role") == "button":
                    role_buttons.append(pos)
                if "aria-label" in names:
                    aria_labelled.append(pos)
        else:
            key = " "
        append_element(el)
        append_class(key)
        found = class_at(key)
        if found is None:
            by_class[key] = [pos]
        else:
            found.append(pos)
        found = tag_at(tag)
        if found is None:
            by_tag[tag] = [pos]
        else:
            found.append(pos)
        pos += 1
    order = dict(zip(elements, range(pos), strict=True))
    return elements, classes, order, by_class, by_tag, by_itemprop, role_buttons, aria_labelled

