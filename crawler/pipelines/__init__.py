"""Item pipelines: validation first, then exactly one store.

=====================================  =====  ==========================================
pipeline                               order  active when
=====================================  =====  ==========================================
``validation.ProductValidationPipeline``  100  always
``postgres.PostgresUpsertPipeline``       300  ``POSTGRES_DSN`` is set
``mongo.MongoUpsertPipeline``             310  ``MONGO_URI`` is set
``embedded.EmbeddedStorePipeline``        320  neither is set (SQLite file)
=====================================  =====  ==========================================

The storage pipelines share their mechanics (batches written off the reactor
thread, retries while the database is away, backpressure, the ``items_stored``
signal) in :mod:`crawler.pipelines.batching`. See ``docs/storage.md``.
"""
