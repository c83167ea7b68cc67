# cython: language_level=3
"""The walk of :mod:`.walk` (see its doc for the contract), over libxml2's nodes
through lxml's public C API: an element object is made only for the elements kept
(and for those a stylesheet's rule is asked about), not for every element stepped
over, and attributes are read where libxml2 keeps them. Built by
``python -m crawler.compiled build``; ``walk.walk_elements_python`` is the same walk
in Python (compared on every saved page by tests/unit/test_extraction_walk.py)."""

from lxml.includes cimport tree
from lxml.includes.etreepublic cimport (
    _Document,
    _Element,
    attributeValue,
    elementFactory,
    import_lxml__etree,
    namespacedName,
)
from libc.string cimport strcmp

from crawler.extraction.visible.dom import _hiding_style

import_lxml__etree()

cdef enum:
    _ELEMENT = 1  # libxml2's XML_ELEMENT_NODE


cdef inline bint _is(const char* name, const char* wanted) noexcept:
    return strcmp(name, wanted) == 0


cdef inline tree.xmlNode* _element_at_or_after(tree.xmlNode* node) noexcept:
    while node is not NULL and node.type != _ELEMENT:
        node = node.next
    return node


cdef inline tree.xmlNode* _next_in_order(
    tree.xmlNode* node, tree.xmlNode* top, bint descend
) noexcept:
    """The element after ``node`` in document order within ``top``'s subtree (its
    children first when ``descend``), or NULL."""
    cdef tree.xmlNode* found
    if descend:
        found = _element_at_or_after(node.children)
        if found is not NULL:
            return found
    while node is not top:
        found = _element_at_or_after(node.next)
        if found is not NULL:
            return found
        node = node.parent
    return NULL


def walk_elements(root, skipped, judge_class, hidden_ids, hides):
    """The walk of :mod:`.walk`'s doc, over libxml2's nodes."""
    cdef _Element top = <_Element?>root
    cdef _Document doc = top._doc
    cdef tree.xmlNode* node = top._c_node
    cdef tree.xmlAttr* attr
    cdef tree.xmlAttr* c_class
    cdef tree.xmlAttr* c_id
    cdef tree.xmlAttr* c_style
    cdef tree.xmlAttr* c_itemprop
    cdef tree.xmlAttr* c_role
    cdef const char* name
    cdef bint noted, hidden, labelled
    cdef Py_ssize_t pos = 0
    cdef int verdict
    cdef list elements = [], classes = []
    cdef dict by_class = {}, by_tag = {}, by_itemprop = {}, class_hides = {}, tags = {}
    cdef list role_buttons = [], aria_labelled = []
    cdef list found
    cdef object tag, el, attr_class, ident, key, known
    if top._c_node.type != _ELEMENT:
        node = NULL
    while node is not NULL:
        if node.ns is NULL:  # a tag name is one string of the document's dictionary
            tag = tags.get(<size_t>node.name)
            if tag is None:
                tag = tags[<size_t>node.name] = namespacedName(node)
        else:
            tag = namespacedName(node)
        if tag in skipped:
            node = _next_in_order(node, top._c_node, False)
            continue
        attr_class, ident, key, verdict = None, None, " ", 0
        if node.properties is not NULL:
            c_class = c_id = c_style = c_itemprop = c_role = NULL
            noted = hidden = labelled = False
            attr = node.properties
            while attr is not NULL:
                if attr.ns is NULL:
                    name = <const char*>attr.name
                    if _is(name, "class"):
                        if c_class is NULL:
                            c_class = attr
                    elif _is(name, "id"):
                        if c_id is NULL:
                            c_id = attr
                    elif _is(name, "hidden"):
                        noted = hidden = True
                    elif _is(name, "style"):
                        noted = True
                        if c_style is NULL:
                            c_style = attr
                    elif _is(name, "itemprop"):
                        noted = True
                        if c_itemprop is NULL:
                            c_itemprop = attr
                    elif _is(name, "role"):
                        noted = True
                        if c_role is NULL:
                            c_role = attr
                    elif _is(name, "aria-label"):
                        noted = labelled = True
                attr = attr.next
            if c_class is not NULL:
                attr_class = attributeValue(node, c_class)
                known = class_hides.get(attr_class)
                if known is None:
                    known = class_hides[attr_class] = (judge_class(attr_class), attr_class + " ")
                verdict, key = known
            if c_id is not NULL:
                ident = attributeValue(node, c_id)
                key = key + ident
            el = None
            if (
                noted
                and (hidden or c_style is not NULL and _hiding_style(attributeValue(node, c_style)))
                or verdict == 1
            ):
                node = _next_in_order(node, top._c_node, False)
                continue
            if verdict == 2 or ident in hidden_ids:
                el = elementFactory(doc, node)
                if hides(el, attr_class, ident):
                    node = _next_in_order(node, top._c_node, False)
                    continue
            if noted:
                if c_itemprop is not NULL:
                    by_itemprop.setdefault(attributeValue(node, c_itemprop), []).append(pos)
                if c_role is not NULL and attributeValue(node, c_role) == "button":
                    role_buttons.append(pos)
                if labelled:
                    aria_labelled.append(pos)
            if el is None:
                el = elementFactory(doc, node)
        else:
            el = elementFactory(doc, node)
        elements.append(el)
        classes.append(key)
        found = by_class.get(key)
        if found is None:
            by_class[key] = [pos]
        else:
            found.append(pos)
        found = by_tag.get(tag)
        if found is None:
            by_tag[tag] = [pos]
        else:
            found.append(pos)
        pos += 1
        node = _next_in_order(node, top._c_node, True)
    order = dict(zip(elements, range(pos)))
    return elements, classes, order, by_class, by_tag, by_itemprop, role_buttons, aria_labelled
