"""Is a page an application shell, built in the browser? And does its HTML give anything?

An application shell (a single-page application before its scripts ran) has little
text, an element the framework mounts into, and scripts: ``<div id="root"></div>``
with a bundle, ``<div id="__next">``, ``<div id="app">``, ``<app-root>``, an element
marked ``data-reactroot``, ``ng-app``, ``data-v-app``... :func:`looks_like_app_shell`
tests those three marks on the parsed page (the text outside scripts, styles and
templates under :data:`SHELL_MAX_TEXT` characters).

:func:`gives_nothing` is the other half of the decision to render (see
:mod:`crawler.middlewares.rendering`): the page's HTML gives no product, no
embedded state (:mod:`crawler.extraction.embedded`) and no link to follow. Both
are pure functions of the response; neither raises.
"""

from __future__ import annotations

import logging
import re

from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract
from crawler.extraction.embedded import has_embedded_state
from crawler.extraction.tree import page_root

logger = logging.getLogger(__name__)

#: A page with more visible text than this is not a shell (its HTML shows something).
SHELL_MAX_TEXT = 300
_MOUNT_ID = re.compile(
    r"^(?:root|app|__next|__nuxt|___gatsby|__layout|svelte|main-app|app-root|react-root|"
    r"vue-app|application|spa|mount|container-root)$",
    re.I,
)
_MOUNT_ATTRIBUTES = ("data-reactroot", "ng-app", "data-v-app", "ng-version", "data-server-rendered")
_INVISIBLE = frozenset({"script", "style", "noscript", "template", "head", "title", "meta", "link"})


def looks_like_app_shell(response: HtmlResponse) -> bool:
    """Little text, a mount element and scripts (see the module doc)."""
    try:
        root = page_root(response)
    except Exception:  # noqa: BLE001 -- not parseable: not a shell either
        return False
    scripts = mount = False
    text = 0
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag == "script":
            scripts = scripts or bool(element.get("src") or (element.text or "").strip())
            continue
        if not mount and (
            _MOUNT_ID.match(element.get("id") or "")
            or any(element.get(name) is not None for name in _MOUNT_ATTRIBUTES)
            or (tag.count("-") and tag.endswith("-root"))
        ):
            mount = True
        if tag not in _INVISIBLE and element.text:
            parent = element.getparent()
            if parent is None or parent.tag not in _INVISIBLE:
                text += len(element.text.strip())
        if element.tail and tag not in ("html", "head"):
            text += len(element.tail.strip())
        if text > SHELL_MAX_TEXT:
            return False
    return scripts and mount


def gives_nothing(response: HtmlResponse) -> bool:
    """The page's HTML gives no product, no embedded state and no link to follow."""
    try:
        if has_embedded_state(response) or discover_links(response):
            return False
        return extract(response).product is None
    except Exception:  # noqa: BLE001 -- the spider will say what failed; no render for it
        logger.debug("Could not judge %s", response.url, exc_info=True)
        return False
