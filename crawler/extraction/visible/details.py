"""The rest of what the page shows of its product: the breadcrumb trail, the
gallery's images, the description block and the rating."""

from __future__ import annotations

import re
from functools import lru_cache

from lxml.etree import _Element

from ..normalize.text import normalize_text
from .dom import SKIPPED_TAGS, CachedSearch, classes, visible_strings, visible_text
from .index import PageIndex, register_class_test

_BREADCRUMB_SEPARATORS = re.compile(r"\s+[/>|›»→·]\s+|^[/>|›»→·]+|[/>|›»→·]+$")
_GALLERY = CachedSearch(
    re.compile(
        r"gallery|product-?image|product-?media|product-?photo|main-?image|zoom|"
        r"product__media|woocommerce-product-gallery|fotorama|swiper|galer[ií]a|galerie|"
        r"landing-?image|product-?cover|primary-?image|hero-?image",
        re.I,
    )
)
_BAD_IMAGE = re.compile(r"logo|icon|sprite|placeholder|spinner|loading|blank|pixel|badge", re.I)
_DESCRIPTION = CachedSearch(re.compile(r"description|^desc$|^product-?desc$", re.I))
_NOT_DESCRIPTION = CachedSearch(
    re.compile(r"short|title|heading|toggle|label|link|tab$|meta", re.I)
)
_SHORT = re.compile(r"short", re.I)
_BREADCRUMB_MARKER = CachedSearch(
    re.compile(r"breadcrumb|\bmigas\b|miga-?de-?pan|brotkr[uü]mel|fil-?d-?ariane", re.I)
)
_RATING_CLASS = CachedSearch(re.compile(r"rating|review|stars", re.I))
register_class_test(_GALLERY.search)
register_class_test(_RATING_CLASS.search)
_RATING_VALUE = re.compile(
    r"(\d+(?:[.,]\d+)?)\s*(?:out of|of|/|von|de|sur)\s*(5|10|100)\b|"
    r"(?:rated|rating:?)\s*(\d(?:[.,]\d+)?)\b",
    re.I,
)
_RATING_COUNT = re.compile(
    r"(\d[\d,.]*)\s*(?:customer\s+)?(?:reviews?|ratings?|votes?|bewertungen|rezensionen|"
    r"reseñas|opiniones|valoraciones|avis|évaluations)\b",
    re.I,
)


@register_class_test(need=re.compile(r"breadcrumb|migas|miga-?de-?pan|brotkr[uü]mel|fil-?d-?ariane"))
def _marks_breadcrumb(key: str) -> bool:
    return bool(_BREADCRUMB_MARKER.search((key + " ").lower()))


def read_breadcrumbs(idx: PageIndex) -> list[str]:
    # the marker is in the class-and-id string, or also in an aria-label
    for pos in idx.positions(idx.with_class(_marks_breadcrumb), idx.aria_labelled):
        el, cls = idx.elements[pos], idx.classes[pos]
        marker = (cls + " " + (el.get("aria-label") or "")).lower()
        if not _BREADCRUMB_MARKER.search(marker) or el.tag in ("li", "a", "span", "meta"):
            continue
        items = el.findall(".//li")
        if items:
            chunks = [visible_text(li) for li in items]
        else:
            chunks = []
            for piece in visible_strings(el):
                chunks.extend(_BREADCRUMB_SEPARATORS.split(piece.strip()))
        crumbs = []
        for raw_chunk in chunks:
            chunk = normalize_text(_BREADCRUMB_SEPARATORS.sub("", raw_chunk or ""))
            if (
                chunk
                and not re.fullmatch(r"[/>|›»→·]+", chunk)
                and not re.match(r"(?i)you are here", chunk)
            ):
                crumbs.append(chunk)
        if crumbs:
            return crumbs
    return []


def _image_src(img: _Element) -> str | None:
    for attr in ("data-zoom-image", "data-large_image", "data-src", "src"):
        value = img.get(attr)
        if value and not value.startswith("data:"):
            return value
    return None


def read_images(idx: PageIndex, h1: _Element | None) -> list[str]:
    found: list[str] = []

    def take(imgs: list[_Element]) -> None:
        for img in imgs:
            src = _image_src(img)
            if not src or _BAD_IMAGE.search(src + " " + classes(img) + (img.get("alt") or "")):
                continue
            if re.search(r"\.(?:svg|gif)(?:\?|$)", src, re.I) or idx.is_excluded(img):
                continue
            if src not in found:
                found.append(src)

    for pos in idx.with_class(_GALLERY.search):
        el = idx.elements[pos]
        if not idx.is_excluded(el):
            take(el.findall(".//img") if el.tag != "img" else [el])
            if found:
                return found
    if h1 is not None:
        node = h1
        for _ in range(4):
            node = node.getparent()
            if node is None or node.tag in ("body", "html"):
                break
            imgs = node.findall(".//img")
            if imgs:
                take(imgs)
                if found:
                    return found
    return found


def read_description(idx: PageIndex) -> str | None:
    """The description block; a short-description block (a summary next to the
    price) only when the page has no full one."""
    short: str | None = None
    marked = idx.with_class(_names_description)
    for pos in idx.positions(idx.by_itemprop.get("description", []), marked):
        el, cls = idx.elements[pos], idx.classes[pos]
        full_token, summary_token = _description_tokens(cls)
        full = el.get("itemprop") == "description" or full_token
        summary = not full and short is None and summary_token
        if not (full or summary):
            continue
        if idx.is_excluded(el) or el.tag in ("meta", "body", "html"):
            continue
        text = normalize_text(" ".join(_block_texts(el)))
        if text:
            text = re.sub(r"^(?:product )?description:?(?:\s+|$)", "", text, flags=re.I)
            if len(text) >= 10:
                if full:
                    return text
                short = text
    return short


@lru_cache(maxsize=4096)
def _description_tokens(cls: str) -> tuple[bool, bool]:
    """(a token of ``cls`` names a description block, one names a short description):
    a pure function of the class string, which repeats across a page and a shop's pages."""
    tokens = cls.split()
    full = any(
        _DESCRIPTION.search(token) and not _NOT_DESCRIPTION.search(token) for token in tokens
    )
    summary = any(
        _DESCRIPTION.search(token)
        and _SHORT.search(token)
        and not _NOT_DESCRIPTION.search(_SHORT.sub("", token))
        for token in tokens
    )
    return full, summary


@register_class_test(need=re.compile(r"description|desc", re.I))
def _names_description(key: str) -> bool:
    return any(_description_tokens(key))


def _block_texts(el: _Element) -> list[str]:
    """Text of a block, dropping a leading "Description" heading."""
    out = []
    first = True
    if el.text and el.text.strip():
        first = False
        out.append(el.text)
    for child in el:
        if not isinstance(child.tag, str) or child.tag in SKIPPED_TAGS:
            if child.tail:
                out.append(child.tail)
            continue
        if first and child.tag in ("h2", "h3", "h4") and len(visible_text(child)) < 40:
            first = False
        else:
            first = False
            out.append(" ".join(visible_strings(child)))
        if child.tail:
            out.append(child.tail)
    return out


def read_rating(idx: PageIndex) -> dict[str, float | int] | None:
    """ "4.5 out of 5 (12 reviews)" in rating/review blocks; both parts are required."""
    value: float | None = None
    count: int | None = None
    cells = (idx.by_tag.get("td", []), idx.by_tag.get("dd", []))
    for pos in idx.positions(idx.with_class(_RATING_CLASS.search), *cells):
        el, cls = idx.elements[pos], idx.classes[pos]
        if not _RATING_CLASS.search(cls) and not _rating_row(el):
            continue
        if idx.is_excluded(el):
            continue
        text = " ".join(t for t in (visible_text(el), el.get("title"), el.get("aria-label")) if t)
        if len(text) > 200:
            continue
        if value is None:
            match = _RATING_VALUE.search(text)
            if match:
                value = float((match.group(1) or match.group(3)).replace(",", "."))
        if count is None:
            match = _RATING_COUNT.search(text)
            if match:
                count = int(re.sub(r"\D", "", match.group(1)))
        if value is not None and count is not None:
            return {"value": value, "count": count}
    return None


def _rating_row(el: _Element) -> bool:
    """The value cell of a "Customer Reviews | 4.4 out of 5 stars 2,311 ratings" row."""
    if el.tag not in ("td", "dd"):
        return False
    label = el.getprevious()
    if label is None or label.tag not in ("th", "td", "dt"):
        return False
    text = visible_text(label)
    return len(text) <= 40 and bool(_RATING_CLASS.search(text))
