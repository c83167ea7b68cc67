"""Normalisation of every product field: one module per kind of value.

Each function takes a raw value as found on a page (structured data or visible
text) and returns the field in its contract form, or ``None`` when the value is
unusable:

* :mod:`.text` -- :func:`~.text.normalize_text` / :func:`~.text.normalize_html_text`:
  whitespace collapsed (markup and entities dropped).
* :mod:`.price` -- :func:`~.price.parse_price`: ``Decimal`` with a dot, thousands
  separators removed.
* :mod:`.currency` -- :func:`~.currency.parse_currency` /
  :func:`~.currency.currency_from_text`: ISO 4217 code.
* :mod:`.availability` -- :func:`~.availability.normalize_availability` /
  :func:`~.availability.availability_from_text`: one of
  :data:`~.availability.AVAILABILITY_VALUES`.
* :mod:`.identifiers` -- :func:`~.identifiers.normalize_gtin` (digits only, 8, 12,
  13 or 14 of them) and :func:`~.identifiers.normalize_identifier` (SKU, MPN).
* :mod:`.urls` -- :func:`~.urls.absolute_url` / :func:`~.urls.normalize_images`:
  absolute http(s) URLs.
"""
