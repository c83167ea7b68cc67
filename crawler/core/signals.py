"""Signals of this project, sent through ``crawler.core.signals`` like Scrapy's own.

``items_stored``
    Sent by a storage pipeline once a batch of items is durably written
    (committed to PostgreSQL, acknowledged by MongoDB, committed to the
    embedded store). Arguments: ``items`` (list of the item objects that were
    passed to ``process_item``), ``spider``, ``store`` (the name the pipeline
    registered with ``LeaseTracker.register_store``, e.g. ``postgres``) and
    ``seconds`` (how long the successful write took; the metrics extension's
    store write latency). The lease tracker uses it to acknowledge the requests
    that produced those items once *every* registered store has sent it for
    them, so a worker that dies before its batch is written everywhere gets the
    pages crawled again instead of losing the products.

``site_throttled``
    Sent by the retry middleware (:mod:`crawler.middlewares.retry`) when a site
    answers 429 or 503 or a request to it times out or loses its connection.
    Arguments: ``request``, ``reason`` (``"HTTP 429"``, an exception's name) and
    ``retry_after`` (seconds the answer's ``Retry-After`` asked for, or None).
    The politeness middleware cuts the site's shared rate on it.

``page_rejected``
    Sent by the spider (:meth:`crawler.spiders.base.DistributedSpider.accepted`) when
    a page gave no item. Arguments: ``response``, ``reason`` (the extractor's, e.g.
    ``no_product``, ``listing``), ``spider``. The data checks count the pages that
    looked like the site's product pages by it (:mod:`crawler.datachecks`).
"""

items_stored = object()
site_throttled = object()
page_rejected = object()
