"""What a shopper sees: the visible page, read without structured data.

:func:`~.page.read_visible_page` walks the lxml tree once
(:class:`~.index.PageIndex`) and finds

* the main heading (one ``<h1>``, outside headers, navs and product cards;
  :mod:`.name`);
* price elements (``itemprop=price``, classes containing ``price``/``amount``),
  grouped into *grids*: three or more sibling blocks that each hold a price are
  product cards of a listing or of a "related products" strip (:mod:`.index`);
* the selling price shown right after the heading, outside any grid: in its
  price box a sale price (``ins``, ``.special-price``, ``.sale-price``...) beats
  list prices (``del``, ``s``, ``.old-price``, ``.was-price``,
  ``.regular-price``...) (:mod:`.price`; the amount an element shows:
  :mod:`.price_text`);
* stock wording, add-to-cart controls and "not sold online" notices
  (:mod:`.availability`); product-code rows (SKU, UPC, EAN, GTIN, MPN, brand;
  :mod:`.codes`); breadcrumb trails, gallery images, the description block and
  the rating (:mod:`.details`).

The result is a :class:`~.page.VisiblePage`; :mod:`crawler.extraction.merge`
decides what wins, :mod:`crawler.extraction.pagetype` what kind of page it is.
Helpers on elements (visible text, classes, hidden elements) are in :mod:`.dom`.
"""
