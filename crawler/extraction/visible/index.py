"""One walk of the page's tree: document order, the price elements, grids of
product cards, and the parts of a page that are not the product's (headers,
footers, navs, related products)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from operator import or_
from typing import Any

from lxml import etree
from lxml.etree import _Element

from .classtests import CLASS_TESTS, passed_tests, register_class_test
from .dom import (
    SKIPPED_TAGS,
    CachedSearch,
    _hiding_class,
    classes,
    excluded_by_tag,
    links_away,
)
from .price_marks import is_price_element, names_price
from .stylesheet import StyleHiding
from .walk import walk_elements

_EXCLUDED_SECTION = CachedSearch(
    re.compile(
        r"related|upsell|up-sell|cross-?sell|recommend|recently|similar|also-(?:bought|viewed|like)|"
        r"you-may|minicart|mini-cart|cart-drawer|site-header|site-footer",
        re.I,
    )
)
_EXCLUDED_TAGS = frozenset({"header", "footer", "nav", "aside"})
register_class_test(_EXCLUDED_SECTION.search)


def walk_arguments(root: _Element) -> tuple[Any, ...]:
    """The arguments of the page walk (:mod:`.walk`) from ``root``: the tags it skips,
    and what hides an element on this page (a class, the page's stylesheet's rules)."""
    styled = StyleHiding(root.getroottree().getroot())
    hiding = styled.hiding
    return (
        root,
        SKIPPED_TAGS,
        lambda cls: 1 if _hiding_class(cls) else 2 if hiding and styled.names_class(cls) else 0,
        styled.ids if hiding else (),
        styled.hides,
    )


class PageIndex:
    """One walk of the tree: document order, price elements and grids."""

    def __init__(self, root: _Element) -> None:
        #: the walked elements in document order (:mod:`.walk`), with the ``dom.classes``
        #: of each (its class and id), each element's position, the positions of each
        #: class-and-id string and of each tag, of the elements that have an
        #: ``itemprop`` by its value, of those with ``role="button"`` and with an
        #: ``aria-label``
        (
            self.elements, self.classes, self.order, self.by_class, self.by_tag,
            self.by_itemprop, self.role_buttons, self.aria_labelled,
        ) = walk_elements(*walk_arguments(root))
        elements, by_class, by_tag = self.elements, self.by_class, self.by_tag
        self.prices: list[_Element] = []
        self.in_grid: dict[_Element, int] = {}
        self.cards: set[_Element] = set()
        self._excluded: dict[_Element, bool] = {}
        #: each element is a grid card or inside one (:meth:`in_card`, set by :meth:`add_cards`)
        self._carded = [False] * len(elements)
        #: ``dom.text_of`` of walked elements, by position, once read (:func:`.dom.text_at`)
        self.texts: dict[int, str] = {}
        #: each element is in a site header/footer, a nav/aside or a related-products block
        self.section: list[bool] = []
        self.h1s = [elements[pos] for pos in by_tag.get("h1", [])]
        #: (bits of the registered class tests passed, positions) of each class-and-id
        #: string that passes one (:meth:`with_class`)
        self._passing = [
            (bits, where) for key, where in by_class.items() if (bits := passed_tests(key))
        ]
        self._mark_sections()
        # the price elements: marked by itemprop, tag or class (a price class in the class
        # attribute is also one in the class-and-id string, tested once per string)
        marked = self.with_class(names_price)
        struck = (by_tag.get(t, []) for t in ("ins", "del", "s"))
        for pos in self.positions(self.by_itemprop.get("price", []), *struck, marked):
            el = elements[pos]
            if el.tag != "h1" and is_price_element(el, el.tag, el.get("class") or ""):
                self.prices.append(el)
        # innermost price elements only
        price_set = set(self.prices)
        outer = {a for p in self.prices for a in p.iterancestors() if a in price_set}
        self.prices = [p for p in self.prices if p not in outer]

    def _mark_sections(self) -> None:
        """:attr:`section`: the elements that open an excluded block (by their class and
        id, or their tag), and every element of their subtrees: in document order, the
        elements after one up to :meth:`subtree_end`."""
        elements = self.elements
        count = len(elements)
        if count and self._above(elements[0]):  # the walk's root is inside one
            self.section = [True] * count
            return
        opening = set(self.with_class(_EXCLUDED_SECTION.search))
        for tag in _EXCLUDED_TAGS:
            where = self.by_tag.get(tag, [])
            opening.update(p for p in where if excluded_by_tag(elements[p], tag))
        self.section = self._mark_subtrees(opening)

    def _mark_subtrees(self, opening: Iterable[int]) -> list[bool]:
        """For each walked element: it is one of the elements at the positions
        ``opening``, or inside the subtree of one (in document order, the elements after
        one up to :meth:`subtree_end`)."""
        marked = [False] * len(self.elements)
        for pos in sorted(opening):
            if marked[pos]:
                continue  # inside a subtree already marked
            end = self.subtree_end(pos)
            marked[pos:end] = [True] * (end - pos)
        return marked

    def subtree_end(self, pos: int) -> int:
        """The position after the last walked element of the subtree of the element at
        ``pos``: that of the first walked element after the subtree, the next walked
        sibling of the element or of one of its ancestors (an element the walk skipped
        had its whole subtree skipped), or the end of the walk. Found from the tree, so
        that the walk need not look up every element's parent."""
        order, root = self.order, self.elements[0]
        node: _Element | None = self.elements[pos]
        while node is not None and node is not root:
            for sibling in node.itersiblings(etree.Element):
                found = order.get(sibling)
                if found is not None:
                    return found
            node = node.getparent()
        return len(self.elements)

    def parent_of(self, pos: int) -> int:
        """The position of the parent of the element at ``pos`` (-1: the walk's root)."""
        return self.order.get(self.elements[pos].getparent(), -1) if pos else -1

    def with_class(self, test: Callable[[str], object]) -> list[int]:
        """Positions, in document order, of the elements whose class-and-id string
        (:attr:`classes`) passes ``test`` (tested once per distinct string; a test
        registered by :func:`register_class_test` is answered from the page's bits)."""
        bit = CLASS_TESTS.get(test)
        if bit is None:
            found = [pos for key, where in self.by_class.items() if test(key) for pos in where]
        else:
            found = [pos for bits, where in self._passing if bits & bit for pos in where]
        found.sort()
        return found

    def positions(self, *groups: list[int]) -> list[int]:
        """The positions of several groups (of :attr:`by_tag`, :meth:`with_class`...)
        in document order, each once."""
        return sorted(set().union(*groups))

    def find_grids(self, h1: _Element | None) -> int:
        """Mark prices that sit in repeated priced cards; return the largest grid size."""
        containing: set[_Element] = set()
        for p in self.prices:
            containing.add(p)
            containing.update(p.iterancestors())
        h1_ancestors = set(h1.iterancestors()) if h1 is not None else set()
        largest = 0
        counts: dict[tuple[_Element, str], int] = {}
        for p in self.prices:
            node = p
            for _ in range(8):
                parent = node.getparent()
                if parent is None or node in h1_ancestors or node is h1:
                    break
                key = (parent, node.tag)
                if key not in counts:
                    siblings = [c for c in parent if c.tag == node.tag and c in containing]
                    # priced table rows none of which links away are one product's
                    # variants or quantity tiers (grouped-product and tier-price tables)
                    blocked = any(c in h1_ancestors for c in siblings) or (
                        node.tag == "tr" and not any(links_away(c) for c in siblings)
                    )
                    counts[key] = 0 if blocked else len(siblings)
                if counts[key] >= 3:
                    self.in_grid[p] = counts[key]
                    self.cards.add(node)
                    largest = max(largest, counts[key])
                    break
                node = parent
        self.add_cards(())
        return largest

    def add_cards(self, cards: Iterable[_Element]) -> None:
        """Mark ``cards`` (other products', :mod:`.records`) as cards: :meth:`is_excluded`."""
        self.cards.update(cards)
        self._excluded.clear()
        walked = (self.order.get(card) for card in self.cards)
        self._carded = self._mark_subtrees(p for p in walked if p is not None)

    def content_after(self, pos: int, count: int) -> list[int]:
        """The first ``count`` positions after ``pos`` of the elements not :meth:`is_excluded`:
        the product's own content, whatever strips of other products stand between."""
        section, carded, found = self.section, self._carded, []
        for p in range(pos + 1, len(self.elements)):
            if not (section[p] or carded[p]):
                found.append(p)
                if len(found) >= count:
                    break
        return found

    def is_excluded(self, el: _Element) -> bool:
        """Inside a grid card, a site header/footer, a nav/aside or a related-products block."""
        pos = self.order.get(el)
        if pos is not None:  # a walked element: its section and its card are known
            return self.section[pos] or self._carded[pos]
        return self._outside(el)

    def excluded_flags(self) -> list[bool]:
        """:meth:`is_excluded` of each walked element, by position (not to be changed)."""
        return list(map(or_, self.section, self._carded)) if self.cards else self.section

    def in_card(self, pos: int) -> bool:
        """The element at ``pos`` or one of its ancestors is a grid card (marked by
        :meth:`find_grids`, like :attr:`section`, by subtree)."""
        return self._carded[pos]

    def _above(self, el: _Element) -> bool:
        """The walk's root (about to be walked) is inside an excluded block."""
        parent = el.getparent()
        return parent is not None and self._outside(parent)

    def _outside(self, el: _Element) -> bool:
        """:meth:`is_excluded` of an element the walk did not keep (hidden, or above
        the walk's root): from its own class and tag, then its parent's answer."""
        cached = self._excluded.get(el)
        if cached is not None:
            return cached
        result = el in self.cards or bool(_EXCLUDED_SECTION.search(classes(el)))
        if not result and el.tag in _EXCLUDED_TAGS:
            result = excluded_by_tag(el, el.tag)
        if not result:
            parent = el.getparent()
            result = parent is not None and self.is_excluded(parent)
        self._excluded[el] = result
        return result
