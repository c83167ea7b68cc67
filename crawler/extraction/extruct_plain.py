"""extruct on the page's tree of lxml's default elements (:mod:`.tree`).

extruct reads a given tree with lxml's generic API but in two places, which need
lxml.html's element classes:

* the OpenGraph extractor asks the document for its ``head`` (lxml.html's
  ``HtmlMixin.head``: the first ``<head>`` of the document): :func:`plain_opengraph`
  makes ``extruct.extract`` use a subclass that gives it the same element, found the
  same way (and its XPath ``//head``, a walk of every node of the tree, the same
  elements among the root's children, where libxml2's HTML parser puts every
  ``<head>``: :func:`heads`);
* the text of a microdata property element with children goes through
  lxml.html's ``Cleaner``, which drops elements with lxml.html's ``drop_tree``:
  :func:`html_copy` gives it a copy of the element as lxml.html's class (the same
  subtree: the cleaner copies the element anyway).
"""

from __future__ import annotations

import copy
from typing import Any

import lxml.html
from lxml import etree
from lxml.html import HtmlElement

from .first_tags import tags_in_order

#: the tags lxml.html's ``HtmlMixin.head`` looks for
_HEADS = ("head", "{http://www.w3.org/1999/xhtml}head")


def html_copy(node: Any) -> Any:
    """``node`` itself when it is of lxml.html's class, else a copy of it (with its
    tail, as ``copy.deepcopy`` gives) in a document of lxml.html's parser, whose
    element objects are of lxml.html's classes."""
    if isinstance(node, HtmlElement):
        return node
    holder = lxml.html.Element("div")
    holder.append(copy.deepcopy(node))  # the copy's element object is dropped here
    return holder[0]  # a new element object, made by the holder's document


def heads(document: Any) -> list[Any]:
    """The ``<head>`` elements of the document, in document order (XPath ``//head``).
    libxml2's HTML parser keeps a ``<head>`` only where it opens with one element open
    (it drops one met deeper, and makes none in ``<svg>``, ``<template>``...): a
    top-level element of the document or a child of one. In a tree it parsed, they
    are looked for there, not in a walk of the whole page."""
    tree = document.getroottree()
    root = tree.getroot()
    if root is None or not isinstance(tree.parser, etree.HTMLParser):
        return list(tree.iter("head"))
    found = []
    for top in (*reversed(list(root.itersiblings(preceding=True))), root, *root.itersiblings()):
        if top.tag == "head":
            found.append(top)
        found += top.iterchildren("head")
    return found


class _WithHead:
    """A document as extruct's OpenGraph extractor reads it: ``xpath`` and ``head``."""

    __slots__ = ("_document",)

    def __init__(self, document: Any) -> None:
        self._document = document

    def xpath(self, *args: Any, **kwargs: Any) -> Any:
        if args == ("//head",) and not kwargs:  # the heads, by lxml's search for the tag
            return heads(self._document)
        return self._document.xpath(*args, **kwargs)

    @property
    def head(self) -> Any:
        return next(tags_in_order(self._document.getroottree(), *_HEADS), None)


def plain_opengraph() -> None:
    """Make ``extruct.extract`` read OpenGraph from either kind of tree (once)."""
    import extruct._extruct as runner
    from extruct.opengraph import OpenGraphExtractor

    class PlainOpenGraph(OpenGraphExtractor):
        """extruct's OpenGraph extractor, given the document's ``head`` as lxml.html does."""

        def extract_items(self, document: Any, base_url: Any = None) -> Any:
            return super().extract_items(_WithHead(document), base_url=base_url)

    if runner.OpenGraphExtractor is OpenGraphExtractor:
        runner.OpenGraphExtractor = PlainOpenGraph  # type: ignore[misc]
