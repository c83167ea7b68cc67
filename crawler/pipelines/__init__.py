"""Item pipelines: validation first, then exactly one store of the spider's item kind.

==========================================  =====  ==========================================
pipeline                                    order  active when
==========================================  =====  ==========================================
``validation.ItemValidationPipeline``         100  always (the schema of the spider's kind)
``postgres.PostgresUpsertPipeline``           300  products, ``POSTGRES_DSN`` is set
``mongo.MongoUpsertPipeline``                 310  products, ``MONGO_URI`` is set
``embedded.EmbeddedStorePipeline``            320  products, neither is set (SQLite file)
``quotes.postgres.PostgresQuotePipeline``     330  quotes, ``POSTGRES_DSN`` is set
``quotes.mongo.MongoQuotePipeline``           340  quotes, ``MONGO_URI`` is set
``quotes.embedded.EmbeddedQuotePipeline``     350  quotes, neither is set (SQLite file)
==========================================  =====  ==========================================

A store serves one kind of item (``item_kind``, :mod:`crawler.core.itemkinds`) and
raises ``NotConfigured`` for a spider of another kind, so one ``ITEM_PIPELINES``
serves every spider.

The storage pipelines share their mechanics: batches written off the reactor
thread, retries while the database is away, backpressure and the
``items_stored`` signal in :mod:`crawler.pipelines.batching`; what a store
implements and the write of one batch in :mod:`crawler.pipelines.backend`; the
record every store writes (columns derived from :class:`crawler.core.items.Product`)
in :mod:`crawler.pipelines.product_record` (a quote's in
:mod:`crawler.pipelines.quote_record`); the kinds of failure in
:mod:`crawler.pipelines.errors`; the lease tracker's wait for ``items_stored``
in :mod:`crawler.pipelines.lease_registration`. See ``docs/storage.md``.
"""
