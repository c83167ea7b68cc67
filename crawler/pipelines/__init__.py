"""Item pipelines: validation first, then exactly one store.

=====================================  =====  ==========================================
pipeline                               order  active when
=====================================  =====  ==========================================
``validation.ProductValidationPipeline``  100  always
``postgres.PostgresUpsertPipeline``       300  ``POSTGRES_DSN`` is set
``mongo.MongoUpsertPipeline``             310  ``MONGO_URI`` is set
``embedded.EmbeddedStorePipeline``        320  neither is set (SQLite file)
=====================================  =====  ==========================================

The storage pipelines share their mechanics: batches written off the reactor
thread, retries while the database is away, backpressure and the
``items_stored`` signal in :mod:`crawler.pipelines.batching`; what a store
implements and the write of one batch in :mod:`crawler.pipelines.backend`; the
record every store writes (columns derived from :class:`crawler.items.Product`)
in :mod:`crawler.pipelines.product_record`; the kinds of failure in
:mod:`crawler.pipelines.errors`; the lease tracker's wait for ``items_stored``
in :mod:`crawler.pipelines.lease_registration`. See ``docs/storage.md``.
"""
